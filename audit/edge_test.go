package audit_test

import (
	"os"
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

// A Bottlerocket node runs the NVIDIA device plugin and DRA driver as host
// services: no pod, but allocatable next to the node's ResourceSlices is a
// conflict, and the fix names the node image's settings. The dump as read
// (issue 28): with other pods in it, and with no pods at all (a dump of
// nodes and ResourceSlices), where the conflict is still an error naming
// the node.

func TestHostServiceConflict(t *testing.T) {
	b, err := os.ReadFile("../testdata/cluster/host-services.yaml")
	if err != nil {
		t.Fatal(err)
	}
	hostServiceDump := string(b)
	for _, tc := range []struct {
		name, dump, want string
	}{
		{"other pods read", hostServiceDump + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: coredns, namespace: kube-system}\nspec: {nodeName: br-1, containers: [{name: c, image: coredns}]}\n",
			"both are host services"},
		{"no pods in the dump", hostServiceDump, "pods were not read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := cluster.ReadDump(strings.NewReader(tc.dump), cluster.Scope{})
			if err != nil {
				t.Fatal(err)
			}
			r := audit.Run(f, audit.Options{Resolver: rules.Default()})
			var conflict, support *audit.Finding
			for i, it := range r.Items {
				switch it.Check {
				case audit.CheckNodeConflict:
					conflict = &r.Items[i]
				case audit.CheckNodeSupport:
					if strings.Contains(it.Message, "host service") {
						support = &r.Items[i]
					}
				}
			}
			if conflict == nil || conflict.Severity != audit.Error || !strings.Contains(conflict.Message, "br-1") ||
				!strings.Contains(conflict.Message, tc.want) || !strings.Contains(conflict.Fix, "settings.kubelet-device-plugins.nvidia.enabled=false") {
				t.Errorf("node-conflict: %+v", conflict)
			}
			if support == nil || !strings.Contains(support.Fix, "gpu.nvidia.com DeviceClass") {
				t.Errorf("node-support: %+v", support)
			}
			if len(r.Pools) != 1 || r.Pools[0].Verdict != audit.Conflicting || !r.HasErrors() {
				t.Errorf("pools: %+v", r.Pools)
			}
		})
	}
}

// Karpenter pools: what Karpenter does with claim-only pods, from its
// controller pod when it was read.
func TestKarpenterPool(t *testing.T) {
	node := `apiVersion: v1
kind: Node
metadata: {name: kp-1, labels: {karpenter.sh/nodepool: gpu}}
status: {allocatable: {nvidia.com/gpu: "8"}}
`
	ctrl := func(env string) string {
		return `---
apiVersion: v1
kind: Pod
metadata: {name: karpenter-abc, namespace: kube-system, labels: {app.kubernetes.io/name: karpenter}}
spec:
  containers:
  - name: controller
    image: public.ecr.aws/karpenter/controller:1.14.1@sha256:0123
    env: ` + env + `
`
	}
	for _, tt := range []struct {
		name, dump string
		sev        audit.Severity
		want       string
	}{
		{"not seen", node, audit.Warning, "whose controller was not among the pods read"},
		{"default", node + ctrl("[]"), audit.Warning, "Karpenter 1.14.1 (pod kube-system/karpenter-abc) ignores DRA requests (IGNORE_DRA_REQUESTS unset, default true)"},
		{"true", node + ctrl(`[{name: IGNORE_DRA_REQUESTS, value: "true"}]`), audit.Warning, "(IGNORE_DRA_REQUESTS=true)"},
		{"false", node + ctrl(`[{name: IGNORE_DRA_REQUESTS, value: "false"}]`), audit.Info, "runs with IGNORE_DRA_REQUESTS=false"},
		{"from configmap", node + ctrl(`[{name: IGNORE_DRA_REQUESTS, valueFrom: {configMapKeyRef: {name: k, key: ignore}}}]`), audit.Warning, "from a ConfigMap or Secret"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := cluster.ReadDump(strings.NewReader(tt.dump), cluster.Scope{})
			if err != nil {
				t.Fatal(err)
			}
			f.ServerVersion, f.Problems = "v1.37.2", nil
			r := audit.Run(f, audit.Options{Resolver: rules.Default()})
			var got []string
			for _, it := range r.Items {
				if it.Check == audit.CheckNodeSupport && strings.Contains(it.Message, "arpenter") {
					got = append(got, string(it.Severity)+": "+it.Message)
					if it.Severity != tt.sev || !strings.Contains(it.Message, tt.want) || !strings.HasPrefix(it.Message, "pool gpu ") {
						t.Errorf("finding: %s: %s", it.Severity, it.Message)
					}
				}
			}
			if len(got) != 1 {
				t.Errorf("karpenter findings: %q", got)
			}
		})
	}
}
