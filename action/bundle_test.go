package action_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

var v134 = rules.Version{Major: 1, Minor: 34}

func TestBundleFromDump(t *testing.T) {
	res, err := action.Bundle(context.Background(), action.BundleOptions{Source: &action.ClusterSource{Dump: exampleCluster},
		Driver: "example", Target: v134, Out: "cutover"})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if m.FactsSource != "dump "+exampleCluster || len(m.Plugins) != 1 || m.Plugins[0].Name != "example-device-plugin" || m.Plugins[0].Source != "cluster" {
		t.Errorf("manifest: facts %q, plugins %+v", m.FactsSource, m.Plugins)
	}
	var pools []string
	for _, p := range m.Pools {
		pools = append(pools, p.Selector)
	}
	if d := cmp.Diff([]string{"eks.amazonaws.com/nodegroup=gpu-a", "eks.amazonaws.com/nodegroup=gpu-b"}, pools); d != "" {
		t.Errorf("pools (-want +got):\n%s", d)
	}
	if !strings.Contains(string(res.Tree["PLAN.md"]), "kubectl cordon -l eks.amazonaws.com/nodegroup=gpu-a") {
		t.Errorf("PLAN.md does not cordon the first pool:\n%.600s", res.Tree["PLAN.md"])
	}
}

// --from-cluster reads the cluster once, and only what bundle needs: no
// pods, no DRA objects, no discovery. The bundle equals the one of the
// same objects as a dump.
func TestBundleFromClusterReadsOnce(t *testing.T) {
	src, fakes := live(t, exampleCluster)
	src.Context = "prod"
	res, err := action.Bundle(context.Background(), action.BundleOptions{Source: &src, Driver: "example", Target: v134, Out: "cutover"})
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, a := range append(fakes.Client.Actions(), fakes.Dynamic.Actions()...) {
		calls = append(calls, a.GetVerb()+" "+a.GetResource().Resource)
	}
	slices.Sort(calls)
	if d := cmp.Diff([]string{"get version", "list daemonsets", "list nodes", "list resourcequotas"}, calls); d != "" {
		t.Errorf("API calls (-want +got):\n%s", d)
	}
	fromDump, err := action.Bundle(context.Background(), action.BundleOptions{Source: &action.ClusterSource{Dump: exampleCluster},
		Driver: "example", Target: v134, Out: "cutover"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res.Tree.Paths() {
		got := strings.ReplaceAll(string(res.Tree[p]), "cluster (context prod)", "dump "+exampleCluster)
		if d := cmp.Diff(string(fromDump.Tree[p]), got); d != "" {
			t.Errorf("%s (-dump +cluster):\n%s", p, d)
		}
	}
	if len(res.Tree) != len(fromDump.Tree) {
		t.Errorf("%d files from the cluster, %d from the dump", len(res.Tree), len(fromDump.Tree))
	}
}

func TestBundleWithoutCluster(t *testing.T) {
	res, err := action.Bundle(context.Background(), action.BundleOptions{Driver: "nvidia", Target: v134})
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.FactsSource != "none (catalogue defaults)" || len(res.Warnings) == 0 {
		t.Errorf("facts %q, warnings %v", res.Manifest.FactsSource, res.Warnings)
	}
}

func TestBundleErrors(t *testing.T) {
	var unknown *bundle.UnknownDriverError
	if _, err := action.Bundle(context.Background(), action.BundleOptions{Driver: "nvidai"}); !errors.As(err, &unknown) {
		t.Errorf("unknown driver: %v", err)
	}
	var problems *inventory.DiagnosticsError
	if _, err := action.Bundle(context.Background(), action.BundleOptions{Driver: "nvidia", Pools: []string{"a"}, Target: v134}); !errors.As(err, &problems) || problems.Diagnostics[0].Rule != bundle.RulePools {
		t.Errorf("unsafe bundle: %v", err)
	}
	src, _ := live(t, exampleCluster)
	src.NewReader = nil
	src.Getter = kubeconfig(t, "not: [yaml")
	if _, err := action.Bundle(context.Background(), action.BundleOptions{Source: &src, Driver: "example", Target: v134}); err == nil ||
		!strings.HasPrefix(err.Error(), "reading the cluster: loading kubeconfig") {
		t.Errorf("unreachable cluster: %v", err)
	}
}

// BundleVerify finds the conflict an unpatched plugin makes once a node is
// labelled, and none on a cluster without the plugin.
func TestBundleVerify(t *testing.T) {
	res, err := action.Bundle(context.Background(), action.BundleOptions{Source: &action.ClusterSource{Dump: exampleCluster},
		Driver: "example", Target: v134})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "cutover")
	if err := bundle.Write(dir, res.Tree, false); err != nil {
		t.Fatal(err)
	}
	src, _ := live(t, exampleCluster)
	r, err := action.BundleVerify(context.Background(), dir, src)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Conflicts) == 0 || r.Conflicts[0].State != bundle.StateDRA || !r.DriverFromBundle || len(r.Placements) != 4 {
		t.Errorf("report: %+v", r)
	}
	if _, err := action.BundleVerify(context.Background(), t.TempDir(), src); err == nil || !strings.Contains(err.Error(), "reading bundle") {
		t.Errorf("a folder that is no bundle: %v", err)
	}
}
