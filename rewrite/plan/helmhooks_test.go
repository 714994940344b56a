package plan

import (
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// TestHelmHook: a hook workload's claim template is a hook of the same
// events one weight before it, keeping the workload's delete policy; a weight
// Helm cannot read counts as 0, as in Helm; a workload that is no hook (or
// none known) leaves the template alone.
func TestHelmHook(t *testing.T) {
	tests := []struct {
		name string
		wl   *inventory.Workload
		want map[string]string
	}{
		{"no workload", nil, map[string]string{}},
		{"no hook", &inventory.Workload{Annotations: map[string]string{"a": "b", HelmHookWeightAnnotation: "3"}}, map[string]string{}},
		{"weighted", &inventory.Workload{Annotations: map[string]string{HelmHookAnnotation: "pre-install,pre-upgrade", HelmHookWeightAnnotation: " -2 ", HelmHookDeletePolicyAnnotation: "hook-succeeded"}},
			map[string]string{HelmHookAnnotation: "pre-install,pre-upgrade", HelmHookWeightAnnotation: "-3", HelmHookDeletePolicyAnnotation: "hook-succeeded"}},
		{"unreadable weight", &inventory.Workload{Annotations: map[string]string{HelmHookAnnotation: "test", HelmHookWeightAnnotation: "first"}},
			map[string]string{HelmHookAnnotation: "test", HelmHookWeightAnnotation: "-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := yaml.MustParse("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: x\n")
			if err := helmHook(n, tt.wl); err != nil {
				t.Fatal(err)
			}
			got := n.GetAnnotations()
			if len(got) != len(tt.want) {
				t.Fatalf("annotations %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
