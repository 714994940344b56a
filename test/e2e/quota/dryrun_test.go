package quota_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

// TestDryRun: every object of the governance goldens as migrate writes
// them (rewrite/testdata/governance-*/expected.yaml) is accepted by a
// server-side dry run with strict field validation, with Kueue's (v0.19.2)
// and Volcano's CRDs installed: the quota keys, the LimitRange items left,
// the ClusterQueue's added covered resources, the ConfigMap. Kinds that are
// not APIs (Kueue's Configuration, a file Kueue reads) or whose CRDs are
// not vendored (Karpenter's NodePool) are listed as skipped.
func TestDryRun(t *testing.T) {
	ctx := context.Background()
	for _, dir := range []string{"testdata/crds", "../validate/testdata/crds/volcano"} {
		if _, err := cluster.InstallCRDs(ctx, dir); err != nil {
			t.Fatal(err)
		}
	}
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
	cases, err := filepath.Glob("../../../rewrite/testdata/governance-*/expected.yaml")
	if err != nil || len(cases) == 0 {
		t.Fatalf("no governance goldens: %v", err)
	}
	skipped := map[string]bool{}
	checked := 0
	for _, path := range cases {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		objs, err := harness.DecodeYAML(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ns := cluster.NewNamespace(t)
		for _, o := range objs {
			if o.GetKind() == "Configuration" || o.GetKind() == "NodePool" {
				skipped[o.GetKind()] = true
				continue
			}
			if o.GetNamespace() != "" {
				o.SetNamespace(ns)
			}
			if _, err := cluster.Create(ctx, o, harness.CreateOptions{Namespace: ns, DryRun: true}); err != nil {
				t.Errorf("%s: %s %s: %v", filepath.Base(filepath.Dir(path)), o.GetKind(), o.GetName(), err)
				continue
			}
			checked++
		}
	}
	var kinds []string
	for k := range skipped {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	t.Logf("%d objects of %d goldens accepted by a server-side dry run; skipped kinds: %s", checked, len(cases), strings.Join(kinds, ", "))
}
