package action

import (
	"slices"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite"
)

// TestKustomizeFieldPaths: detection's pod-spec paths become kustomize
// field paths (lists walked implicitly, no wildcards), rules files'
// templatePaths included, and `*` patterns stand for the run's concrete
// paths only.
func TestKustomizeFieldPaths(t *testing.T) {
	for in, want := range map[string]string{
		"spec.template.spec": "spec/template/spec",
		"spec.replicatedJobs[].template.spec.template.spec": "spec/replicatedJobs/template/spec/template/spec",
		"spec.tasks[name=x].template.spec":                  "spec/tasks/template/spec",
		"spec.workerGroupSpecs[0].template.spec":            "spec/workerGroupSpecs/template/spec",
		`metadata.annotations.a\.b`:                         "metadata/annotations/a.b",
	} {
		if got := kustomizePath(in); got != want {
			t.Errorf("kustomizePath(%q) = %q, want %q", in, got, want)
		}
	}
	k := &kustomizeState{pods: map[rewrite.FieldSpec]bool{{Path: "spec/pytorchReplicaSpecs/Worker/template/spec"}: true}}
	specs := k.podSpecs(detect.Options{TemplatePaths: []inventory.TemplatePath{{Group: "example.com", Kind: "Trainer", Paths: []string{"spec.pod.spec"}}}})
	var paths []string
	for _, s := range specs {
		if s.Kind != "" || s.Group != "" {
			t.Errorf("%+v: a field spec with a kind", s)
		}
		if strings.Contains(s.Path, "*") {
			t.Errorf("%q: a wildcard kustomize rejects", s.Path)
		}
		paths = append(paths, s.Path)
	}
	for _, want := range []string{"spec", "spec/template/spec", "spec/jobTemplate/spec/template/spec", "spec/pod/spec", "spec/pytorchReplicaSpecs/Worker/template/spec"} {
		if !slices.Contains(paths, want) {
			t.Errorf("no field spec for %s in %v", want, paths)
		}
	}
}
