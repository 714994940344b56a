package detect_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory/detect"
)

// Issue 29 item 8: a quantity is read as Kubernetes reads it. kubectl and
// the API server turn YAML into JSON with sigs.k8s.io/yaml, a YAML 1.1
// reader: an unquoted 010 is octal (8), 0777 is 511, 0x10 is 16; a quoted
// '010' is the string 010 (10). The test asks the real decoder (into a
// core/v1 Pod) and compares.
func TestQuantityAsKubernetesReadsIt(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"1", "8", "010", "0777", "0x10", "0o10", "08", "1_0", "+2", "2.0", "1e1", "'010'", `"0777"`, "0b11", "1Ki", "500m"} {
		src := "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: " + v + "\n"
		var pod corev1.Pod
		if err := sigsyaml.Unmarshal([]byte(src), &pod); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		want := pod.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]
		fs := detectYAML(t, src, detect.Options{})
		if len(fs) != 1 {
			t.Fatalf("%s: %d findings", v, len(fs))
		}
		got, err := resource.ParseQuantity(fs[0].Limit)
		if err != nil || got.Cmp(want) != 0 {
			t.Errorf("nvidia.com/gpu: %s: kubedra reads %q, Kubernetes %s", v, fs[0].Limit, want.String())
		}
	}
}
