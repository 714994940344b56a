package plan_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// TestKustomizeFieldPaths: detection's pod-spec paths become kustomize
// field paths (lists walked implicitly, no wildcards), rules files'
// templatePaths included, and `*` patterns stand for the run's concrete
// paths only.
func TestKustomizeFieldPaths(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"spec.template.spec": "spec/template/spec",
		"spec.replicatedJobs[].template.spec.template.spec": "spec/replicatedJobs/template/spec/template/spec",
		"spec.tasks[name=x].template.spec":                  "spec/tasks/template/spec",
		"spec.workerGroupSpecs[0].template.spec":            "spec/workerGroupSpecs/template/spec",
		`metadata.annotations.a\.b`:                         "metadata/annotations/a.b",
	} {
		if got := plan.KustomizePath(in); got != want {
			t.Errorf("KustomizePath(%q) = %q, want %q", in, got, want)
		}
	}
	s := &plan.SideFiles{Detect: detect.Options{TemplatePaths: []inventory.TemplatePath{{Group: "example.com", Kind: "Trainer", Paths: []string{"spec.pod.spec"}}}}}
	s.AddPods("spec.pytorchReplicaSpecs.Worker.template.spec")
	s.NeedNameReferences(filepath.Join("o", "kustomization.yaml"))
	edits := s.Edits(nil)
	if len(edits) != 2 || edits[0].Path != filepath.Join("o", plan.NameReferenceFile) {
		t.Fatalf("edits %+v: want the configurations file, then the kustomization", edits)
	}
	paths := edits[0].NameReferences
	for _, p := range paths {
		if strings.Contains(p, "*") {
			t.Errorf("%q: a wildcard kustomize rejects", p)
		}
	}
	for _, want := range []string{"spec", "spec/template/spec", "spec/jobTemplate/spec/template/spec", "spec/pod/spec", "spec/pytorchReplicaSpecs/Worker/template/spec"} {
		if !slices.Contains(paths, want) {
			t.Errorf("no field spec for %s in %v", want, paths)
		}
	}
	if k := edits[1]; k.Path != filepath.Join("o", "kustomization.yaml") || !slices.Equal(k.Configurations, []string{plan.NameReferenceFile}) {
		t.Errorf("kustomization edit %+v: want it to list %s", k, plan.NameReferenceFile)
	}
}

// TestSideFilesOrder: claims files come first, in the order their objects
// arrived, then the configurations files, then the kustomizations that
// list both (each claims file once, relative to its kustomization), then
// the DeviceClass file.
func TestSideFilesOrder(t *testing.T) {
	t.Parallel()
	obj := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	s := &plan.SideFiles{DeviceClassFile: "classes.yaml"}
	s.AddClaims(filepath.Join("b", "claims.yaml"), filepath.Join("b", "kustomization.yaml"), []*yaml.RNode{obj})
	s.AddClaims(filepath.Join("a", "claims.yaml"), "", []*yaml.RNode{obj})
	s.AddClaims(filepath.Join("b", "claims.yaml"), filepath.Join("b", "kustomization.yaml"), []*yaml.RNode{obj})
	var got []string
	for _, e := range s.Edits([]*yaml.RNode{obj}) {
		got = append(got, e.Path)
		if e.Path == filepath.Join("b", "kustomization.yaml") && !slices.Equal(e.Resources, []string{"claims.yaml"}) {
			t.Errorf("kustomization resources %v, want [claims.yaml]", e.Resources)
		}
		if e.Path == filepath.Join("b", "claims.yaml") && len(e.Objects) != 2 {
			t.Errorf("claims file objects %d, want 2", len(e.Objects))
		}
	}
	want := []string{filepath.Join("b", "claims.yaml"), filepath.Join("a", "claims.yaml"), filepath.Join("b", plan.NameReferenceFile), filepath.Join("b", "kustomization.yaml"), "classes.yaml"}
	if !slices.Equal(got, want) {
		t.Errorf("edits in order %v, want %v", got, want)
	}
}
