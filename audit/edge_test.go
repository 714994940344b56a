package audit_test

import (
	"strings"
	"testing"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/rules"
)

// An empty dump says nothing about the GPU Operator either: the check is
// skipped like every other, not passed.
func TestEmptyDumpSkipsEverything(t *testing.T) {
	f, err := cluster.ReadDump(strings.NewReader(""), cluster.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	r := audit.Run(f, audit.Options{Resolver: rules.Default()})
	for _, c := range r.Checks {
		if c.Result != audit.Skipped {
			t.Errorf("check %s on an empty dump: %s, want skipped", c.ID, c.Result)
		}
	}
}

// A pod asking "-3" GPUs (a dump no API server wrote) is reported as an
// invalid request, not as "no rule maps it".
func TestInvalidQuantity(t *testing.T) {
	dump := `apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: ml}
spec:
  containers:
  - name: c
    image: cuda
    resources: {limits: {nvidia.com/gpu: "-3"}}
`
	f, err := cluster.ReadDump(strings.NewReader(dump), cluster.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	r := audit.Run(f, audit.Options{Resolver: rules.Default()})
	var msgs []string
	for _, it := range r.Items {
		if it.Check == audit.CheckPluginWorkloads {
			msgs = append(msgs, string(it.Severity)+": "+it.Message)
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], `asks "-3" nvidia.com/gpu`) || !strings.HasPrefix(msgs[0], "warning") {
		t.Errorf("plugin-workloads findings: %q", msgs)
	}
	if len(r.Workloads) != 0 {
		t.Errorf("an invalid request is grouped as a workload on a plugin: %+v", r.Workloads)
	}
}

// Plugin pods read in one namespace only: the audit says so.
func TestPluginPodsScope(t *testing.T) {
	f := &cluster.Facts{ServerVersion: "v1.37.2", ResourceAPIVersions: []string{"v1"},
		Namespace: "ml", PluginPodsScope: "namespace ml only (listing pods in all namespaces: forbidden)"}
	r := audit.Run(f, audit.Options{Resolver: rules.Default()})
	got := fired(r)[audit.CheckNodeConflict]
	if len(got) != 1 || got[0] != "warning " {
		t.Errorf("node-conflict findings: %q", got)
	}
}
