package plan_test

import (
	"testing"

	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rewrite/plan/plantest"
	"github.com/kubedra/kubedra/rules"
)

// TestBatchIsOnePlan: the device edits of a workload, the upgrade of a
// claim template written for v1beta1 and the quota key of a ResourceQuota
// in one file come out of one call as one FilePlan, and every diagnostic
// of the three with it.
func TestBatchIsOnePlan(t *testing.T) {
	t.Parallel()
	src := `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
  - name: c
    resources:
      limits:
        nvidia.com/gpu: 1
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: old, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.nvidia.com
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: ml}
spec:
  hard:
    requests.nvidia.com/gpu: "8"
`
	f := files.Parse("all.yaml", []byte(src))
	set, err := rules.Load()
	if err != nil {
		t.Fatal(err)
	}
	found := detect.All(f.Docs, detect.Options{TemplatePaths: set.TemplatePaths()})
	if len(found.Findings) != 1 || len(found.DRA) == 0 || len(found.Gov) != 1 {
		t.Fatalf("detection: %d findings, %d DRA, %d governance", len(found.Findings), len(found.DRA), len(found.Gov))
	}
	p, err := plan.NewPlanner(set, plan.Options{Target: rules.Version{Major: 1, Minor: 35}, Encoder: plantest.Encoder{}})
	if err != nil {
		t.Fatal(err)
	}
	r := p.Batch("all.yaml", found)
	fp := r.Plan
	if fp == nil || len(fp.Docs) != 1 || len(fp.Upgrades) != 1 || len(fp.Governance) != 1 {
		t.Fatalf("want one FilePlan with 1 device edit, 1 upgrade and 1 governance edit, got %+v", fp)
	}
	if fp.Docs[0].Index != 0 || fp.Upgrades[0].Index != 1 || fp.Governance[0].Index != 2 {
		t.Errorf("edits at documents %d, %d, %d; want 0, 1, 2", fp.Docs[0].Index, fp.Upgrades[0].Index, fp.Governance[0].Index)
	}
	rulesSeen := map[string]bool{}
	for _, d := range r.Diagnostics {
		rulesSeen[d.Rule] = true
	}
	if !rulesSeen[plan.RuleDRAUpgraded] {
		t.Errorf("the upgrade's diagnostic is missing: %v", r.Diagnostics)
	}
}
