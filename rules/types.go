package rules

import (
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubedra/kubedra/inventory"
)

// Status says what happens to a device-plugin request.
type Status string

// Statuses, as shown by scan and used by migrate and check.
const (
	// Mappable: a rule maps the request to DRA without losing semantics.
	Mappable Status = "mappable"
	// Lossy: a documented mapping exists but changes semantics (sharing,
	// fractions, rounding); migrate applies it only with --allow-lossy.
	Lossy Status = "lossy"
	// Unmapped: no rule maps the resource.
	Unmapped Status = "unmapped"
	// DRABacked: the name is already served by DRA (KEP-5004, e.g.
	// deviceclass.resource.kubernetes.io/<class>): reported, never rewritten.
	DRABacked Status = "dra-backed"
	// DRAUpgrade: a resource.k8s.io object, pod claim reference or feature
	// gate written for an earlier DRA (classic, alpha or beta) that the
	// target stops serving or refuses; migrate rewrites it to
	// resource.k8s.io/v1 (Decision.Upgrade says from what, to what, and
	// the version that stops serving it).
	DRAUpgrade Status = "dra-upgrade"
	// Governance: an object that counts, limits or queues devices (a
	// ResourceQuota, LimitRange, Kueue queue or configuration, Karpenter
	// NodePool, Volcano Queue). Decision.Govern says what it counts and
	// what migration does to it.
	Governance Status = "governance"
	// HelmValues: a request set in a Helm values file outside a chart that
	// renders. Its mapping is decided as for a workload, but migrate does
	// not edit values files or chart templates: the user moves the chart
	// to claims, or renders it and migrates the output.
	HelmValues Status = "helm-values"
	// CustomResource: a request set in a custom resource's spec outside
	// any pod template (an operator's GPU profiles or flavors, such as
	// llmaz's OpenModel inferenceConfig.flavors): the operator turns it
	// into pods, so migrate does not edit it; its mapping is decided as for
	// a workload, for the narrow gates.
	CustomResource Status = "custom-resource"
	// NoDevice: a request of zero for a resource a rule maps ("0",
	// "0m"): it asks for no device, so nothing moves to DRA; migrate
	// removes the entry and adds no claim (Decision.Zero). Reports show it
	// at info level and no gate fails on it.
	NoDevice Status = "no-device"
)

// Govern is what a governance finding counts and what happens to it when
// the workloads move to DRA.
type Govern struct {
	// What is the kind of finding (inventory.GovWhat: quota, limit-range,
	// cluster-queue, resource-flavor, kueue-config, node-pool,
	// volcano-queue).
	What string `json:"what"`
	// Key is the key or resource the finding is about, as written.
	Key string `json:"key,omitempty"`
	// Breaks is true when, after the migration, the object stops doing what
	// it does (a quota that no longer counts the devices, a LimitRange that
	// puts the device-plugin request back): check fails on it.
	Breaks bool `json:"breaks"`
	// Action is what migrate does: "" (nothing), "add-key", "remove",
	// "add-mapping" or "warn" (it cannot act).
	Action string `json:"action,omitempty"`
	// Done is true when the object already has what DRA needs.
	Done bool `json:"done,omitempty"`
}

// PodRequest is one container's request for one extended resource.
type PodRequest struct {
	Container      string                  `json:"container"`
	ContainerIndex int                     `json:"containerIndex"`
	ContainerType  inventory.ContainerType `json:"containerType"`
	Resource       string                  `json:"resource"`
	// Quantity as written (limit, else request), e.g. "2", "1", "$GPUS".
	Quantity string `json:"quantity"`
}

// Pod is the input to Resolve: the device requests and scheduling hints of
// one pod template.
type Pod struct {
	Requests []PodRequest
	Hints    []inventory.Hint
}

// Options steer Resolve.
type Options struct {
	// Target is the Kubernetes version the output must work on.
	Target Version
	// AllowLossy applies documented lossy mappings (Decision.Claim >= 0 for
	// lossy requests); without it lossy requests are left as they are.
	AllowLossy bool
	// Share maps sharing resources (time-slicing, MPS: nvidia.com/gpu.shared,
	// nvidia.com/gpu on nodes with a sharing strategy) to one named,
	// shared ResourceClaim with the driver's sharing configuration
	// (Claim.Shared) instead of an exclusive per-pod claim. Both forms are
	// lossy. Added by the rules helper (issue 3).
	Share bool
	// ConsumableShares maps those sharing resources whose driver has
	// consumable shares (Sharing.ConsumableShares) to per-pod claims that
	// take shares of one device; it wins over Share. Lossy too.
	ConsumableShares bool
}

// RuleRef names the rule that decided a request.
type RuleRef struct {
	// ID is the rule's id, e.g. "nvidia-gpu" or "nvidia-mig".
	ID string `json:"id"`
	// Source is "builtin:<vendor>.yaml" or the user rules file path.
	Source string `json:"source"`
}

// Decision is what Resolve decided for one PodRequest.
type Decision struct {
	Status      Status   `json:"status"`
	Rule        *RuleRef `json:"rule,omitempty"`
	Driver      string   `json:"driver,omitempty"`
	DeviceClass string   `json:"deviceClass,omitempty"`
	// Count is the number of devices requested (after any rounding).
	Count int64 `json:"count,omitempty"`
	// Selectors are the CEL expressions of the device request (compiled and
	// cost-checked).
	Selectors []string `json:"selectors,omitempty"`
	// Claim is the index into Resolution.Claims of the claim serving this
	// request, or -1 when the request is left as it is (unmapped, dra-backed,
	// or lossy without AllowLossy).
	Claim int `json:"-"`
	// Request is the DeviceRequest name inside that claim.
	Request string `json:"request,omitempty"`
	// Refs are every (claim, request) the container references for this
	// request, Claim/Request first: more than one when an init container
	// reuses several requests of the app containers, or when a request of
	// more devices than a claim can hold is split over claims.
	Refs []ClaimRef `json:"-"`
	// Zero is true for a request of no device ("0"): migrate removes it
	// and adds no claim.
	Zero bool `json:"zero,omitempty"`
	// Split says what was lost when the pod's devices did not fit in one
	// claim (AllocationResultsMaxSize) and were spread over several.
	Split string `json:"split,omitempty"`
	// Loss says, in words a user can act on, what the mapping loses.
	Loss string `json:"loss,omitempty"`
	// Reason explains an unmapped or dra-backed status.
	Reason string `json:"reason,omitempty"`
	// Fix says what the user can do (e.g. add a rule, pass --allow-lossy).
	Fix string `json:"fix,omitempty"`
	// ExtendedResource is true when KEP-5004 can serve the request unchanged
	// (a DeviceClass with extendedResourceName and only a count needed: no
	// selectors from the pod, config, sharing or topology; a rule's own
	// selectors, such as a MIG profile, go into the class).
	ExtendedResource bool `json:"extendedResource,omitempty"`
	// ExtendedResourceName is the name a DeviceClass would declare for it.
	ExtendedResourceName string `json:"extendedResourceName,omitempty"`
	// ClassDeclares is true when the driver's own DeviceClass (DeviceClass)
	// already declares ExtendedResourceName: a second class must not.
	ClassDeclares bool `json:"classDeclares,omitempty"`
	// Upgrade is set for findings about objects written for an earlier DRA
	// (status dra-upgrade, or unmapped when migrate cannot convert them).
	Upgrade *Upgrade `json:"upgrade,omitempty"`
	// Govern is set for findings about objects that count or govern
	// devices (status governance).
	Govern *Govern `json:"govern,omitempty"`
}

// ClaimRef is one device request of one of the pod's claims.
type ClaimRef struct {
	Claim   int
	Request string
}

// Claim is one ResourceClaim(Template) the pod template needs.
type Claim struct {
	// Name is a short DNS label for the claim in the pod (pod.spec.
	// resourceClaims[].name), e.g. "gpu" or "gpu-efa"; plan derives the
	// template's object name from it and the workload.
	Name string
	// Shared is true for a named ResourceClaim meant to be shared by several
	// pods (time-slicing/MPS sharing), false for a per-pod template.
	Shared bool
	// Spec is the claim spec in resource.k8s.io/v1 terms; EncodeClaim turns
	// it into the target version's shape.
	Spec resourcev1.ResourceClaimSpec
}

// Resolution is Resolve's answer for one pod template.
type Resolution struct {
	// Decisions is parallel to Pod.Requests.
	Decisions []Decision
	Claims    []Claim
	// UsedHints are indexes into Pod.Hints that became CEL selectors; migrate
	// removes them from the pod template unless --keep-node-selectors.
	UsedHints []int
}
