package action_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/inventory/cluster/clustertest"
	"github.com/kubedra/kubedra/rules"
)

// Audit of the mixed fixture is audit.Run on its facts with the built-in
// rules: the workloads' mapping status comes from them.
func TestAuditFromDump(t *testing.T) {
	r, err := action.Audit(context.Background(), action.ClusterSource{Dump: mixed}, action.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	facts, err := action.ReadCluster(context.Background(), action.ClusterSource{Dump: mixed})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(clustertest.JSON(t, audit.Run(facts, audit.Options{Resolver: rules.Default()})), clustertest.JSON(t, r)); d != "" {
		t.Errorf("report (-audit.Run +Audit):\n%s", d)
	}
	var statuses []string
	for _, g := range r.Workloads {
		statuses = append(statuses, g.Namespace+" "+g.Resource+" "+string(g.Status))
	}
	if d := cmp.Diff([]string{"ml nvidia.com/gpu mappable", "neuron aws.amazon.com/neuroncore lossy"}, statuses); d != "" {
		t.Errorf("workload groups (-want +got):\n%s", d)
	}
}

// The rules given decide the workloads' status; nothing else changes.
func TestAuditRules(t *testing.T) {
	r, err := action.Audit(context.Background(), action.ClusterSource{Dump: mixed}, action.AuditOptions{Rules: failing{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Workloads) != 2 {
		t.Fatalf("workload groups: %+v", r.Workloads)
	}
	for _, g := range r.Workloads {
		if g.Status != rules.Unmapped {
			t.Errorf("%s %s: %s, want unmapped by a resolver that maps nothing", g.Namespace, g.Resource, g.Status)
		}
	}
}

type failing struct{}

func (failing) Resolve(rules.Pod, rules.Options) (rules.Resolution, error) {
	return rules.Resolution{}, errors.New("no rules")
}

// The live audit and the audit of the dump it wrote are byte-identical.
func TestAuditLiveAndDumpAgree(t *testing.T) {
	src, _ := live(t, mixed)
	var dump bytes.Buffer
	src.DumpTo = &dump
	fromLive, err := action.Audit(context.Background(), src, action.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fromDump, err := action.Audit(context.Background(), action.ClusterSource{Dump: "-", Stdin: &dump}, action.AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(clustertest.JSON(t, fromLive), clustertest.JSON(t, fromDump)); d != "" {
		t.Errorf("live and --from-dump differ (-live +dump):\n%s", d)
	}
}

func TestAuditUnreadableDump(t *testing.T) {
	if _, err := action.Audit(context.Background(), action.ClusterSource{Dump: "/nonexistent.yaml"}, action.AuditOptions{}); err == nil {
		t.Error("want an error")
	}
}
