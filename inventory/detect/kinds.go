package detect

import (
	"slices"
	"strings"

	"github.com/kubedra/kubedra/inventory"
)

// shape says how a pod-spec-like map holds its containers.
type shape int

const (
	// shapePod is a core PodSpec: containers, initContainers,
	// ephemeralContainers, nodeSelector, affinity, tolerations,
	// runtimeClassName.
	shapePod shape = iota
	// shapeKServe is a KServe component (predictor, transformer, explainer):
	// PodSpec fields inline plus model specs (model, pytorch, triton, ...)
	// that are containers of their own.
	shapeKServe
	// shapeArgo is an Argo Workflows template: container, script,
	// containerSet.containers, initContainers, sidecars.
	shapeArgo
	// shapeSpark is a SparkApplication driver or executor: a gpu field,
	// initContainers, sidecars.
	shapeSpark
)

// podPath is where a kind keeps a pod spec: a pattern in TemplatePath
// syntax (`*` every map key, `name[]` every list item) and, for Argo,
// where workflow-wide scheduling fields live.
type podPath struct {
	pattern string
	shape   shape
	hints   string // pattern of a map whose scheduling fields also apply
}

// builtinKinds maps "group/Kind" (core: "/Kind") to its pod-spec paths.
var builtinKinds = map[string][]podPath{
	"/Pod":                   {{pattern: "spec"}},
	"/PodTemplate":           {{pattern: "template.spec"}},
	"/ReplicationController": {{pattern: "spec.template.spec"}},
	"apps/Deployment":        {{pattern: "spec.template.spec"}},
	"apps/ReplicaSet":        {{pattern: "spec.template.spec"}},
	"apps/StatefulSet":       {{pattern: "spec.template.spec"}},
	"apps/DaemonSet":         {{pattern: "spec.template.spec"}},
	"batch/Job":              {{pattern: "spec.template.spec"}},
	"batch/CronJob":          {{pattern: "spec.jobTemplate.spec.template.spec"}},

	// Kubeflow training operator v1, and Trainer v2 runtimes (JobSet inside).
	"kubeflow.org/PyTorchJob": {{pattern: "spec.pytorchReplicaSpecs.*.template.spec"}},
	"kubeflow.org/TFJob":      {{pattern: "spec.tfReplicaSpecs.*.template.spec"}},
	"kubeflow.org/MPIJob":     {{pattern: "spec.mpiReplicaSpecs.*.template.spec"}},
	"kubeflow.org/XGBoostJob": {{pattern: "spec.xgbReplicaSpecs.*.template.spec"}},
	"kubeflow.org/PaddleJob":  {{pattern: "spec.paddleReplicaSpecs.*.template.spec"}},
	"kubeflow.org/JAXJob":     {{pattern: "spec.jaxReplicaSpecs.*.template.spec"}},
	"kubeflow.org/MXJob":      {{pattern: "spec.mxReplicaSpecs.*.template.spec"}},
	"kubeflow.org/Notebook":   {{pattern: "spec.template.spec"}},
	"trainer.kubeflow.org/TrainingRuntime": {
		{pattern: "spec.template.spec.replicatedJobs[].template.spec.template.spec"}},
	"trainer.kubeflow.org/ClusterTrainingRuntime": {
		{pattern: "spec.template.spec.replicatedJobs[].template.spec.template.spec"}},

	// Ray.
	"ray.io/RayCluster": {
		{pattern: "spec.headGroupSpec.template.spec"},
		{pattern: "spec.workerGroupSpecs[].template.spec"}},
	"ray.io/RayJob": {
		{pattern: "spec.rayClusterSpec.headGroupSpec.template.spec"},
		{pattern: "spec.rayClusterSpec.workerGroupSpecs[].template.spec"},
		{pattern: "spec.submitterPodTemplate.spec"}},
	"ray.io/RayService": {
		{pattern: "spec.rayClusterConfig.headGroupSpec.template.spec"},
		{pattern: "spec.rayClusterConfig.workerGroupSpecs[].template.spec"}},

	// JobSet and LeaderWorkerSet.
	"jobset.x-k8s.io/JobSet": {{pattern: "spec.replicatedJobs[].template.spec.template.spec"}},
	"leaderworkerset.x-k8s.io/LeaderWorkerSet": {
		{pattern: "spec.leaderWorkerTemplate.leaderTemplate.spec"},
		{pattern: "spec.leaderWorkerTemplate.workerTemplate.spec"}},

	// KServe.
	"serving.kserve.io/InferenceService": {
		{pattern: "spec.predictor", shape: shapeKServe},
		{pattern: "spec.transformer", shape: shapeKServe},
		{pattern: "spec.explainer", shape: shapeKServe}},
	"serving.kserve.io/ServingRuntime":        {{pattern: "spec"}},
	"serving.kserve.io/ClusterServingRuntime": {{pattern: "spec"}},
	"serving.kserve.io/InferenceGraph":        {{pattern: "spec.nodes.*", shape: shapeKServe}},

	// Argo Workflows.
	"argoproj.io/Workflow":                {{pattern: "spec.templates[]", shape: shapeArgo, hints: "spec"}},
	"argoproj.io/WorkflowTemplate":        {{pattern: "spec.templates[]", shape: shapeArgo, hints: "spec"}},
	"argoproj.io/ClusterWorkflowTemplate": {{pattern: "spec.templates[]", shape: shapeArgo, hints: "spec"}},
	"argoproj.io/CronWorkflow": {
		{pattern: "spec.workflowSpec.templates[]", shape: shapeArgo, hints: "spec.workflowSpec"}},

	// Volcano, Knative.
	"batch.volcano.sh/Job":              {{pattern: "spec.tasks[].template.spec"}},
	"serving.knative.dev/Service":       {{pattern: "spec.template.spec"}},
	"serving.knative.dev/Configuration": {{pattern: "spec.template.spec"}},
	"serving.knative.dev/Revision":      {{pattern: "spec"}},

	// Spark operator.
	"sparkoperator.k8s.io/SparkApplication": {
		{pattern: "spec.driver", shape: shapeSpark},
		{pattern: "spec.executor", shape: shapeSpark}},
	"sparkoperator.k8s.io/ScheduledSparkApplication": {
		{pattern: "spec.template.driver", shape: shapeSpark},
		{pattern: "spec.template.executor", shape: shapeSpark}},
}

// kserveModels are the keys of a KServe component that hold a model spec
// (a container named kserve-container at run time).
var kserveModels = []string{"model", "sklearn", "xgboost", "tensorflow", "pytorch", "triton", "onnx",
	"huggingface", "pmml", "lightgbm", "paddle", "alibi", "art", "worker"}

// PodSpecPaths are the pod-spec paths detection knows, per kind: the
// built-in kinds whose pod specs have a resourceClaims field (not Argo or
// Spark templates), then Options.TemplatePaths. Kustomize name references
// are made from them.
func PodSpecPaths(opts Options) []inventory.TemplatePath {
	var out []inventory.TemplatePath
	for gk, paths := range builtinKinds {
		group, kind, _ := strings.Cut(gk, "/")
		tp := inventory.TemplatePath{Group: group, Kind: kind}
		for _, p := range paths {
			if p.shape == shapePod {
				tp.Paths = append(tp.Paths, p.pattern)
			}
		}
		if len(tp.Paths) > 0 {
			out = append(out, tp)
		}
	}
	slices.SortFunc(out, func(a, b inventory.TemplatePath) int { return strings.Compare(a.Group+"/"+a.Kind, b.Group+"/"+b.Kind) })
	return append(out, opts.TemplatePaths...)
}
