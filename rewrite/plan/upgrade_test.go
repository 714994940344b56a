package plan_test

import (
	"testing"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// TestUpgradeIgnored: a kubedra.io/ignore annotation on an earlier-DRA
// object keeps it out of the gate and out of migrate's edits.
func TestUpgradeIgnored(t *testing.T) {
	t.Parallel()
	f := inventory.DRAFinding{Origin: inventory.Origin{Path: "a.yaml"}, Line: 1, What: inventory.DRAObject, APIVersion: "resource.k8s.io/v1beta1",
		Kind: "ResourceClaim", Name: "c", Ignore: "the 1.37 cluster goes away in May"}
	target := rules.Version{Major: 1, Minor: 38}
	items := plan.UpgradeItems([]inventory.DRAFinding{f}, target, nil)
	if len(items) != 1 || items[0].Ignored != f.Ignore || items[0].Status != rules.DRAUpgrade {
		t.Fatalf("items %+v", items)
	}
	ups, diags := plan.Upgrades([]inventory.DRAFinding{f}, nil, target)
	if len(ups) != 0 || len(diags) != 1 || diags[0].Rule != "migrate/ignored" {
		t.Errorf("upgrades %+v, diagnostics %+v", ups, diags)
	}
	f.Ignore = ""
	if ups, _ := plan.Upgrades([]inventory.DRAFinding{f}, nil, target); len(ups) != 1 || ups[0].APIVersion != "resource.k8s.io/v1" {
		t.Errorf("without the annotation: %+v", ups)
	}
}
