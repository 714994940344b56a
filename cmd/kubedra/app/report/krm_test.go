package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

func TestKRMResults(t *testing.T) {
	t.Parallel()
	train := inventory.ObjectRef{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ml", Name: "train"}
	synth := inventory.ObjectRef{APIVersion: "batch/v1", Kind: "Job", Name: "synth"}
	where := map[inventory.ObjectRef]inventory.Origin{train: {Path: "deploy/gpu.yaml", Index: 2}, synth: {Index: 1}}
	diags := inventory.Diagnostics{
		{Severity: inventory.Warning, Rule: "migrate/lossy", Object: &train, Field: "spec.template.spec.containers[name=cuda].resources.limits.nvidia.com/gpu",
			Message: "the mapping is lossy", Fix: "pass --allow-lossy"},
		{Severity: inventory.Warning, Rule: "migrate/unmapped", Object: &synth, Message: "no rule maps example.com/fpga"},
		{Severity: inventory.Info, Message: "about no object"},
	}
	want := framework.Results{
		{Message: "the mapping is lossy. Fix: pass --allow-lossy", Severity: framework.Warning,
			ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, NameMeta: yaml.NameMeta{Name: "train", Namespace: "ml"}},
			Field:       &framework.Field{Path: "spec.template.spec.containers[name=cuda].resources.limits.nvidia.com/gpu"},
			File:        &framework.File{Path: "deploy/gpu.yaml", Index: 2}, Tags: map[string]string{"rule": "migrate/lossy"}},
		// An item without a path has no file.
		{Message: "no rule maps example.com/fpga", Severity: framework.Warning,
			ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, NameMeta: yaml.NameMeta{Name: "synth"}},
			Tags:        map[string]string{"rule": "migrate/unmapped"}},
		{Message: "about no object", Severity: framework.Info},
	}
	if d := cmp.Diff(want, KRMResults(diags, where)); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
}

func TestCheckKRMResultsFailing(t *testing.T) {
	t.Parallel()
	c := fixture()
	results, failing := CheckKRMResults(c)
	if len(results) != len(c.Report.Findings) || len(failing) != c.Failures() {
		t.Fatalf("%d results, %d failing; want %d and %d", len(results), len(failing), len(c.Report.Findings), c.Failures())
	}
	for _, r := range failing {
		if r.Severity != framework.Error {
			t.Errorf("a failing result is %s: %s", r.Severity, r.Message)
		}
	}
}
