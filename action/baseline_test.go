package action_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// TestCheckBaseline: check --baseline proves a repository already
// migrated (by kubedra or by hand) against the same repository before:
// every kustomize unit and plain folder, rendered at both, must give every
// pod the devices it had. A migration by kubedra proves; one that loses a
// unit's GPUs (an overlay whose JSON patch replaces the claims list), or
// changes a plain folder's count, fails the gate at the unit, naming the
// container.
func TestCheckBaseline(t *testing.T) {
	t.Parallel()
	before := map[string]string{
		"base/kustomization.yaml": "resources: [deploy.yaml]\n",
		"base/deploy.yaml":        vllmDeployment,
		"prod/kustomization.yaml": "resources: [../base]\nnamePrefix: prod-\n",
		"jobs/job.yaml":           gpuJob(2),
	}
	base := testfs.Tree(t, before)
	head := testfs.Tree(t, before)
	if _, err := action.Migrate(t.Context(), action.Input{Paths: []string{"."}, Dir: head},
		action.MigrateOptions{Output: emit.Write, Plan: plan.Options{Target: defaultTarget()}}); err != nil {
		t.Fatal(err)
	}
	check := func(dir string) *action.CheckResult {
		t.Helper()
		res, err := action.Check(context.Background(), action.Input{Paths: []string{"."}, Dir: dir},
			action.CheckOptions{ScanOptions: action.ScanOptions{Target: defaultTarget()}, Baseline: base})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := check(head)
	if res.Failures != 0 || len(res.Units) != 2 || slices.ContainsFunc(res.Units, func(r proof.Result) bool { return r.Status != proof.Proved }) {
		t.Fatalf("kubedra's migration: %d failures, units %+v; want prod and jobs proved", res.Failures, res.Units)
	}

	// By hand, wrong: the overlay replaces the claims list, the Job's
	// template asks for one GPU.
	testfs.WriteFile(t, filepath.Join(head, "prod", "kustomization.yaml"), `resources: [../base]
namePrefix: prod-
patches:
- target: {kind: Deployment}
  patch: |-
    - op: add
      path: /spec/template/spec/resourceClaims
      value: [{name: rdma, resourceClaimTemplateName: rdma}]
`)
	job, _ := os.ReadFile(filepath.Join(head, "jobs", "job.yaml"))
	testfs.WriteFile(t, filepath.Join(head, "jobs", "job.yaml"), strings.Replace(string(job), "count: 2", "count: 1", 1))
	res = check(head)
	for _, want := range []struct{ file, container, msg string }{
		{filepath.Join("prod", "kustomization.yaml"), "server", "before: nvidia.com/gpu: 4; after: no device"},
		{"jobs", "t", "before: nvidia.com/gpu: 2; after: 1 gpu.nvidia.com"},
	} {
		if !slices.ContainsFunc(res.Diagnostics, func(d inventory.Diagnostic) bool {
			return d.Rule == proof.RuleBaseline && d.Severity == inventory.Error && d.File == want.file && d.Container == want.container && strings.Contains(d.Message, want.msg)
		}) {
			t.Errorf("no %s error at %s for container %s saying %q: %v", proof.RuleBaseline, want.file, want.container, want.msg, res.Diagnostics)
		}
	}
	if res.Failures != 2 {
		t.Errorf("%d failures, want the 2 units", res.Failures)
	}
}
