package inventory

import (
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Origin says where a Document came from.
type Origin struct {
	// Path is the file as the user named it (relative paths stay relative),
	// "-" for stdin, or "" for objects read from a cluster.
	Path string `json:"file"`
	// Index is the 0-based position of the document in its file (after
	// `kind: List` items are flattened, each item has its own Index).
	Index int `json:"index"`
	// Line is the 1-based line where the document starts in its file.
	Line int `json:"line"`
	// ListIndex is the item's position in a `kind: List`, or -1.
	ListIndex int `json:"listIndex,omitempty"`
}

// Span is a byte range [Start, End) in a file.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Document is one Kubernetes object with its origin.
type Document struct {
	Node   *yaml.RNode
	Origin Origin
	// Root is the YAML document Node was decoded from (a DocumentNode): Node
	// is its content, or one item of the `kind: List` it holds. Head and
	// foot comments of the document live on Root, so a writer re-encodes
	// Root, never Node alone. Nil for objects that were not read from text.
	Root *yaml.Node
	// Span is the byte range of Root's text in its file: from the line after
	// its `---` marker (or the marker line itself when it carries content)
	// to the next marker or the end of the file. Items of one List share
	// their List's Root and Span.
	Span Span
}

// Skip records an input that could not be read as YAML (a Helm template, a
// broken file) or was not followed (a symlink out of the root). Skips are
// never silent: scan lists them and --strict turns them into failures.
type Skip struct {
	File   string `json:"file"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
	// Severity is the diagnostic's: an error for an input not read, a
	// warning for one skipped by design (a template, a symlink). Not in
	// the machine formats (their shape is kept).
	Severity Severity `json:"-" yaml:"-"`
}

// ContainerType tells which list of the pod spec a container is in.
type ContainerType string

// The kinds of containers a pod spec can hold.
const (
	Container          ContainerType = "container"
	InitContainer      ContainerType = "init"
	SidecarContainer   ContainerType = "sidecar" // init container with restartPolicy: Always
	EphemeralContainer ContainerType = "ephemeral"
)

// ListField is the pod-spec list a container of this type is in.
func (t ContainerType) ListField() string {
	switch t {
	case InitContainer, SidecarContainer:
		return "initContainers"
	case EphemeralContainer:
		return "ephemeralContainers"
	}
	return "containers"
}

// HintKind is the pod-template field a scheduling hint comes from.
type HintKind string

// Hint kinds.
const (
	HintNodeSelector     HintKind = "nodeSelector"
	HintNodeAffinity     HintKind = "nodeAffinity"      // required during scheduling
	HintPreferred        HintKind = "preferredAffinity" // preferred during scheduling
	HintToleration       HintKind = "toleration"
	HintRuntimeClassName HintKind = "runtimeClassName"
)

// Hint is a scheduling constraint on a pod template that relates to devices:
// a nodeSelector or node-affinity term on a device feature-discovery label, a
// toleration of a device taint, or runtimeClassName: nvidia.
type Hint struct {
	Kind HintKind `json:"kind" yaml:"kind"`
	// Key is the label, taint key, or "runtimeClassName".
	Key string `json:"key" yaml:"key"`
	// Operator is In, NotIn, Exists, DoesNotExist, Gt, Lt for affinity
	// terms, Equal or Exists for tolerations, "" for nodeSelector (= In).
	Operator string   `json:"operator,omitempty" yaml:"operator,omitempty"`
	Values   []string `json:"values,omitempty" yaml:"values,omitempty"`
	// Effect of a toleration.
	Effect string `json:"effect,omitempty" yaml:"effect,omitempty"`
	// Path is the kyaml field path of the hint, relative to the document,
	// e.g. spec.template.spec.nodeSelector.nvidia\.com/gpu\.product or
	// spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1].
	Path string `json:"path" yaml:"path"`
	// Term is the index of the nodeSelectorTerm for affinity hints (terms
	// are ORed; expressions in one term are ANDed), else 0.
	Term int `json:"term,omitempty" yaml:"term,omitempty"`
	// TermRests are, for required node-affinity hints of an affinity with
	// several terms, what each of the pod's nodeSelectorTerms asks besides
	// device labels (a canonical
	// string per term, "" for nothing): ORed device labels become one
	// selector only when the rest of every term is the same.
	TermRests []string `json:"-" yaml:"-"`
	Line      int      `json:"line,omitempty" yaml:"line,omitempty"`
}

// Finding is one extended-resource request of one container: a fact, with no
// mapping decision attached.
type Finding struct {
	Origin Origin `json:"-"`
	// Line and Column locate the resource key (in limits, else requests).
	Line   int `json:"line"`
	Column int `json:"column"`

	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`

	// PodTemplatePath is the path of the pod spec inside the document, e.g.
	// spec.template.spec or spec.pytorchReplicaSpecs.Worker.template.spec
	// ("spec" for a Pod). For containers found by the generic fallback it is
	// the path of the map holding the containers list.
	PodTemplatePath string `json:"podTemplatePath"`
	// Container is the container name; ContainerIndex its index in its list.
	Container      string        `json:"container"`
	ContainerIndex int           `json:"containerIndex"`
	ContainerType  ContainerType `json:"containerType"`

	Resource string `json:"resource"`
	// Limit and Request are the quantities as written ("" when absent).
	Limit   string `json:"limit,omitempty"`
	Request string `json:"request,omitempty"`

	// Hints are the device-related scheduling hints of the same pod template.
	Hints []Hint `json:"hints,omitempty"`
	// Ignore is the reason given in a kubedra.io/ignore annotation on the
	// workload (or its pod template), "" when there is none. A present
	// annotation with an empty value is reported as IgnoreInvalid.
	Ignore        string `json:"-"`
	IgnoreInvalid bool   `json:"-"`
	// Generic is true when the pod template was found by the fallback for
	// unknown kinds, not by a known kind's schema.
	Generic bool `json:"generic,omitempty"`
	// Workload is what the object around the pod template tells the
	// frameworks that run it (queue labels, replica counts, KubeRay's
	// rayStartParams); the findings of one pod template share it. Nil for
	// findings of the generic fallback.
	Workload *Workload `json:"-"`
	// Chart, for a request rendered from a Helm chart, says where in the
	// chart it comes from (Line is then the line of Chart.Template; Origin
	// names the rendered template file and document); nil for plain
	// manifests.
	Chart *ChartSource `json:"chart,omitempty"`
	// Values, for a request set in a Helm values file outside a chart
	// that renders, is the values key that sets it (e.g.
	// worker.resources.limits.nvidia.com/gpu); "" for manifests.
	Values string `json:"values,omitempty"`
}

// ChartSource is where a request rendered from a Helm chart comes from in
// the chart (inventory/chart traces it).
type ChartSource struct {
	// Chart is the chart's folder as the user named it.
	Chart string `json:"chart"`
	// Template is the file that produced the request (the rendered
	// template, or a helper it includes); the finding's Line is its line
	// (0 when no line was found).
	Template string `json:"template"`
	// Rendered is the template whose render holds the request, and
	// RenderedLine the request's line in that render.
	Rendered     string `json:"rendered"`
	RenderedLine int    `json:"renderedLine"`
	// Values is the values reference in the template that expanded the
	// request (".Values.resources"), "" when the template writes it.
	Values string `json:"values,omitempty"`
	// Key is the values leaf that feeds the request, as --set names it
	// (resources.limits.nvidia\\.com/gpu), with the file and line that set
	// it: a -f file, the chart's values.yaml, or "--set ..." (line 0).
	Key        string `json:"key,omitempty"`
	ValuesFile string `json:"valuesFile,omitempty"`
	ValuesLine int    `json:"valuesLine,omitempty"`
}

// Workload is what an object says around one of its pod templates that
// matters to the frameworks running it: Kueue, Karpenter, KubeRay, Knative,
// KServe, multi-node jobs.
type Workload struct {
	// Labels and Annotations are the object's, with its pod template's
	// metadata over them.
	Labels      map[string]string
	Annotations map[string]string
	// NodeLabels are the node labels the pod template requires: its
	// nodeSelector, and the keys and values of required node-affinity
	// expressions (no values for Exists).
	NodeLabels map[string][]string
	// Replicas is how many pods of this template the workload runs at once
	// (a replica group's replicas, times a JobSet job's parallelism; a
	// LeaderWorkerSet group's workers), 0 when the kind has no such count.
	Replicas int
	// Group is the path of the replica group holding the pod template
	// (spec.workerGroupSpecs[groupName=gpu], spec.headGroupSpec), "" when
	// none.
	Group string
	// RayStartParams are a KubeRay group's rayStartParams (nil when the
	// group has none).
	RayStartParams map[string]string
	// PodClaims are the names of the pod-level resourceClaims the pod
	// template already has (a half-migrated pod): new claims take other
	// names.
	PodClaims []string
}

// Quantity returns the quantity that counts for scheduling: the limit when
// set (extended resources must have requests == limits), else the request.
func (f Finding) Quantity() string {
	if f.Limit != "" {
		return f.Limit
	}
	return f.Request
}

// Object names the finding's object.
func (f Finding) Object() *ObjectRef {
	return &ObjectRef{APIVersion: f.APIVersion, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name}
}

// FieldPath is the kyaml field path of the request's quantity, e.g.
// spec.template.spec.containers[name=cuda].resources.limits.nvidia.com/gpu
// (the resource name as written, not escaped).
func (f Finding) FieldPath() string {
	if f.Values != "" {
		return f.Values
	}
	field := "limits"
	if f.Limit == "" && f.Request != "" {
		field = "requests"
	}
	return f.PodTemplatePath + "." + f.ContainerType.ListField() + "[name=" + f.Container + "].resources." + field + "." + f.Resource
}

// TemplatePath tells detection where a kind keeps pod specs. Built-in kinds
// are known to inventory/detect; users add CRDs through rules files.
type TemplatePath struct {
	// Group is the API group ("" for core), Kind the object kind.
	Group string `json:"group" yaml:"group"`
	Kind  string `json:"kind" yaml:"kind"`
	// Paths are pod-spec paths in the document: dot-separated field names,
	// `*` for every key of a map, `[]` after a name for every item of a list,
	// e.g. spec.pytorchReplicaSpecs.*.template.spec or
	// spec.workerGroupSpecs[].template.spec.
	Paths []string `json:"paths" yaml:"paths"`
}

// Resolve is where a path the user gave is on disk when relative paths are
// under dir: dir joined with it, or the path itself when it is absolute,
// "-" (stdin) or "", or when dir is "" (the process's working folder).
// Every stage that opens a user's path resolves it here and reports it as
// given.
func Resolve(dir, path string) string {
	if dir == "" || path == "" || path == "-" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}
