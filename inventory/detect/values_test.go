package detect_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

func TestHelmValues(t *testing.T) {
	t.Parallel()
	src := "gpu:\n  enabled: true\nresources:\n  limits:\n    cpu: 1\n    nvidia.com/gpu: 2\nworker:\n  resources:\n    requests:\n      amd.com/gpu: 1\nresourceName: nvidia.com/gpu\n"
	n, err := yaml.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	doc := &inventory.Document{Node: n, Origin: inventory.Origin{Path: "chart/values.yaml"}}
	var got []string
	for _, f := range detect.All([]*inventory.Document{doc}, detect.Options{}).Findings {
		got = append(got, f.Origin.Path+":"+strconv.Itoa(f.Line)+" "+f.Values+" = "+f.Quantity())
	}
	want := []string{"chart/values.yaml:6 resources.limits.nvidia.com/gpu = 2", "chart/values.yaml:10 worker.resources.requests.amd.com/gpu = 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !detect.IsHelmValues("c/values-prod.yaml") || detect.IsHelmValues("c/templates/values.tpl") || detect.IsHelmValues("myvalues.yaml") {
		t.Errorf("IsHelmValues")
	}
}

// TestSpecMaps: a custom resource's device maps outside its pod templates
// (llmaz's OpenModel flavors) are findings with their field path and the
// object named; a workload's containers (limits and requests alike) are
// reported once, by their pod template; objects that count devices
// (a Karpenter NodePool's limits) are governance, not requests.
func TestSpecMaps(t *testing.T) {
	t.Parallel()
	src := []string{`apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata: {name: qwen}
spec:
  inferenceConfig:
    flavors:
    - name: t4
      limits:
        nvidia.com/gpu: 1
    - name: a100
      requests:
        nvidia.com/gpu: 2
`, `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  leaderWorkerTemplate:
    workerTemplate:
      spec:
        containers:
        - name: c
          resources:
            limits:
              nvidia.com/gpu: 8
            requests:
              nvidia.com/gpu: 8
`, `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  limits:
    nvidia.com/gpu: 16
`}
	var docs []*inventory.Document
	for i, s := range src {
		n, err := yaml.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, &inventory.Document{Node: n, Origin: inventory.Origin{Path: "m.yaml", Index: i}})
	}
	var got []string
	for _, f := range detect.All(docs, detect.Options{}).Findings {
		got = append(got, f.Kind+"/"+f.Name+":"+strconv.Itoa(f.Line)+" "+f.FieldPath()+" = "+f.Quantity())
	}
	want := []string{
		"OpenModel/qwen:9 spec.inferenceConfig.flavors[0].limits.nvidia.com/gpu = 1",
		"OpenModel/qwen:12 spec.inferenceConfig.flavors[1].requests.nvidia.com/gpu = 2",
		"LeaderWorkerSet/lws:12 spec.leaderWorkerTemplate.workerTemplate.spec.containers[name=c].resources.limits.nvidia.com/gpu = 8",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
