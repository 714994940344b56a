package inventory

// DRAWhat is what a DRAFinding is about.
type DRAWhat string

// What detection finds of DRA written for earlier releases.
const (
	// DRAObject is a resource.k8s.io object (any version, classic kinds
	// included).
	DRAObject DRAWhat = "object"
	// DRAParameters is a vendor parameters object of classic DRA (NVIDIA
	// GpuClaimParameters, MigDeviceClaimParameters, ...).
	DRAParameters DRAWhat = "parameters"
	// DRAPodSource is a pod's resourceClaims[] entry that names its claim
	// under `source:` (core/v1 up to 1.30).
	DRAPodSource DRAWhat = "pod-claim-source"
	// DRAFeatureGate is a DRA feature-gate setting in a component's flags or
	// configuration (kube-apiserver, scheduler, controller-manager, kubelet;
	// kind and kubeadm configs).
	DRAFeatureGate DRAWhat = "feature-gate"
)

// ParametersRef is a classic claim's or class's parametersRef.
type ParametersRef struct {
	APIGroup  string `json:"apiGroup,omitempty"`
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// DRAFinding is one thing detection found that was written for an earlier
// DRA: a fact, with no judgement against a target version attached.
type DRAFinding struct {
	Origin Origin `json:"-"`
	// Line and Column locate the apiVersion, the `source` key or the gate.
	Line   int `json:"line"`
	Column int `json:"column"`

	What       DRAWhat `json:"what"`
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Namespace  string  `json:"namespace,omitempty"`
	Name       string  `json:"name"`

	// Classic is true for the classic field layout: a claim's
	// resourceClassName, a ResourceClass's driverName.
	Classic bool `json:"classic,omitempty"`
	// ClassName is a classic claim's resourceClassName, or a
	// ResourceClass's driverName.
	ClassName string `json:"className,omitempty"`
	// AdminAccess is true for a claim with a request that asks for admin
	// access (it needs a labelled namespace from 1.34).
	AdminAccess bool `json:"adminAccess,omitempty"`
	// Parameters is a classic claim's or class's parametersRef.
	Parameters *ParametersRef `json:"parameters,omitempty"`
	// Spec is a DRAParameters object's spec, decoded (nil when it has none
	// or it does not decode).
	Spec map[string]any `json:"-"`

	// PodTemplatePath is the pod spec of a DRAPodSource (spec for a Pod),
	// and Claim the name of its resourceClaims entry.
	PodTemplatePath string `json:"podTemplatePath,omitempty"`
	Claim           string `json:"claim,omitempty"`

	// Gate and Value are a DRAFeatureGate's setting as written; Field is
	// where it is (a flag in a container's command, a config key).
	Gate  string `json:"gate,omitempty"`
	Value string `json:"value,omitempty"`
	Field string `json:"field,omitempty"`
	// Ignore is the reason of a kubedra.io/ignore annotation on the object.
	Ignore string `json:"-"`
}

// Object names the finding's object.
func (f DRAFinding) Object() *ObjectRef {
	return &ObjectRef{APIVersion: f.APIVersion, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name}
}
