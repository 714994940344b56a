package detect_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

// brief renders a finding as one line: where, which container, what.
func brief(f inventory.Finding) string {
	s := fmt.Sprintf("%d:%d %s %s/%s[%d] %s", f.Line, f.Column, f.PodTemplatePath, f.ContainerType, f.Container,
		f.ContainerIndex, f.Resource)
	if f.Limit != "" {
		s += " limit=" + f.Limit
	}
	if f.Request != "" {
		s += " request=" + f.Request
	}
	if f.Generic {
		s += " generic"
	}
	return s
}

func detectYAML(t *testing.T, src string, opts detect.Options) []inventory.Finding {
	t.Helper()
	n, err := yaml.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	return detect.Document(&inventory.Document{Node: n, Origin: inventory.Origin{Path: "x.yaml", ListIndex: -1}}, opts)
}

func TestDocumentKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		opts detect.Options
		want []string
	}{
		{
			name: "core Pod with init, sidecar and ephemeral containers",
			src: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  initContainers:
  - name: setup
    resources: {limits: {nvidia.com/gpu: 1}}
  - name: proxy
    restartPolicy: Always
    resources:
      requests:
        vpc.amazonaws.com/efa: "1"
  containers:
  - name: main
    image: x
    resources:
      limits:
        cpu: "2"
        memory: 1Gi
        hugepages-2Mi: 1Gi
        ephemeral-storage: 1Gi
        example.kubernetes.io/thing: 1
        nvidia.com/gpu: 2
      requests:
        nvidia.com/gpu: "2"
  ephemeralContainers:
  - name: debug
    resources: {limits: {"amd.com/gpu": 1}}
`,
			want: []string{
				"7:26 spec init/setup[0] nvidia.com/gpu limit=1",
				"12:9 spec sidecar/proxy[1] vpc.amazonaws.com/efa request=1",
				"23:9 spec container/main[0] nvidia.com/gpu limit=2 request=2",
				"28:26 spec ephemeral/debug[0] amd.com/gpu limit=1",
			},
		},
		{
			name: "apps and batch",
			src: `apiVersion: batch/v1
kind: CronJob
metadata: {name: c}
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: train
            resources: {limits: {aws.amazon.com/neuron: 4}}
`,
			want: []string{"11:34 spec.jobTemplate.spec.template.spec container/train[0] aws.amazon.com/neuron limit=4"},
		},
		{
			name: "Kubeflow PyTorchJob replica specs",
			src: `apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: j}
spec:
  pytorchReplicaSpecs:
    Master:
      template:
        spec:
          containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 1}}}]
    Worker:
      template:
        spec:
          containers: [{name: pytorch, resources: {limits: {nvidia.com/gpu: 8}}}]
`,
			want: []string{
				"9:61 spec.pytorchReplicaSpecs.Master.template.spec container/pytorch[0] nvidia.com/gpu limit=1",
				"13:61 spec.pytorchReplicaSpecs.Worker.template.spec container/pytorch[0] nvidia.com/gpu limit=8",
			},
		},
		{
			name: "Ray head and worker groups",
			src: `apiVersion: ray.io/v1
kind: RayService
metadata: {name: r}
spec:
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers: [{name: head, resources: {limits: {cpu: 1}}}]
    workerGroupSpecs:
    - groupName: gpu
      template:
        spec:
          containers: [{name: worker, resources: {limits: {nvidia.com/gpu: 1}}}]
`,
			want: []string{"14:60 spec.rayClusterConfig.workerGroupSpecs[groupName=gpu].template.spec container/worker[0] nvidia.com/gpu limit=1"},
		},
		{
			name: "JobSet replicated jobs",
			src: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            containers: [{name: w, resources: {limits: {google.com/tpu: 4}}}]
`,
			want: []string{"11:57 spec.replicatedJobs[name=workers].template.spec.template.spec container/w[0] google.com/tpu limit=4"},
		},
		{
			name: "LeaderWorkerSet leader and worker templates",
			src: `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  leaderWorkerTemplate:
    leaderTemplate:
      spec:
        containers: [{name: l, resources: {limits: {nvidia.com/gpu: 8}}}]
    workerTemplate:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 8}}}]
`,
			want: []string{
				"8:53 spec.leaderWorkerTemplate.leaderTemplate.spec container/l[0] nvidia.com/gpu limit=8",
				"11:53 spec.leaderWorkerTemplate.workerTemplate.spec container/w[0] nvidia.com/gpu limit=8",
			},
		},
		{
			name: "KServe predictor model and transformer containers, ServingRuntime",
			src: `apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: isvc}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      resources: {limits: {nvidia.com/gpu: "1"}}
  transformer:
    containers:
    - name: kserve-container
      resources: {limits: {nvidia.com/gpu: 1}}
`,
			want: []string{
				"8:28 spec.predictor container/model[0] nvidia.com/gpu limit=1",
				"12:28 spec.transformer container/kserve-container[0] nvidia.com/gpu limit=1",
			},
		},
		{
			name: "Argo container, script, containerSet, init and sidecars",
			src: `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: wt}
spec:
  nodeSelector: {nvidia.com/gpu.product: A100}
  templates:
  - name: train
    container: {image: x, resources: {limits: {nvidia.com/gpu: 1}}}
    initContainers: [{name: fetch, resources: {limits: {nvidia.com/gpu: 1}}}]
    sidecars: [{name: side, resources: {limits: {nvidia.com/gpu: 1}}}]
  - name: py
    script: {image: x, source: "print(1)", resources: {requests: {amd.com/gpu: 1}}}
  - name: set
    containerSet:
      containers: [{name: a, resources: {limits: {habana.ai/gaudi: 2}}}]
`,
			want: []string{
				"9:57 spec.templates[name=train] init/fetch[0] nvidia.com/gpu limit=1",
				"8:48 spec.templates[name=train] container/main[0] nvidia.com/gpu limit=1",
				"10:50 spec.templates[name=train] container/side[0] nvidia.com/gpu limit=1",
				"12:67 spec.templates[name=py] container/main[0] amd.com/gpu request=1",
				"15:51 spec.templates[name=set] container/a[0] habana.ai/gaudi limit=2",
			},
		},
		{
			name: "Argo CronWorkflow",
			src: `apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: cw}
spec:
  workflowSpec:
    templates:
    - name: t
      container: {image: x, resources: {limits: {nvidia.com/gpu: 1}}}
`,
			want: []string{"8:50 spec.workflowSpec.templates[name=t] container/main[0] nvidia.com/gpu limit=1"},
		},
		{
			name: "Volcano tasks",
			src: `apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: vj}
spec:
  tasks:
  - name: worker
    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]
`,
			want: []string{"9:53 spec.tasks[name=worker].template.spec container/w[0] nvidia.com/gpu limit=1"},
		},
		{
			name: "Spark driver and executor gpu fields",
			src: `apiVersion: sparkoperator.k8s.io/v1beta2
kind: SparkApplication
metadata: {name: s}
spec:
  driver: {cores: 1}
  executor:
    instances: 2
    gpu: {name: nvidia.com/gpu, quantity: 1}
`,
			want: []string{"8:5 spec.executor container/executor[0] nvidia.com/gpu limit=1"},
		},
		{
			name: "unknown CRD: generic containers list and bare resources block",
			src: `apiVersion: example.com/v1
kind: Trainer
metadata: {name: t}
spec:
  podSpec:
    containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
  launcher:
    name: l
    image: y
    resources: {limits: {nvidia.com/gpu: 2}}
`,
			want: []string{
				"6:59 spec.podSpec container/c[0] nvidia.com/gpu limit=1 generic",
				"10:26 spec.launcher container/l[0] nvidia.com/gpu limit=2 generic",
			},
		},
		{
			name: "user template path for a CRD",
			src: `apiVersion: example.com/v1
kind: Runner
metadata: {name: r}
spec:
  pods:
    a: {template: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}
`,
			opts: detect.Options{TemplatePaths: []inventory.TemplatePath{{Group: "example.com", Kind: "Runner", Paths: []string{"spec.pods.*.template"}}}},
			want: []string{"6:64 spec.pods.a.template container/c[0] nvidia.com/gpu limit=1"},
		},
		{
			name: "DRA-backed implicit name is reported; quota keys are not requests",
			src: `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    resources: {limits: {deviceclass.resource.kubernetes.io/gpu.example.com: 1}}
---
`,
			want: []string{"7:26 spec container/c[0] deviceclass.resource.kubernetes.io/gpu.example.com limit=1"},
		},
		{
			name: "no request: ResourceQuota and node capacity",
			src: `apiVersion: v1
kind: ResourceQuota
metadata: {name: q}
spec:
  hard: {requests.nvidia.com/gpu: 4}
status:
  capacity: {nvidia.com/gpu: 8}
`,
		},
		{
			name: "anchors and merge keys",
			src: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
x-gpu: &gpu {nvidia.com/gpu: 1}
spec:
  template:
    spec:
      containers:
      - name: a
        resources: {limits: *gpu}
      - name: b
        resources:
          limits:
            <<: *gpu
            cpu: 1
`,
			want: []string{
				"4:14 spec.template.spec container/a[0] nvidia.com/gpu limit=1",
				"4:14 spec.template.spec container/b[1] nvidia.com/gpu limit=1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, f := range detectYAML(t, tt.src, tt.opts) {
				got = append(got, brief(f))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDocumentHintsAndIgnore(t *testing.T) {
	t.Parallel()
	src := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  namespace: ml
  annotations:
    kubedra.io/ignore: "vendor-managed"
spec:
  template:
    spec:
      runtimeClassName: nvidia
      nodeSelector:
        nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
        kubernetes.io/os: linux
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - {key: topology.kubernetes.io/zone, operator: In, values: [a]}
              - {key: karpenter.k8s.aws/instance-gpu-name, operator: In, values: [a100, h100]}
          preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 1
            preference:
              matchExpressions:
              - {key: cloud.google.com/gke-accelerator, operator: Exists}
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      - {key: dedicated, operator: Equal, value: web}
      containers:
      - name: c
        resources: {limits: {nvidia.com/gpu: 1}}
`
	fs := detectYAML(t, src, detect.Options{})
	if len(fs) != 1 {
		t.Fatalf("got %d findings, want 1", len(fs))
	}
	f := fs[0]
	want := []inventory.Hint{
		{Kind: inventory.HintNodeSelector, Key: "nvidia.com/gpu.product", Values: []string{"NVIDIA-A100-SXM4-80GB"},
			Path: `spec.template.spec.nodeSelector.nvidia\.com/gpu\.product`, Line: 13},
		{Kind: inventory.HintNodeAffinity, Key: "karpenter.k8s.aws/instance-gpu-name", Operator: "In", Values: []string{"a100", "h100"},
			Path: "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[1]", Line: 21},
		{Kind: inventory.HintPreferred, Key: "cloud.google.com/gke-accelerator", Operator: "Exists",
			Path: "spec.template.spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[0]", Line: 26},
		{Kind: inventory.HintToleration, Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule", Path: "spec.template.spec.tolerations[0]", Line: 28},
		{Kind: inventory.HintRuntimeClassName, Key: "runtimeClassName", Values: []string{"nvidia"}, Path: "spec.template.spec.runtimeClassName", Line: 11},
	}
	if diff := cmp.Diff(want, f.Hints); diff != "" {
		t.Errorf("hints (-want +got):\n%s", diff)
	}
	if f.Ignore != "vendor-managed" || f.IgnoreInvalid || f.Namespace != "ml" || f.Name != "d" || f.Kind != "Deployment" || f.APIVersion != "apps/v1" {
		t.Errorf("finding = %+v", f)
	}

	// An ignore without a reason, on the pod template, is invalid.
	empty := detectYAML(t, `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    metadata:
      annotations: {kubedra.io/ignore: ""}
    spec:
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
`, detect.Options{})
	if len(empty) != 1 || !empty[0].IgnoreInvalid {
		t.Errorf("empty ignore: got %+v, want IgnoreInvalid", empty)
	}
}

func TestDocumentDoesNotMutate(t *testing.T) {
	t.Parallel()
	src := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]\n"
	n := yaml.MustParse(src)
	before := n.MustString()
	detect.Document(&inventory.Document{Node: n}, detect.Options{})
	if after := n.MustString(); after != before {
		t.Errorf("document changed:\n%s", cmp.Diff(before, after))
	}
}

func TestIsExtendedResource(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"nvidia.com/gpu": true, "nvidia.com/mig-1g.5gb": true, "vpc.amazonaws.com/efa": true,
		"deviceclass.resource.kubernetes.io/gpu.nvidia.com": true, "example/thing": true,
		"cpu": false, "memory": false, "hugepages-2Mi": false, "ephemeral-storage": false,
		"kubernetes.io/batch": false, "foo.kubernetes.io/x": false, "requests.nvidia.com/gpu": true,
		"nvidia.com/": false, "/gpu": false, "a/b/c": false, "nvidia.com/g pu": false,
	}
	for name, want := range tests {
		if got := detect.IsExtendedResource(name); got != want {
			t.Errorf("IsExtendedResource(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestMayRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  string
		want bool
	}{
		{"block", "resources:\n  limits:\n    nvidia.com/gpu: 1\n", true},
		{"flow", "resources: {limits: {nvidia.com/gpu: 1}}", true},
		{"json", `{"resources":{"requests":{"amd.com/gpu":"1"}}}`, true},
		{"single quoted", "limits:\n  'habana.ai/gaudi' : 1\n", true},
		{"flow key without value", "limits: {example.com/dev}", true},
		{"json escape", `{"resources":{"limits":{"nvidia.com\/gpu":1}}}`, true},
		{"unicode escape", `{"resources":{"limits":{"nvidia.com\u002fgpu":1}}}`, true},
		{"anchor", "x: &k nvidia.com/gpu\nlimits: {*k : 1}", true},
		{"name before limits", "metadata: {annotations: {prometheus.io/port: \"9\"}}\nresources: {limits: {cpu: 1}}", false},
		{"explicit key", "limits:\n  ? nvidia.com/gpu\n  : 1\n", true},
		{"spark", "kind: SparkApplication\nspec: {driver: {gpu: {name: nvidia.com/gpu}}}", true},
		{"cpu only", "apiVersion: apps/v1\nresources:\n  limits: {cpu: 1}\nmetadata:\n  labels: {app.kubernetes.io/name: x}\n", false},
		{"no resources", "apiVersion: v1\nkind: ConfigMap\ndata: {nvidia.com/gpu: '1'}\n", false},
		{"image value", "image: nvcr.io/nvidia/cuda:12\nresources: {limits: {cpu: 1}}\ncommand: [sh, -c, 'a && b']\n", false},
	}
	for _, tt := range tests {
		if got := detect.MayRequest([]byte(tt.doc)); got != tt.want {
			t.Errorf("%s: MayRequest = %v, want %v", tt.name, got, tt.want)
		}
	}
}
