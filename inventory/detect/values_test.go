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
