package bundle

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/proof"
)

//go:embed drivers/*.yaml
var driverFS embed.FS

// Driver is one reference DRA driver of the catalogue.
type Driver struct {
	// Name is what --driver takes, e.g. "nvidia".
	Name  string `json:"name"`
	Title string `json:"title"`
	// Family names the device family the driver and the plugins serve; the
	// invariant is per family.
	Family string `json:"family"`
	// DRADriver is the driver name in ResourceSlices (spec.driver).
	DRADriver string  `json:"draDriver"`
	Release   Release `json:"release"`
	Install   Install `json:"install"`
	// KubeletPlugin identifies the driver's kubelet-plugin DaemonSet once
	// installed.
	KubeletPlugin Workload      `json:"kubeletPlugin"`
	DeviceClasses []DeviceClass `json:"deviceClasses"`
	// Resources are the extended resources the family's device plugins
	// advertise (a trailing * matches a prefix).
	Resources []string `json:"resources"`
	// ExtendedResource says how KEP-5004 keeps workloads unchanged.
	ExtendedResource *ExtendedResource `json:"extendedResource,omitempty"`
	// Plugins are the well-known device-plugin DaemonSets of the family.
	Plugins []Plugin `json:"plugins"`
	// Images are image repositories of the family's device plugins.
	Images []string `json:"images"`
	Notes  []string `json:"notes,omitempty"`
}

// Release is the upstream release a driver is pinned to.
type Release struct {
	Version string `json:"version"`
	URL     string `json:"url"`
}

// Install says how the driver is installed: exactly one of Helm, Manifests.
type Install struct {
	Helm      *Helm      `json:"helm,omitempty"`
	Manifests *Manifests `json:"manifests,omitempty"`
}

// Helm is a chart install.
type Helm struct {
	// Repo is the chart repository URL for non-OCI charts ("" for OCI).
	Repo      string `json:"repo,omitempty"`
	Chart     string `json:"chart"`
	Version   string `json:"version,omitempty"`
	Release   string `json:"release"`
	Namespace string `json:"namespace"`
	// NamespaceLabels must be on the namespace before install (pod security).
	NamespaceLabels map[string]string `json:"namespaceLabels,omitempty"`
	// NodeSelectorPath is the dotted values path of the kubelet plugin's
	// nodeSelector, where kubedra writes the device-mode label.
	NodeSelectorPath string `json:"nodeSelectorPath"`
	// TolerationsPath is the dotted values path of the kubelet plugin's
	// tolerations ("" when kubedra must not replace the chart's list).
	TolerationsPath string `json:"tolerationsPath,omitempty"`
	// Values are settings the cutover needs, merged into values.yaml.
	Values map[string]any `json:"values,omitempty"`
	// ExtendedResourceValue is the dotted values path that sets the chart's
	// own DeviceClass extendedResourceName ("" when the chart has none).
	ExtendedResourceValue string `json:"extendedResourceValue,omitempty"`
}

// Manifests is a plain-manifest install from an embedded file.
type Manifests struct {
	File      string `json:"file"`
	Namespace string `json:"namespace"`
}

// Workload identifies a DaemonSet by namespace/name, pod-template labels or
// container image repository; any one match is enough.
type Workload struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	Images    []string          `json:"images,omitempty"`
}

// DeviceClass is a class the driver's install provides or kubedra writes.
type DeviceClass struct {
	Name     string `json:"name"`
	Selector string `json:"selector"`
	// ExtendedResourceName is what the installed class declares.
	ExtendedResourceName string `json:"extendedResourceName,omitempty"`
	// ByKubedra is true when the install does not create the class and the
	// bundle writes it.
	ByKubedra bool `json:"byKubedra,omitempty"`
}

// ExtendedResource is the KEP-5004 mapping of the family's main resource.
type ExtendedResource struct {
	Resource string `json:"resource"`
	// OnClass is the catalogue class that declares Resource; empty means
	// kubedra writes a class of its own, named as rules names extended-resource
	// classes (rules.ExtendedResourceClassName, e.g. aws.amazon.com-neuron).
	OnClass string `json:"onClass,omitempty"`
	// Selector of kubedra's own class (default: the first class's).
	Selector string `json:"selector,omitempty"`
}

// Plugin is a well-known device-plugin DaemonSet.
type Plugin struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Labels    map[string]string `json:"labels,omitempty"`
	Source    string            `json:"source,omitempty"`
	// Operator is set when an operator reconciles the DaemonSet.
	Operator *Exclusion `json:"operator,omitempty"`
	// Managed is set when the cloud provider reconciles it.
	Managed *Exclusion `json:"managed,omitempty"`
}

// Exclusion is how a reconciled plugin is kept off nodes without patching it.
type Exclusion struct {
	Kind     string `json:"kind,omitempty"`
	Provider string `json:"provider,omitempty"`
	// ExcludeLabels, set on DRA nodes, keep the plugin off them.
	ExcludeLabels map[string]string `json:"excludeLabels,omitempty"`
}

// Catalogue returns the embedded reference drivers, sorted by name.
func Catalogue() ([]Driver, error) {
	entries, err := driverFS.ReadDir("drivers")
	if err != nil {
		return nil, err
	}
	var out []Driver
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".manifests.yaml") {
			continue
		}
		b, err := driverFS.ReadFile(path.Join("drivers", n))
		if err != nil {
			return nil, err
		}
		var d Driver
		if err := yaml.UnmarshalStrict(b, &d); err != nil {
			return nil, fmt.Errorf("driver catalogue %s: %w", n, err)
		}
		if err := d.validate(); err != nil {
			return nil, fmt.Errorf("driver catalogue %s: %w", n, err)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// CatalogueClasses are the DeviceClasses the drivers of the catalogue
// install, in catalogue order, and those of the reference drivers the
// bundle does not install yet (TPU): the classes a cluster on DRA has
// before any manifest adds its own (simulate's worlds).
func CatalogueClasses() ([]*resourceapi.DeviceClass, error) {
	drivers, err := Catalogue()
	if err != nil {
		return nil, err
	}
	var out []*resourceapi.DeviceClass
	for _, d := range drivers {
		for _, c := range d.DeviceClasses {
			out = append(out, c.object())
		}
	}
	// Reference drivers the bundle does not install yet; their charts
	// create these classes (shared/reference/dra.md §5.7).
	tpu := DeviceClass{Name: "tpu.google.com", Selector: `device.driver == "tpu.google.com"`}
	return append(out, tpu.object()), nil
}

// object is the DeviceClass c installs: its name, its CEL selector and,
// when it declares one, its extended resource.
func (c DeviceClass) object() *resourceapi.DeviceClass {
	dc := &resourceapi.DeviceClass{}
	dc.Name = c.Name
	dc.Spec.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: c.Selector}}}
	if c.ExtendedResourceName != "" {
		dc.Spec.ExtendedResourceName = &c.ExtendedResourceName
	}
	return dc
}

func (d Driver) validate() error {
	if d.Name == "" || d.Family == "" || d.DRADriver == "" || d.Release.Version == "" {
		return fmt.Errorf("name, family, draDriver and release.version are required")
	}
	if (d.Install.Helm == nil) == (d.Install.Manifests == nil) {
		return fmt.Errorf("driver %s: exactly one of install.helm and install.manifests", d.Name)
	}
	if h := d.Install.Helm; h != nil && (h.Chart == "" || h.Release == "" || h.Namespace == "" || h.NodeSelectorPath == "") {
		return fmt.Errorf("driver %s: install.helm needs chart, release, namespace and nodeSelectorPath", d.Name)
	}
	if len(d.DeviceClasses) == 0 {
		return fmt.Errorf("driver %s: no deviceClasses", d.Name)
	}
	if er := d.ExtendedResource; er != nil && er.OnClass != "" {
		if !slices.ContainsFunc(d.DeviceClasses, func(c DeviceClass) bool { return c.Name == er.OnClass }) {
			return fmt.Errorf("driver %s: extendedResource.onClass %s is not one of its deviceClasses", d.Name, er.OnClass)
		}
	}
	return nil
}

// Lookup returns the driver called name, or an error that lists valid names.
func Lookup(name string) (Driver, error) {
	all, err := Catalogue()
	if err != nil {
		return Driver{}, err
	}
	var names []string
	for _, d := range all {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Driver{}, &UnknownDriverError{Name: name, Valid: names}
}

// UnknownDriverError is returned for a --driver that is not in the catalogue.
type UnknownDriverError struct {
	Name  string
	Valid []string
}

func (e *UnknownDriverError) Error() string {
	return fmt.Sprintf("unknown driver %q: valid drivers are %s", e.Name, strings.Join(e.Valid, ", "))
}

// manifests returns the embedded plain manifests of a driver.
func (d Driver) manifests() ([]byte, error) {
	if d.Install.Manifests == nil {
		return nil, nil
	}
	return driverFS.ReadFile(path.Join("drivers", d.Install.Manifests.File))
}

// InstallMethod is "helm" or "manifests".
func (d Driver) InstallMethod() string {
	if d.Install.Helm != nil {
		return "helm"
	}
	return "manifests"
}

// servesResource reports whether the family's plugins advertise r.
func (d Driver) servesResource(r string) bool {
	for _, p := range d.Resources {
		if p == r || (strings.HasSuffix(p, "*") && strings.HasPrefix(r, strings.TrimSuffix(p, "*"))) {
			return true
		}
	}
	return false
}

// CatalogueFamilies are the device families of the catalogue's
// DeviceClasses (the driver each selects), which migrate's proof knows
// classes by.
func CatalogueFamilies() proof.Classes {
	c := proof.Classes{}
	dcs, _ := CatalogueClasses()
	for _, dc := range dcs {
		for _, s := range dc.Spec.Selectors {
			if s.CEL != nil {
				c.Add(dc.Name, s.CEL.Expression)
			}
		}
	}
	return c
}
