package plan

import (
	"encoding/json"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rules"
)

// Strategy says how migrate moves a workload to DRA.
type Strategy string

// Strategies.
const (
	// Claims rewrites workloads to ResourceClaimTemplates (the default).
	Claims Strategy = "claims"
	// ExtendedResource leaves workloads unchanged and emits DeviceClasses
	// with extendedResourceName (KEP-5004, DRAExtendedResource).
	ExtendedResource Strategy = "extended-resource"
	// Auto chooses per workload: extended-resource when only a count is
	// needed and the target has the gate on, else claims.
	Auto Strategy = "auto"
)

// Plan is every edit migrate makes, as data: the FilePlans a Planner made
// file by file (Build collects them for a set of findings), applied by
// package rewrite; `migrate --plan` prints it.
type Plan struct {
	APIVersion string           `yaml:"apiVersion" json:"apiVersion"`
	Kind       string           `yaml:"kind" json:"kind"`
	Strategy   Strategy         `yaml:"strategy" json:"strategy"`
	Target     string           `yaml:"targetVersion" json:"targetVersion"`
	Files      []*FilePlan      `yaml:"files" json:"files"`
	Workloads  []WorkloadChoice `yaml:"workloads,omitempty" json:"workloads,omitempty"`
	// DeviceClasses are emitted for the extended-resource strategy into
	// DeviceClassFile.
	DeviceClasses   []*Object             `yaml:"deviceClasses,omitempty" json:"deviceClasses,omitempty"`
	DeviceClassFile string                `yaml:"deviceClassFile,omitempty" json:"deviceClassFile,omitempty"`
	Diagnostics     inventory.Diagnostics `yaml:"diagnostics" json:"diagnostics"`
	// Units are the proofs of the kustomize units the plan reaches
	// (docs/migrate.md#the-proof).
	Units []proof.Result `yaml:"units" json:"units"`
}

// WorkloadChoice records the strategy used for one workload and why
// (shown in the summary for --strategy auto).
type WorkloadChoice struct {
	File     string   `yaml:"file" json:"file"`
	Line     int      `yaml:"line" json:"line"`
	Object   string   `yaml:"object" json:"object"`
	Strategy Strategy `yaml:"strategy" json:"strategy"`
	Why      string   `yaml:"why" json:"why"`
}

// FilePlan is the edits to one input file.
type FilePlan struct {
	Path string     `yaml:"path" json:"path"`
	Docs []*DocPlan `yaml:"documents,omitempty" json:"documents,omitempty"`
	// ClaimsFile, when set, is the sibling file (same folder) that receives
	// the new objects instead of the workload's own file.
	ClaimsFile string `yaml:"claimsFile,omitempty" json:"claimsFile,omitempty"`
	// Kustomization is the kustomization file in the same folder that gains
	// ClaimsFile in its resources.
	Kustomization string `yaml:"kustomization,omitempty" json:"kustomization,omitempty"`
	// Upgrades rewrite documents written for an earlier DRA to
	// resource.k8s.io/v1 (see Upgrades).
	Upgrades []*Upgrade `yaml:"upgrades,omitempty" json:"upgrades,omitempty"`
	// Governance edits objects that count or govern devices: quota keys,
	// LimitRange defaults, Kueue deviceClassMappings (see Governance).
	Governance []*GovEdit `yaml:"governance,omitempty" json:"governance,omitempty"`
}

// DocPlan is the edits to one document (or one item of a `kind: List`).
type DocPlan struct {
	// Index is the document's position in its file (Origin.Index): rewrite
	// locates the document by it, then checks Kind and Name.
	Index int `yaml:"index" json:"index"`
	// Line is the first finding's line (the resource key), for people.
	Line       int       `yaml:"line" json:"line"`
	ListIndex  int       `yaml:"listIndex" json:"listIndex"`
	APIVersion string    `yaml:"apiVersion" json:"apiVersion"`
	Kind       string    `yaml:"kind" json:"kind"`
	Name       string    `yaml:"name" json:"name"`
	Namespace  string    `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	Pods       []PodEdit `yaml:"podTemplates" json:"podTemplates"`
	// Objects are the new ResourceClaimTemplates (or shared ResourceClaims,
	// or ComputeDomains) placed right after the document, or in
	// FilePlan.ClaimsFile.
	Objects []*Object `yaml:"objects,omitempty" json:"objects,omitempty"`
	// Sets are fields outside the pod templates that migrate sets, such as
	// a KubeRay group's rayStartParams.num-gpus.
	Sets []FieldSet `yaml:"sets,omitempty" json:"sets,omitempty"`
}

// FieldSet sets one string field of a document: Map is the path of the
// map holding it (in the syntax of PodEdit.Path; created when missing),
// Field its key. A field already present is left as it is, unless
// Replace: then Value was computed from the value there.
type FieldSet struct {
	Map     string `yaml:"map" json:"map"`
	Field   string `yaml:"field" json:"field"`
	Value   string `yaml:"value" json:"value"`
	Replace bool   `yaml:"replace,omitempty" json:"replace,omitempty"`
}

// PodEdit is the edits to one pod template.
type PodEdit struct {
	// Path is the pod spec inside the document, e.g. spec.template.spec.
	Path           string          `yaml:"path" json:"path"`
	ResourceClaims []PodClaim      `yaml:"resourceClaims" json:"resourceClaims"`
	Containers     []ContainerEdit `yaml:"containers" json:"containers"`
	// RemoveHints are the scheduling hints that became CEL selectors.
	RemoveHints []inventory.Hint `yaml:"removeHints,omitempty" json:"removeHints,omitempty"`
}

// PodClaim is one new pod.spec.resourceClaims entry.
type PodClaim struct {
	Name                      string `yaml:"name" json:"name"`
	ResourceClaimTemplateName string `yaml:"resourceClaimTemplateName,omitempty" json:"resourceClaimTemplateName,omitempty"`
	ResourceClaimName         string `yaml:"resourceClaimName,omitempty" json:"resourceClaimName,omitempty"`
}

// ContainerEdit is the edits to one container.
type ContainerEdit struct {
	Type  inventory.ContainerType `yaml:"type" json:"type"`
	Name  string                  `yaml:"name" json:"name"`
	Index int                     `yaml:"index" json:"index"`
	// Remove are the extended-resource keys that leave limits and requests.
	Remove []string `yaml:"remove" json:"remove"`
	// Keep are the maps (limits, requests) kept when they become empty: a
	// kustomize JSON 6902 patch that reaches the file adds into them.
	Keep []string `yaml:"keep,omitempty" json:"keep,omitempty"`
	// Claims are the new resources.claims entries.
	Claims []ContainerClaim `yaml:"claims" json:"claims"`
}

// ContainerClaim is one container resources.claims entry.
type ContainerClaim struct {
	Name    string `yaml:"name" json:"name"`
	Request string `yaml:"request,omitempty" json:"request,omitempty"`
}

// Object is a new Kubernetes object migrate adds.
type Object struct {
	Kind      string `yaml:"kind" json:"kind"`
	Name      string `yaml:"name" json:"name"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// Node is the encoded object.
	Node *yaml.RNode `yaml:"-" json:"-"`
}

// MarshalJSON prints the whole object, as MarshalYAML does.
func (o *Object) MarshalJSON() ([]byte, error) {
	if o.Node == nil {
		return json.Marshal(map[string]string{"kind": o.Kind, "name": o.Name, "namespace": o.Namespace})
	}
	return o.Node.MarshalJSON()
}

// MarshalYAML prints the whole object.
func (o *Object) MarshalYAML() (any, error) {
	if o.Node == nil {
		return map[string]string{"kind": o.Kind, "name": o.Name, "namespace": o.Namespace}, nil
	}
	return o.Node.YNode(), nil
}

// Encoder turns claims and device classes into objects for a target
// version. The rules package provides the real one.
type Encoder interface {
	ClaimTemplate(name, namespace string, claim rules.Claim, target rules.Version) (*yaml.RNode, error)
	Claim(name, namespace string, claim rules.Claim, target rules.Version) (*yaml.RNode, error)
	DeviceClass(d rules.Decision, target rules.Version) (*yaml.RNode, error)
}
