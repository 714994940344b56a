package rules

import "github.com/kubedra/kubedra/inventory"

// APIVersion and Kind identify a rules file.
const (
	APIVersion = "kubedra.dev/v1alpha1"
	Kind       = "Rules"
)

// File is one rules file: the built-in vendor files and user files share
// this schema. docs/rules.md documents it with examples.
type File struct {
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	Kind       string `yaml:"kind" json:"kind"`
	Metadata   struct {
		Name string `yaml:"name,omitempty" json:"name,omitempty"`
	} `yaml:"metadata,omitempty" json:"metadata,omitempty"`
	// Vendor is the default vendor of the file's rules.
	Vendor string `yaml:"vendor,omitempty" json:"vendor,omitempty"`
	// Rules map extended resources to DRA.
	Rules []Rule `yaml:"rules,omitempty" json:"rules,omitempty"`
	// Hints translate scheduling labels into CEL selectors.
	Hints []HintRule `yaml:"hints,omitempty" json:"hints,omitempty"`
	// TemplatePaths tell detection where CRDs keep pod templates.
	TemplatePaths []inventory.TemplatePath `yaml:"templatePaths,omitempty" json:"templatePaths,omitempty"`
	// Naming overrides how generated objects are named.
	Naming *Naming `yaml:"naming,omitempty" json:"naming,omitempty"`
	// Enable turns on rules that are off by default (disabled: true), by id.
	Enable []string `yaml:"enable,omitempty" json:"enable,omitempty"`
	// Disable turns rules off by id (built-in or from earlier files).
	Disable []string `yaml:"disable,omitempty" json:"disable,omitempty"`
}

// Rule maps one extended resource name (or a family of names) to DRA.
type Rule struct {
	// ID names the rule; a later file's rule with the same id replaces it.
	ID     string `yaml:"id" json:"id"`
	Vendor string `yaml:"vendor,omitempty" json:"vendor,omitempty"`
	// Resource is an exact extended resource name. Exactly one of Resource
	// and Match is set.
	Resource string `yaml:"resource,omitempty" json:"resource,omitempty"`
	// Match is a Go regular expression matched against the whole name; its
	// named groups become variables for selectors ({{name}}).
	Match string `yaml:"match,omitempty" json:"match,omitempty"`
	// When restricts the rule to pod templates with a matching scheduling
	// hint (e.g. nvidia.com/mig.strategy=single); such rules take
	// precedence over rules without When.
	When *When `yaml:"when,omitempty" json:"when,omitempty"`
	// Status is mappable (default), lossy, unmapped or dra-backed.
	Status Status `yaml:"status,omitempty" json:"status,omitempty"`
	// Driver and DeviceClass are the DRA driver and the class to request.
	// DeviceClass may use variables ({{class}}).
	Driver      string `yaml:"driver,omitempty" json:"driver,omitempty"`
	DeviceClass string `yaml:"deviceClass,omitempty" json:"deviceClass,omitempty"`
	// Request is the base name of the DeviceRequest (a DNS label), Claim the
	// base name of the claim; both default to the resource's last segment.
	Request string `yaml:"request,omitempty" json:"request,omitempty"`
	Claim   string `yaml:"claim,omitempty" json:"claim,omitempty"`
	// Selectors are CEL expressions added to the request. {{var}} expands to
	// a CEL string literal (or a list literal for a list variable).
	Selectors []string `yaml:"selectors,omitempty" json:"selectors,omitempty"`
	// ClassSelectors are what the driver's stock DeviceClass selects; they
	// go into DeviceClasses kubedra generates for KEP-5004.
	ClassSelectors []string `yaml:"classSelectors,omitempty" json:"classSelectors,omitempty"`
	// ExtendedResourceName is the name the driver's stock DeviceClass
	// declares (KEP-5004), "" when none is shipped.
	ExtendedResourceName string `yaml:"extendedResourceName,omitempty" json:"extendedResourceName,omitempty"`
	// Values derive variables from others with a named transform.
	Values map[string]Value `yaml:"values,omitempty" json:"values,omitempty"`
	// Count converts the requested quantity into a device count.
	Count *Count `yaml:"count,omitempty" json:"count,omitempty"`
	// Capacity makes the resource a capacity request on another resource's
	// device request in the same container (HAMi gpumem and friends).
	Capacity *Capacity `yaml:"capacity,omitempty" json:"capacity,omitempty"`
	// Topology aligns this resource with others in one claim.
	Topology *Topology `yaml:"topology,omitempty" json:"topology,omitempty"`
	// Sharing describes the shared named claim used for sharing resources
	// when Options.Share is set.
	Sharing *Sharing `yaml:"sharing,omitempty" json:"sharing,omitempty"`
	// Config is opaque driver configuration added to the claim.
	Config []Opaque `yaml:"config,omitempty" json:"config,omitempty"`
	// MinTarget is the oldest Kubernetes version the mapping works on
	// (e.g. "1.34" for drivers that need resource.k8s.io/v1).
	MinTarget string `yaml:"minTarget,omitempty" json:"minTarget,omitempty"`
	// Loss, Reason and Fix are shown to users (see Decision).
	Loss   string `yaml:"loss,omitempty" json:"loss,omitempty"`
	Reason string `yaml:"reason,omitempty" json:"reason,omitempty"`
	Fix    string `yaml:"fix,omitempty" json:"fix,omitempty"`
	// Disabled rules apply only when a rules file enables them.
	Disabled bool `yaml:"disabled,omitempty" json:"disabled,omitempty"`
	// Notes are for people reading `rules show`; they do not change output.
	Notes string `yaml:"notes,omitempty" json:"notes,omitempty"`
	// Examples are resource names the rule must match (checked on load;
	// `rules list` shows them and tests resolve them).
	Examples []string `yaml:"examples,omitempty" json:"examples,omitempty"`
}

// When is a condition on a pod template's scheduling hints.
type When struct {
	// Label is the node label a nodeSelector or required affinity hint uses.
	Label string `yaml:"label" json:"label"`
	// Values: the hint must have one of them (empty: any value).
	Values []string `yaml:"values,omitempty" json:"values,omitempty"`
	// Match is a regular expression one hint value must match; its named
	// groups become variables.
	Match string `yaml:"match,omitempty" json:"match,omitempty"`
}

// Value derives a variable.
type Value struct {
	From string `yaml:"from" json:"from"`
	// Transform is one of: nvidiaMIGProfile (undo the device plugin's
	// '+' to '.' substitution; yields every candidate profile), lower.
	Transform string `yaml:"transform" json:"transform"`
}

// Count converts a quantity of units into whole devices.
type Count struct {
	// UnitsPerDevice is how many requested units one device provides.
	UnitsPerDevice int64 `yaml:"unitsPerDevice" json:"unitsPerDevice"`
	// ByInstanceFamily overrides UnitsPerDevice when an instance-type hint
	// (node.kubernetes.io/instance-type or karpenter.k8s.aws/instance-family)
	// names the family (the part before the first '.').
	ByInstanceFamily map[string]int64 `yaml:"byInstanceFamily,omitempty" json:"byInstanceFamily,omitempty"`
}

// Capacity turns the quantity into a capacity requirement on the device
// request of another resource in the same container.
type Capacity struct {
	// AttachTo is the resource whose device request this modifies.
	AttachTo string `yaml:"attachTo" json:"attachTo"`
	// Name is the device capacity (e.g. memory); "" drops the quantity.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Unit is appended to the number (e.g. Mi).
	Unit string `yaml:"unit,omitempty" json:"unit,omitempty"`
}

// Topology places the resource with others in one claim.
type Topology struct {
	// Role is accelerator or network. A container with both gets one claim
	// with an alignment constraint.
	Role string `yaml:"role" json:"role"`
	// Align is the attribute all aligned devices must share ({n} is
	// replaced by the group size, see Groups).
	Align string `yaml:"align,omitempty" json:"align,omitempty"`
	// MaxCount: align only when this many accelerator devices or fewer are
	// requested (every aligned device must share the attribute's value).
	MaxCount int64 `yaml:"maxCount,omitempty" json:"maxCount,omitempty"`
	// Groups are the group sizes {n} can take: the smallest >= the count.
	Groups []int64 `yaml:"groups,omitempty" json:"groups,omitempty"`
	// GroupAlone adds the group constraint to the accelerator request even
	// without a network device, for counts that are exactly a group size,
	// but only when an instance-type hint names one of these families.
	GroupAlone []string `yaml:"groupAlone,omitempty" json:"groupAlone,omitempty"`
}

// Sharing is the shared-claim form of a lossy sharing mapping.
type Sharing struct {
	// Claim is the base name of the shared ResourceClaim.
	Claim  string `yaml:"claim,omitempty" json:"claim,omitempty"`
	Config Opaque `yaml:"config" json:"config"`
	// Loss replaces the rule's Loss when the shared form is used.
	Loss string `yaml:"loss,omitempty" json:"loss,omitempty"`
	// ConsumableShares is the driver's per-device shares (NVIDIA DRA driver
	// v0.5.0+ --consumable-shares=N): with Options.ConsumableShares each pod
	// keeps its own claim and takes as many shares of one device as it
	// asked for replicas, instead of sharing one named claim.
	ConsumableShares *ConsumableShares `yaml:"consumableShares,omitempty" json:"consumableShares,omitempty"`
}

// ConsumableShares says how a driver shares one device between claims.
type ConsumableShares struct {
	// Capacity is the capacity name a claim asks shares of ("shares").
	Capacity string `yaml:"capacity" json:"capacity"`
	// Loss says what the per-pod form changes.
	Loss string `yaml:"loss" json:"loss"`
}

// Opaque is driver configuration (DeviceClaimConfiguration.opaque).
type Opaque struct {
	Driver     string         `yaml:"driver" json:"driver"`
	Parameters map[string]any `yaml:"parameters" json:"parameters"`
}

// HintRule translates a node label in nodeSelector or required node
// affinity into a CEL selector on device requests of the given drivers.
type HintRule struct {
	Label   string   `yaml:"label" json:"label"`
	Drivers []string `yaml:"drivers" json:"drivers"`
	// Value is a regular expression each label value must match; a named
	// group "value" (else the whole match) becomes {{value}} (a CEL string
	// literal) and {{raw}} (the text itself; then Value must make it safe).
	// Other named groups become variables too (CEL string literals).
	Value string `yaml:"value,omitempty" json:"value,omitempty"`
	// Map replaces extracted values (e.g. hopper -> Hopper) before use; a
	// value missing from a non-empty Map is not translated.
	Map map[string]string `yaml:"map,omitempty" json:"map,omitempty"`
	// In is the selector for one value (values of In are ORed; NotIn
	// negates). Gt and Lt take one integer value. Exists is used for
	// Exists and negated for DoesNotExist.
	In     string `yaml:"in,omitempty" json:"in,omitempty"`
	Gt     string `yaml:"gt,omitempty" json:"gt,omitempty"`
	Lt     string `yaml:"lt,omitempty" json:"lt,omitempty"`
	Exists string `yaml:"exists,omitempty" json:"exists,omitempty"`
	// Keep leaves the label on the pod template (it is not reported in
	// Resolution.UsedHints), for labels autoscalers or node pools need or
	// whose translation is wider than the label.
	Keep bool `yaml:"keep,omitempty" json:"keep,omitempty"`
}

// Naming overrides generated names. Claim names also name the generated
// objects: migrate calls a workload's ResourceClaimTemplate
// <workload>-<claim>.
type Naming struct {
	// Requests maps a resource name to the DeviceRequest base name.
	Requests map[string]string `yaml:"requests,omitempty" json:"requests,omitempty"`
	// Claims maps a resource name to the claim base name.
	Claims map[string]string `yaml:"claims,omitempty" json:"claims,omitempty"`
}
