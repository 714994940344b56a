package plan

import (
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// Rule ids of the DRA upgrade's migrate diagnostics (docs/diagnostics.md).
const (
	RuleDRAUpgraded    = "dra/upgraded"
	RuleDRAUnmapped    = "dra/unmapped"
	RuleDRANote        = "dra/note"
	RuleDRAFeatureGate = "dra/feature-gate"
)

// Parameters indexes classic parameter objects by group, kind, namespace
// and name, so that a claim's parametersRef finds its object in any file.
type Parameters map[string]map[string]any

func paramKey(group, kind, namespace, name string) string {
	return group + "\x00" + kind + "\x00" + namespace + "\x00" + name
}

// Add records the parameter objects among fs.
func (p Parameters) Add(fs []inventory.DRAFinding) {
	for _, f := range fs {
		if f.What != inventory.DRAParameters {
			continue
		}
		group, _, _ := strings.Cut(f.APIVersion, "/")
		p[paramKey(group, f.Kind, f.Namespace, f.Name)] = f.Spec
	}
}

func (p Parameters) lookup(ref *inventory.ParametersRef) map[string]any {
	if p == nil || ref == nil {
		return nil
	}
	return p[paramKey(ref.APIGroup, ref.Kind, ref.Namespace, ref.Name)]
}

// UpgradeItems judges DRA findings against target: one Item per finding
// the target does not serve as written, with status dra-upgrade (migrate
// rewrites it) or unmapped (it cannot, and why), in the order of
// SortItems.
func UpgradeItems(fs []inventory.DRAFinding, target rules.Version, ignore *Ignores) []Item {
	var items []Item
	for _, f := range fs {
		u, status, reason, fix := judge(f, target)
		if u == nil {
			continue
		}
		fd := inventory.Finding{Origin: f.Origin, Line: f.Line, Column: f.Column, APIVersion: f.APIVersion, Kind: f.Kind,
			Namespace: f.Namespace, Name: f.Name, Resource: u.From, PodTemplatePath: f.PodTemplatePath, ContainerIndex: -1, Ignore: f.Ignore}
		d := rules.Decision{Status: status, Claim: -1, Reason: reason, Fix: fix, Upgrade: u}
		items = append(items, Item{File: f.Origin.Path, Index: f.Origin.Index, Finding: fd, Mapping: d, Status: status,
			Ignored: ignore.Reason(fd), Group: Key(fd)})
	}
	SortItems(items)
	return items
}

// judge decides one finding: the upgrade record, the status, why, and what
// to do; a nil Upgrade when the target takes the finding as written.
func judge(f inventory.DRAFinding, target rules.Version) (*rules.Upgrade, rules.Status, string, string) {
	const migrateFix = "run `kubedra migrate` to rewrite it"
	switch f.What {
	case inventory.DRAObject:
		u := rules.ResourceUpgrade(f.APIVersion, f.Kind, f.Classic, target)
		if u == nil {
			return nil, "", "", ""
		}
		reason := u.Describe(target)
		switch {
		case f.Kind == "ResourceClaimParameters" || f.Kind == "ResourceClassParameters":
			_, why := rules.ClassicParameters(rules.ResourceGroup, f.Kind)
			return u, rules.Unmapped, reason + "; " + why, "delete it and write the claims' v1 requests by hand"
		case f.Kind == "PodSchedulingContext" || f.Kind == "PodScheduling":
			return u, rules.DRAUpgrade, reason + "; the scheduler and the classic driver wrote it, nothing replaces it", "delete it (`kubedra migrate` comments it out)"
		case f.Classic && f.Parameters != nil && f.Kind != "ResourceClass":
			if m, why := rules.ClassicParameters(f.Parameters.APIGroup, f.Parameters.Kind); m != rules.ParametersFolded {
				return u, rules.Unmapped, reason + "; its parametersRef: " + why, "rewrite the claim by hand as resource.k8s.io/v1 devices.requests[].exactly"
			}
		}
		return u, rules.DRAUpgrade, reason, migrateFix + " as " + u.To
	case inventory.DRAParameters:
		group, _, _ := strings.Cut(f.APIVersion, "/")
		u := &rules.Upgrade{Rule: rules.UpgradeParameters, From: f.APIVersion + " " + f.Kind, Serving: rules.NotServed, RemovedIn: "1.31"}
		reason := fmt.Sprintf("%s is a parameters object of classic DRA, which Kubernetes stopped serving in 1.31; the current drivers have no such CRD", u.From)
		m, why := rules.ClassicParameters(group, f.Kind)
		switch m {
		case rules.ParametersFolded:
			if _, err := rules.ClassicClaim("", &inventory.ParametersRef{APIGroup: group, Kind: f.Kind, Name: f.Name}, f.Spec); err != nil {
				return u, rules.Unmapped, reason + "; " + err.Error(), "rewrite the claims that use it by hand"
			}
			u.To = "devices.requests[].exactly and the driver's opaque config of the claims that reference it"
			return u, rules.DRAUpgrade, reason, migrateFix + ": it moves into the claims that reference it"
		case rules.ParametersDropped:
			return u, rules.DRAUpgrade, reason + "; " + why, migrateFix + ": it is dropped"
		}
		return u, rules.Unmapped, reason + "; " + why, "rewrite the claims that use it by hand"
	case inventory.DRAPodSource:
		u := &rules.Upgrade{Rule: rules.UpgradePodSource, From: "resourceClaims[" + f.Claim + "].source", To: "resourceClaims[" + f.Claim + "].resourceClaimName|resourceClaimTemplateName",
			Serving: rules.NotServed, RemovedIn: "1.31"}
		return u, rules.DRAUpgrade, u.Describe(target), migrateFix + ": the claim name moves up one level"
	case inventory.DRAFeatureGate:
		u := rules.GateUpgrade(f.Gate, f.Value, target)
		if u == nil {
			return nil, "", "", ""
		}
		return u, rules.DRAUpgrade, u.Describe(target) + " (" + f.Field + ")", "remove " + f.Gate + " from the component's feature gates (`kubedra migrate` does)"
	}
	return nil, "", "", ""
}

// objectMessage is Message for an item about an object rather than a
// container's request: DRA written for an earlier release, or an object
// that governs devices.
func (it Item) objectMessage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", it.Workload(), it.Mapping.Reason)
	if it.Mapping.Fix != "" {
		fmt.Fprintf(&b, ". Fix: %s", it.Mapping.Fix)
	}
	return b.String()
}

// Upgrade is migrate's edit of one document written for an earlier DRA
// (rewrite applies it to the document's nodes, so comments stay).
type Upgrade struct {
	// Index locates the document (Origin.Index); Kind and Name check it.
	Index     int    `yaml:"index" json:"index"`
	Line      int    `yaml:"line" json:"line"`
	Kind      string `yaml:"kind" json:"kind"`
	Name      string `yaml:"name" json:"name"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// APIVersion is the resource.k8s.io version to write ("" leaves the
	// object's own); rewrite moves the older layouts' fields into it
	// (exactly, unwrapped basic devices, wrapped capacities).
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	// Devices replaces a classic claim's resourceClassName and
	// parametersRef (the claim spec's new devices field).
	Devices *yaml.RNode `yaml:"-" json:"-"`
	// DeviceClass is the spec of the DeviceClass a ResourceClass becomes.
	DeviceClass *yaml.RNode `yaml:"-" json:"-"`
	// Remove, when set, replaces the document by this comment (parameters
	// folded into claims, scheduling contexts).
	Remove string `yaml:"remove,omitempty" json:"remove,omitempty"`
	// Pods are the pod specs whose resourceClaims[].source entries move up.
	Pods []string `yaml:"pods,omitempty" json:"pods,omitempty"`
	// Gates are feature-gate settings to remove: the target refuses them.
	Gates []GateEdit `yaml:"featureGates,omitempty" json:"featureGates,omitempty"`
}

// GateEdit removes one feature-gate setting: the key Gate of the map at
// Field's parent (Key), or Gate=value from the string at Field.
type GateEdit struct {
	Field string `yaml:"field" json:"field"`
	Gate  string `yaml:"gate" json:"gate"`
	Key   bool   `yaml:"key,omitempty" json:"key,omitempty"`
}

// MarshalYAML prints the upgrade with its new devices and DeviceClass
// spec as YAML (migrate --plan).
func (u *Upgrade) MarshalYAML() (any, error) {
	type plain Upgrade
	out := struct {
		plain       `yaml:",inline"`
		Devices     *yaml.Node `yaml:"devices,omitempty"`
		DeviceClass *yaml.Node `yaml:"deviceClassSpec,omitempty"`
	}{plain: plain(*u)}
	if u.Devices != nil {
		out.Devices = u.Devices.YNode()
	}
	if u.DeviceClass != nil {
		out.DeviceClass = u.DeviceClass.YNode()
	}
	return out, nil
}

// Upgrades plans migrate's edits of a batch's DRA findings for target:
// the edits, document by document in order, and what they did or could
// not do. params holds the classic parameter objects seen so far (a
// claim's parameters may be in another file).
func Upgrades(fs []inventory.DRAFinding, params Parameters, target rules.Version) ([]*Upgrade, inventory.Diagnostics) {
	p := &upgradePlan{byIndex: map[int]*Upgrade{}}
	for _, f := range fs {
		judged, status, reason, fix := judge(f, target)
		if judged == nil {
			continue
		}
		if f.Ignore != "" {
			p.diag(f, inventory.Info, "migrate/ignored", "left unchanged: ignored: "+f.Ignore, "")
			continue
		}
		if status == rules.Unmapped {
			p.diag(f, inventory.Warning, RuleDRAUnmapped, "left unchanged: "+reason, fix)
			continue
		}
		switch f.What {
		case inventory.DRAFeatureGate:
			p.gate(f, judged, target)
		case inventory.DRAPodSource:
			p.podSource(f)
		case inventory.DRAParameters:
			p.parameters(f, reason)
		default:
			p.object(f, judged, reason, params)
		}
	}
	return p.ups, p.diags
}

// upgradePlan collects a batch's upgrades, one per document in order, and
// their diagnostics.
type upgradePlan struct {
	ups     []*Upgrade
	diags   inventory.Diagnostics
	byIndex map[int]*Upgrade
}

// get is the upgrade of f's document, added when it has none yet.
func (p *upgradePlan) get(f inventory.DRAFinding) *Upgrade {
	u := p.byIndex[f.Origin.Index]
	if u == nil {
		u = &Upgrade{Index: f.Origin.Index, Line: f.Line, Kind: f.Kind, Name: f.Name, Namespace: f.Namespace}
		p.byIndex[f.Origin.Index] = u
		p.ups = append(p.ups, u)
	}
	return u
}

// diag adds a diagnostic about f.
func (p *upgradePlan) diag(f inventory.DRAFinding, sev inventory.Severity, rule, msg, fix string) {
	p.diags = append(p.diags, inventory.Diagnostic{Severity: sev, Rule: rule, File: f.Origin.Path, Line: f.Line, Object: f.Object(),
		Field: f.Field, Message: msg, Fix: fix})
}

// gate removes a feature-gate setting the target refuses.
func (p *upgradePlan) gate(f inventory.DRAFinding, judged *rules.Upgrade, target rules.Version) {
	u := p.get(f)
	key := f.Field == f.Gate || strings.HasSuffix(f.Field, "."+f.Gate)
	u.Gates = append(u.Gates, GateEdit{Field: f.Field, Gate: f.Gate, Key: key})
	p.diag(f, inventory.Warning, RuleDRAFeatureGate, "removed "+f.Gate+"="+f.Value+" at "+f.Field+": "+judged.Describe(target),
		"check the component's other flags for the target release too")
}

// podSource moves a pod's resourceClaims[].source up one level.
func (p *upgradePlan) podSource(f inventory.DRAFinding) {
	u := p.get(f)
	if !contains(u.Pods, f.PodTemplatePath) {
		u.Pods = append(u.Pods, f.PodTemplatePath)
	}
	p.diag(f, inventory.Info, RuleDRAUpgraded, fmt.Sprintf("resourceClaims[%s]: source.* moved up one level (core/v1 of 1.31 and later)", f.Claim), "")
}

// parameters removes a classic parameters object.
func (p *upgradePlan) parameters(f inventory.DRAFinding, reason string) {
	u := p.get(f)
	what := "its settings moved into the claims that reference it"
	if group, _, _ := strings.Cut(f.APIVersion, "/"); !strings.HasSuffix(f.Kind, "ClaimParameters") || group != "gpu.resource.nvidia.com" {
		what = "no resource.k8s.io/v1 equivalent"
	}
	u.Remove = fmt.Sprintf("# %s: classic DRA parameters, removed by kubedra migrate (%s); see docs/upgrade.md\n", f.Object().String(), what)
	p.diag(f, inventory.Info, RuleDRAUpgraded, "removed: "+reason, "")
}

// object upgrades a resource.k8s.io object: it removes a scheduling
// context, turns a ResourceClass into a DeviceClass and a classic claim
// into devices requests, and moves the others to the target's version.
func (p *upgradePlan) object(f inventory.DRAFinding, judged *rules.Upgrade, reason string, params Parameters) {
	switch f.Kind {
	case "PodSchedulingContext", "PodScheduling":
		u := p.get(f)
		u.Remove = fmt.Sprintf("# %s: classic DRA scheduling handshake, removed by kubedra migrate (never user-written; no replacement)\n", f.Object().String())
		p.diag(f, inventory.Info, RuleDRAUpgraded, "removed: "+reason, "")
		return
	case "ResourceClass":
		p.resourceClass(f, judged)
		return
	case "ResourceClaim", "ResourceClaimTemplate":
		if f.Classic {
			p.classicClaim(f, judged, params)
			return
		}
	}
	u := p.get(f)
	u.APIVersion = judged.To
	p.diag(f, inventory.Info, RuleDRAUpgraded, fmt.Sprintf("%s -> %s", f.APIVersion, judged.To), "")
	if f.AdminAccess {
		p.diag(f, inventory.Warning, RuleDRANote, "a request asks for adminAccess: from 1.34 the API server accepts it only in a namespace labelled resource.kubernetes.io/admin-access: \"true\" (DRAAdminAccess)",
			"label the claim's namespace, or drop adminAccess")
	}
}

// resourceClass turns a classic ResourceClass into a DeviceClass.
func (p *upgradePlan) resourceClass(f inventory.DRAFinding, judged *rules.Upgrade) {
	spec, err := rules.ToRNode(rules.ClassicDeviceClass(f.ClassName))
	if err != nil {
		p.diag(f, inventory.Error, RuleDRAUnmapped, "left unchanged: "+err.Error(), "")
		return
	}
	u := p.get(f)
	u.APIVersion, u.DeviceClass = judged.To, spec
	p.diag(f, inventory.Info, RuleDRAUpgraded, fmt.Sprintf("ResourceClass (driver %s) is now a %s DeviceClass selecting the devices of driver %s", f.ClassName, judged.To, rules.CurrentDriver(f.ClassName)), "")
	if f.Parameters != nil {
		_, why := rules.ClassicParameters(f.Parameters.APIGroup, f.Parameters.Kind)
		p.diag(f, inventory.Warning, RuleDRANote, "its parametersRef "+f.Parameters.Kind+" "+f.Parameters.Name+" is dropped: "+why, "")
	}
}

// classicClaim turns a classic claim's class and parameters into devices
// requests.
func (p *upgradePlan) classicClaim(f inventory.DRAFinding, judged *rules.Upgrade, params Parameters) {
	cr, err := rules.ClassicClaim(f.ClassName, f.Parameters, params.lookup(f.Parameters))
	if err != nil {
		p.diag(f, inventory.Warning, RuleDRAUnmapped, "left unchanged: "+err.Error(), "rewrite the claim by hand as resource.k8s.io/v1 devices.requests[].exactly")
		return
	}
	devices, err := rules.ToRNode(cr.Devices)
	if err != nil {
		p.diag(f, inventory.Error, RuleDRAUnmapped, "left unchanged: "+err.Error(), "")
		return
	}
	u := p.get(f)
	u.APIVersion, u.Devices = judged.To, devices
	what := "class " + f.ClassName
	if f.Parameters != nil {
		what += " and " + f.Parameters.Kind + " " + f.Parameters.Name
	}
	p.diag(f, inventory.Info, RuleDRAUpgraded, fmt.Sprintf("classic claim (%s) is now %s devices.requests[%s].exactly (class %s)", what, judged.To,
		cr.Devices.Requests[0].Name, cr.Devices.Requests[0].Exactly.DeviceClassName), "")
	for _, n := range cr.Notes {
		p.diag(f, inventory.Warning, RuleDRANote, n, "")
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
