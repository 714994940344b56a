package proof_test

import (
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/proof"
)

const base = `apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ml}
spec:
  template:
    spec:
      containers:
      - name: server
        image: vllm
        resources:
          limits:
            nvidia.com/gpu: 4
`

// migrated is base as migrate writes it: the GPUs through a claim.
const migrated = `apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ml}
spec:
  template:
    spec:
      containers:
      - name: server
        image: vllm
        resources:
          claims:
          - name: gpu
      resourceClaims:
      - name: gpu
        resourceClaimTemplateName: vllm-gpu
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: vllm-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 4
`

var classes = func() proof.Classes {
	c := proof.Classes{}
	c.Add("gpu.nvidia.com", `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`)
	c.Add("mig.nvidia.com", `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'`)
	return c
}()

// prove writes the tree before, lays after over it and proves the unit
// in unit (a folder of the tree).
func prove(t *testing.T, before, after map[string]string, unit string) proof.Result {
	t.Helper()
	dir := testfs.Tree(t, before)
	over := map[string][]byte{}
	for name, text := range after {
		over[filepath.Join(dir, filepath.FromSlash(name))] = []byte(text)
	}
	return proof.Kustomization(filepath.Join(dir, unit), unit, filesys.MakeFsOnDisk(), proof.NewOverlay(over), classes)
}

func wantFailed(t *testing.T, r proof.Result, substr string) {
	t.Helper()
	if r.Status != proof.Failed {
		t.Fatalf("status %s, want failed (%+v)", r.Status, r)
	}
	for _, p := range r.Problems {
		if strings.Contains(p.String(), substr) {
			return
		}
	}
	if strings.Contains(r.Error, substr) {
		return
	}
	t.Errorf("no problem says %q: %+v %s", substr, r.Problems, r.Error)
}

// TestProofKeepsDevices: a base migrated as migrate writes it proves; an
// overlay whose JSON 6902 patch adds the pod's resourceClaims (llm-d's
// OCI provider) replaces the list migrate wrote, and the proof names the
// container that loses its GPUs.
func TestProofKeepsDevices(t *testing.T) {
	t.Parallel()
	tree := map[string]string{
		"base/kustomization.yaml": "resources: [deploy.yaml]\n",
		"base/deploy.yaml":        base,
		"oci/kustomization.yaml": `resources: [../base]
patches:
- target: {kind: Deployment, name: vllm}
  patch: |-
    - op: add
      path: /spec/template/spec/resourceClaims
      value: [{name: rdma, resourceClaimTemplateName: rdma}]
    - op: add
      path: /spec/template/spec/containers/0/resources/claims
      value: [{name: rdma}]
`,
	}
	r := prove(t, tree, map[string]string{"base/deploy.yaml": migrated}, "base")
	if r.Status != proof.Proved || r.Pods != 1 || r.Devices != 1 {
		t.Fatalf("base: %+v, want proved with 1 pod template asking for devices", r)
	}
	r = prove(t, tree, map[string]string{"base/deploy.yaml": migrated}, "oci")
	wantFailed(t, r, "Deployment/ml/vllm container server: before: nvidia.com/gpu: 4; after: no device")
}

// TestProofFailures: each way a migration can change what a pod gets.
func TestProofFailures(t *testing.T) {
	t.Parallel()
	tree := map[string]string{"u/kustomization.yaml": "resources: [deploy.yaml]\n", "u/deploy.yaml": base}
	for _, tt := range []struct {
		name, after, want string
	}{
		{"count", strings.Replace(migrated, "count: 4", "count: 2", 1), "before: nvidia.com/gpu: 4; after: 2 gpu.nvidia.com (claims)"},
		{"twice", strings.Replace(migrated, "          claims:\n", "          limits: {nvidia.com/gpu: 4}\n          claims:\n", 1), "asks for the same devices twice"},
		{"namespace", strings.Replace(migrated, "{name: vllm-gpu, namespace: ml}", "{name: vllm-gpu, namespace: other}", 1), `names no ResourceClaimTemplate or ResourceClaim in the render in namespace "ml"`},
		{"class of another family", strings.Replace(migrated, "gpu.nvidia.com", "neuron.aws.com", 1), "after: no device"},
		{"all", strings.Replace(migrated, "count: 4", "allocationMode: All", 1), "asks for every gpu.nvidia.com device"},
		{"no longer builds", migrated + "---\nnot: [valid\n", "the unit no longer builds"},
		// v1beta1's request shape (deviceClassName at the request's top)
		// under resource.k8s.io/v1, which rejects it (ollama's chart
		// renders this on 1.34+).
		{"v1beta1 shape in v1", strings.Replace(migrated, "        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 4\n", "        deviceClassName: gpu.nvidia.com\n        count: 4\n", 1),
			"claim gpu: request gpu has neither exactly nor firstAvailable, which resource.k8s.io/v1 needs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			wantFailed(t, prove(t, tree, map[string]string{"u/deploy.yaml": tt.after}, "u"), tt.want)
		})
	}
}

// TestProofOthers: a MIG profile must survive in the selectors; a
// cluster-scoped runtime cannot hold claims for its users' namespaces; a
// unit that does not build before is not rendered (nothing to prove);
// devices that stay on the plugin (unmapped) prove.
func TestProofOthers(t *testing.T) {
	t.Parallel()
	mig := strings.Replace(base, "nvidia.com/gpu: 4", "nvidia.com/mig-1g.10gb: 2", 1)
	migAfter := strings.NewReplacer("gpu.nvidia.com", "mig.nvidia.com", "count: 4", "count: 2").Replace(migrated)
	tree := map[string]string{"u/kustomization.yaml": "resources: [deploy.yaml]\n", "u/deploy.yaml": mig}
	wantFailed(t, prove(t, tree, map[string]string{"u/deploy.yaml": migAfter}, "u"), "no new claim selects profile 1g.10gb")
	withSelector := strings.Replace(migAfter, "          count: 2\n", "          count: 2\n          selectors:\n          - cel: {expression: \"device.attributes['gpu.nvidia.com'].profile == '1g.10gb'\"}\n", 1)
	if r := prove(t, tree, map[string]string{"u/deploy.yaml": withSelector}, "u"); r.Status != proof.Proved {
		t.Errorf("MIG with its profile: %+v", r)
	}

	runtime := strings.NewReplacer("apps/v1", "serving.kserve.io/v1alpha1", "Deployment", "ClusterServingRuntime", ", namespace: ml}", "}").Replace(base)
	runtimeAfter := strings.NewReplacer("apps/v1", "serving.kserve.io/v1alpha1", "Deployment", "ClusterServingRuntime", ", namespace: ml}", "}").Replace(migrated)
	tree = map[string]string{"u/kustomization.yaml": "resources: [rt.yaml]\n", "u/rt.yaml": runtime}
	wantFailed(t, prove(t, tree, map[string]string{"u/rt.yaml": runtimeAfter}, "u"), "cluster-scoped")
	// With the InferenceServices that use it in the render, the runtime's
	// claims must resolve in each of their namespaces.
	isvc := func(ns string) string {
		return "---\napiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m, namespace: " + ns + "}\nspec:\n  predictor:\n    model:\n      runtime: vllm\n      modelFormat: {name: hf}\n"
	}
	template := func(ns string) string {
		return "---\n" + strings.Replace(migrated[strings.Index(migrated, "apiVersion: resource.k8s.io/v1"):], "namespace: ml", "namespace: "+ns, 1)
	}
	runtimeOnly := runtimeAfter[:strings.Index(runtimeAfter, "---\n")]
	tree = map[string]string{"u/kustomization.yaml": "resources: [rt.yaml]\n", "u/rt.yaml": runtime + isvc("a") + isvc("b")}
	if r := prove(t, tree, map[string]string{"u/rt.yaml": runtimeOnly + isvc("a") + isvc("b") + template("a") + template("b")}, "u"); r.Status != proof.Proved {
		t.Errorf("a cluster-scoped runtime with a template in each of its users' namespaces: %+v", r)
	}
	wantFailed(t, prove(t, tree, map[string]string{"u/rt.yaml": runtimeOnly + isvc("a") + isvc("b") + template("a")}, "u"),
		`claim gpu names no ResourceClaimTemplate or ResourceClaim in the render in namespace "b"`)

	tree = map[string]string{"u/kustomization.yaml": "resources: [missing.yaml]\n"}
	if r := prove(t, tree, nil, "u"); r.Status != proof.NotRendered || r.Error == "" {
		t.Errorf("unit that does not build: %+v", r)
	}

	rdma := strings.Replace(base, "nvidia.com/gpu: 4", "rdma/ib: 1", 1)
	tree = map[string]string{"u/kustomization.yaml": "resources: [deploy.yaml]\n", "u/deploy.yaml": rdma}
	if r := prove(t, tree, nil, "u"); r.Status != proof.Proved {
		t.Errorf("unmapped resource left as it was: %+v", r)
	}
}

// TestProofNewFiles: files the migration adds (a claims file the
// kustomization now lists) are read from the overlay.
func TestProofNewFiles(t *testing.T) {
	t.Parallel()
	tree := map[string]string{"u/kustomization.yaml": "resources: [deploy.yaml]\n", "u/deploy.yaml": base}
	parts := strings.SplitN(migrated, "---\n", 2)
	r := prove(t, tree, map[string]string{
		"u/kustomization.yaml": "resources: [deploy.yaml, claims.yaml]\n",
		"u/deploy.yaml":        parts[0],
		"u/claims.yaml":        parts[1],
	}, "u")
	if r.Status != proof.Proved {
		t.Fatalf("%+v", r)
	}
}

// TestProofClassicDRA: a container whose claim is classic DRA (a
// v1alpha2 template, the pod claim's source form) asks for devices through
// the driver's opaque parameters, which the proof cannot count: the
// upgrade migrate makes of it is not compared (and not failed).
func TestProofClassicDRA(t *testing.T) {
	t.Parallel()
	classic := `apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaimTemplate
metadata: {namespace: ml, name: big-gpu}
spec:
  spec:
    resourceClassName: gpu.nvidia.com
    parametersRef: {apiGroup: gpu.resource.nvidia.com, kind: GpuClaimParameters, name: big}
---
apiVersion: v1
kind: Pod
metadata: {namespace: ml, name: app}
spec:
  resourceClaims:
  - name: gpu
    source: {resourceClaimTemplateName: big-gpu}
  containers:
  - name: c
    image: x
    resources: {claims: [{name: gpu}]}
`
	upgraded := strings.NewReplacer("resource.k8s.io/v1alpha2", "resource.k8s.io/v1",
		"    resourceClassName: gpu.nvidia.com\n    parametersRef: {apiGroup: gpu.resource.nvidia.com, kind: GpuClaimParameters, name: big}\n",
		"    devices:\n      requests:\n      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 2}\n",
		"    source: {resourceClaimTemplateName: big-gpu}", "    resourceClaimTemplateName: big-gpu").Replace(classic)
	tree := map[string]string{"u/kustomization.yaml": "resources: [pod.yaml]\n", "u/pod.yaml": classic}
	if r := prove(t, tree, map[string]string{"u/pod.yaml": upgraded}, "u"); r.Status != proof.Proved {
		t.Errorf("classic DRA upgraded: %+v", r)
	}
}

// TestProofShares: a time-sliced resource counts shares of a GPU: one
// device taking two consumable shares serves nvidia.com/gpu.shared: 2; one
// device without them does not, and neither do two shares for exclusive
// GPUs.
func TestProofShares(t *testing.T) {
	t.Parallel()
	shared := strings.Replace(base, "nvidia.com/gpu: 4", "nvidia.com/gpu.shared: 2", 1)
	withShares := strings.Replace(migrated, "          count: 4\n", "          count: 1\n          capacity:\n            requests:\n              shares: \"2\"\n", 1)
	tree := map[string]string{"u/kustomization.yaml": "resources: [deploy.yaml]\n", "u/deploy.yaml": shared}
	if r := prove(t, tree, map[string]string{"u/deploy.yaml": withShares}, "u"); r.Status != proof.Proved {
		t.Errorf("two shares of one GPU for gpu.shared: 2: %+v", r)
	}
	wantFailed(t, prove(t, tree, map[string]string{"u/deploy.yaml": strings.Replace(migrated, "count: 4", "count: 1", 1)}, "u"), "before: nvidia.com/gpu.shared: 2")
	exclusive := map[string]string{"u/kustomization.yaml": "resources: [deploy.yaml]\n", "u/deploy.yaml": strings.Replace(base, "nvidia.com/gpu: 4", "nvidia.com/gpu: 2", 1)}
	wantFailed(t, prove(t, exclusive, map[string]string{"u/deploy.yaml": withShares}, "u"), "before: nvidia.com/gpu: 2")
}

// TestProofSameNameTwice: two objects of one kind, namespace and name (in
// memory, documents from two files) are compared in turn, the n-th before
// with the n-th after, not one with the other's devices.
func TestProofSameNameTwice(t *testing.T) {
	t.Parallel()
	tpu := strings.NewReplacer("nvidia.com/gpu: 4", "google.com/tpu: 4").Replace(base)
	before := proof.Pods(nodes(t, base+"---\n"+tpu))
	after := proof.Pods(nodes(t, migrated+"---\n"+tpu))
	if probs := proof.Compare(before, after, classes); len(probs) > 0 {
		t.Errorf("problems %v", probs)
	}
}

func nodes(t *testing.T, text string) []*yaml.RNode {
	t.Helper()
	out, err := kio.FromBytes([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return out
}
