package inventory

// GovWhat is the kind of object a GovFinding is about: an object that
// counts, limits or queues devices rather than requesting them.
type GovWhat string

// What governance detection finds.
const (
	// GovQuota is one spec.hard key of a ResourceQuota that names a device:
	// requests.<extended>, limits.<extended>, a bare <extended> name, or a
	// DRA key (<class>.deviceclass.resource.k8s.io/devices,
	// requests.deviceclass.resource.kubernetes.io/<class>,
	// count/resourceclaims.resource.k8s.io).
	GovQuota GovWhat = "quota"
	// GovLimitRange is one extended resource in a LimitRange's
	// spec.limits[].{default,defaultRequest,max,min,maxLimitRequestRatio}.
	GovLimitRange GovWhat = "limit-range"
	// GovClusterQueue is one extended resource a Kueue ClusterQueue covers
	// (spec.resourceGroups[].coveredResources, flavors[].resources[].name).
	GovClusterQueue GovWhat = "cluster-queue"
	// GovResourceFlavor is a Kueue ResourceFlavor whose nodeLabels or
	// nodeTaints are those of device-plugin nodes.
	GovResourceFlavor GovWhat = "resource-flavor"
	// GovKueueConfig is a Kueue Configuration (the object, or the
	// controller_manager_config.yaml of a ConfigMap).
	GovKueueConfig GovWhat = "kueue-config"
	// GovNodePool is one extended resource in a Karpenter NodePool's
	// spec.limits.
	GovNodePool GovWhat = "node-pool"
	// GovVolcanoQueue is one extended resource in a Volcano Queue's
	// spec.capability, spec.deserved or spec.guarantee.resource.
	GovVolcanoQueue GovWhat = "volcano-queue"
)

// GovFinding is one fact about an object that governs devices, with no
// judgement attached: plan decides what migration does to it.
type GovFinding struct {
	Origin Origin `json:"-"`
	// Line and Column locate the key (or the object's kind).
	Line   int `json:"line"`
	Column int `json:"column"`

	What       GovWhat `json:"what"`
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Namespace  string  `json:"namespace,omitempty"`
	Name       string  `json:"name"`

	// Field is the kyaml path of the map holding Key, e.g. spec.hard or
	// spec.limits[1].default ("" for a Kueue Configuration).
	Field string `json:"field,omitempty"`
	// Key is the key as written, e.g. requests.nvidia.com/gpu.
	Key string `json:"key,omitempty"`
	// Resource is the extended resource the key names ("" for DRA keys).
	Resource string `json:"resource,omitempty"`
	// Quantity is the value as written.
	Quantity string `json:"quantity,omitempty"`
	// Class is the DeviceClass a DRA quota key names.
	Class string `json:"class,omitempty"`
	// Keys are all the keys of a quota's spec.hard (a DRA key beside the
	// extended one says the quota is migrated already), or the
	// coveredResources of a ClusterQueue's resource group.
	Keys []string `json:"-"`
	// LimitType is a LimitRange item's type (Container, Pod, ...).
	LimitType string `json:"limitType,omitempty"`
	// Scoped is true for a quota with scopes or a scopeSelector: the API
	// server never matches such a quota against ResourceClaims.
	Scoped bool `json:"scoped,omitempty"`
	// Mappings are a Kueue Configuration's resources.deviceClassMappings:
	// logical resource name -> device class names.
	Mappings map[string][]string `json:"mappings,omitempty"`
	// ConfigKey is the ConfigMap data key that holds an embedded Kueue
	// Configuration ("" for the object itself).
	ConfigKey string `json:"configKey,omitempty"`
	// Ignore is the reason of a kubedra.io/ignore annotation on the object.
	Ignore string `json:"-"`
}

// Object names the finding's object.
func (f GovFinding) Object() *ObjectRef {
	return &ObjectRef{APIVersion: f.APIVersion, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name}
}
