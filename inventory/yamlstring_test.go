package inventory

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestStringNodeQuotesAsKyaml: StringNode quotes exactly the values
// kyaml's SetField quotes (its rule decodes each value with yaml.v2), so
// the bytes migrate writes do not change with the fast path.
func TestStringNodeQuotesAsKyaml(t *testing.T) {
	for _, v := range []string{
		"gpu", "infer-12-gpu", "a.b-c", "y", "yes", "n", "no", "on", "off", "true", "false", "null",
		"Yes", "NO", "True", "~", "", "1", "010", "0x1f", "1e3", "1.5", ".inf", ".nan", "2024-01-01",
		"12-gpu", "gpu_1", "GPU", "-gpu", "nvidia.com/gpu", "a: b", "#x", "x #y", "yes-please", "null-ish",
	} {
		got := StringNode(v)
		want := yaml.NewStringRNode(v)
		if err := yaml.NewMapRNode(nil).PipeE(yaml.SetField("k", want)); err != nil {
			t.Fatal(err)
		}
		if got.Style != want.YNode().Style {
			t.Errorf("%q: style %v, kyaml's SetField gives %v", v, got.Style, want.YNode().Style)
		}
	}
}
