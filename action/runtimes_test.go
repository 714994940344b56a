package action_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

const clusterServingRuntime = `apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata:
  name: vllm
spec:
  supportedModelFormats: [{name: huggingface}]
  containers:
  - name: kserve-container
    image: vllm
    resources:
      limits:
        nvidia.com/gpu: 2
`

const clusterTrainingRuntime = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-gpu
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: torch
                  resources:
                    limits:
                      nvidia.com/gpu: 8
`

func inferenceService(ns string) string {
	return "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: llm, namespace: " + ns + "}\nspec:\n  predictor:\n    model:\n      runtime: vllm\n      modelFormat: {name: huggingface}\n"
}

func trainJob(ns string) string {
	return "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: t, namespace: " + ns + "}\nspec:\n  runtimeRef: {name: torch-gpu}\n"
}

// TestClusterScopedRuntimes: a cluster-scoped runtime's pods run in the
// namespaces of what uses it, and a ResourceClaimTemplate is namespaced
// (cluster-scoped templates were withdrawn, KEP-5978). Where the input
// holds its users (InferenceServices naming a ClusterServingRuntime,
// TrainJobs whose runtimeRef names a ClusterTrainingRuntime, in any file),
// migrate writes one template per namespace of theirs, and the result
// proves (package proof, reading the users itself); with no user in the
// input, it is left as it is, said why.
func TestClusterScopedRuntimes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, runtime, users string
		namespaces           []string
	}{
		{"ClusterServingRuntime", clusterServingRuntime, inferenceService("team-a") + "---\n" + inferenceService("team-b") + "---\n" + inferenceService("team-a"), []string{"team-a", "team-b"}},
		{"ClusterTrainingRuntime", clusterTrainingRuntime, trainJob("research"), []string{"research"}},
		{"no users", clusterServingRuntime, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tree := map[string]string{"runtime.yaml": tc.runtime}
			if tc.users != "" {
				tree["users/users.yaml"] = tc.users
			}
			dir := testfs.Tree(t, tree)
			before := objects(t, dir)
			res := migrateTree(t, dir)
			after, _ := os.ReadFile(filepath.Join(dir, "runtime.yaml"))
			if tc.namespaces == nil {
				if string(after) != tc.runtime {
					t.Errorf("a runtime no input uses was changed:\n%s", after)
				}
				if !slices.ContainsFunc(res.Diagnostics, func(d inventory.Diagnostic) bool { return d.Rule == plan.RuleClusterScoped }) {
					t.Errorf("no %s diagnostic: %v", plan.RuleClusterScoped, res.Diagnostics)
				}
				return
			}
			var got []string
			for _, o := range objects(t, dir) {
				if o.GetKind() == "ResourceClaimTemplate" {
					got = append(got, o.GetNamespace())
				}
			}
			if !slices.Equal(got, tc.namespaces) {
				t.Errorf("claim templates in namespaces %v, want %v:\n%s", got, tc.namespaces, after)
			}
			if probs := proof.Compare(proof.Pods(before), proof.Pods(objects(t, dir)), bundle.CatalogueFamilies()); len(probs) > 0 {
				t.Errorf("the migrated tree does not prove: %v", probs)
			}
			if !strings.Contains(string(after), "resourceClaims") {
				t.Errorf("the runtime has no claims:\n%s", after)
			}
		})
	}
}

// objects are every document of the tree's YAML files.
func objects(t *testing.T, dir string) []*yaml.RNode {
	t.Helper()
	var out []*yaml.RNode
	for _, name := range []string{"runtime.yaml", filepath.Join("users", "users.yaml")} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		for _, d := range files.Parse(name, data).Docs {
			out = append(out, d.Node)
		}
	}
	return out
}

// TestTrainJobDevices: a TrainJob asks for devices per node in
// spec.trainer.resourcesPerNode, which replaces its runtime's trainer
// resources and has no place for claims: scan reports it at its line as a
// custom resource (check fails), and migrate leaves it, saying to move the
// devices to the runtime.
func TestTrainJobDevices(t *testing.T) {
	t.Parallel()
	job := strings.Replace(trainJob("research"), "  runtimeRef: {name: torch-gpu}\n", "  runtimeRef: {name: torch-gpu}\n  trainer:\n    numNodes: 2\n    resourcesPerNode:\n      limits:\n        nvidia.com/gpu: 4\n", 1)
	dir := testfs.Tree(t, map[string]string{"job.yaml": job})
	res := scanCharts(t, action.Input{Paths: []string{"."}, Dir: dir}, rules.DefaultTarget)
	if f := res.Report.Findings; len(f) != 1 || f[0].Status != rules.CustomResource || f[0].Finding.Line != 10 {
		t.Fatalf("findings %+v, want the request at job.yaml:10 as a custom resource", f)
	}
	m := migrateTree(t, dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "job.yaml")); string(b) != job {
		t.Errorf("the TrainJob was changed:\n%s", b)
	}
	if !slices.ContainsFunc(m.Diagnostics, func(d inventory.Diagnostic) bool {
		return d.Rule == plan.RuleCustomResource && strings.Contains(d.Message, "resourcesPerNode, which replaces the resources of the trainer container") && strings.Contains(d.Fix, "move the devices to the runtime")
	}) {
		t.Errorf("no diagnostic says where the devices go: %v", m.Diagnostics)
	}
}
