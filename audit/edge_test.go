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

// The node-conflict remediation fits the node image audit sees (issue 26):
// Bottlerocket's settings only on Bottlerocket, Auto Mode's runtime, GKE's
// node-pool label, AKS's GPU mode, and on AL2023, AL2, Ubuntu and COS (whose
// plugin and driver are pods) the DaemonSets' placement; a conflict with no
// pod on an image without host services says that something else
// registers the devices.
func TestNodeConflictFixPerImage(t *testing.T) {
	node := func(labels, osImage string) string {
		return `apiVersion: v1
kind: Node
metadata: {name: gpu-1, labels: {` + labels + `}}
status:
  allocatable: {nvidia.com/gpu: "4"}
  nodeInfo: {osImage: "` + osImage + `", kubeletVersion: v1.37.2}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-1-gpu}
spec: {driver: gpu.nvidia.com, nodeName: gpu-1, pool: {name: gpu-1, generation: 1, resourceSliceCount: 1}, devices: [{name: gpu-0}]}
`
	}
	// The plugin and the driver as pods on the node.
	pods := `---
apiVersion: v1
kind: Pod
metadata: {name: nvidia-device-plugin-x, namespace: kube-system}
spec: {nodeName: gpu-1, containers: [{name: p, image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0}]}
---
apiVersion: v1
kind: Pod
metadata: {name: nvidia-dra-driver-gpu-kubelet-plugin-x, namespace: nvidia-dra-driver-gpu}
spec: {nodeName: gpu-1, containers: [{name: p, image: nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0}]}
`
	other := "---\napiVersion: v1\nkind: Pod\nmetadata: {name: coredns, namespace: kube-system}\nspec: {nodeName: gpu-1, containers: [{name: c, image: coredns}]}\n"
	for _, tc := range []struct {
		name, dump string
		msg, fix   []string
		notFix     []string
		notMsg     []string
	}{
		{"AL2023 with pods", node("eks.amazonaws.com/nodegroup: gpu", "Amazon Linux 2023.6.20250115") + pods,
			[]string{"node image AL2023"}, []string{"DaemonSet off these nodes"}, []string{"Bottlerocket", "settings."}, nil},
		{"AL2 with pods", node("eks.amazonaws.com/nodegroup: gpu", "Amazon Linux 2") + pods,
			[]string{"node image AL2"}, []string{"nvidia.com/gpu.deploy.device-plugin=false"}, []string{"Bottlerocket"}, []string{"AL2023"}},
		{"AL2023, no pod for either", node("eks.amazonaws.com/nodegroup: gpu", "Amazon Linux 2023.6.20250115") + other,
			[]string{"runs neither as a host service"}, []string{"AL2023 runs no device plugin as a host service", "registers them"}, []string{"Bottlerocket"}, nil},
		{"Ubuntu with pods", node("", "Ubuntu 22.04.4 LTS") + pods,
			[]string{"node image Ubuntu"}, []string{"DaemonSet off these nodes"}, []string{"Bottlerocket", "GKE"}, nil},
		{"GKE COS with pods", node("cloud.google.com/gke-nodepool: gpu", "Container-Optimized OS from Google") + pods,
			[]string{"node image Container-Optimized OS"}, []string{"gke-no-default-nvidia-gpu-device-plugin=true", "gpu-driver-version=disabled"}, []string{"Bottlerocket"}, nil},
		{"EKS Auto Mode", node("eks.amazonaws.com/compute-type: auto", "Bottlerocket (EKS Auto, Standard) 2025.1.1") + other,
			[]string{"node image EKS Auto Mode"}, []string{"eks.amazonaws.com/compute-type NotIn [auto]"}, []string{"settings.kubelet"}, nil},
		{"Bottlerocket host services", node("eks.amazonaws.com/nodegroup: br", "Bottlerocket OS 1.50.0 (aws-k8s-1.37-nvidia)") + other,
			[]string{"both are host services"}, []string{"settings.kubelet-device-plugins.nvidia.enabled=false"}, nil, nil},
		{"AKS host services", node("kubernetes.azure.com/agentpool: gpu", "Ubuntu 22.04.5 LTS") + other,
			[]string{"both are host services"}, []string{"dra-driver-nvidia-gpu", "GPU mode"}, []string{"Bottlerocket"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := cluster.ReadDump(strings.NewReader(tc.dump), cluster.Scope{})
			if err != nil {
				t.Fatal(err)
			}
			r := audit.Run(f, audit.Options{Resolver: rules.Default()})
			var conflict *audit.Finding
			for i, it := range r.Items {
				if it.Check == audit.CheckNodeConflict {
					conflict = &r.Items[i]
				}
			}
			if conflict == nil || conflict.Severity != audit.Error || !strings.Contains(conflict.Message, "gpu-1") {
				t.Fatalf("node-conflict: %+v", conflict)
			}
			for _, w := range tc.msg {
				if !strings.Contains(conflict.Message, w) {
					t.Errorf("message %q lacks %q", conflict.Message, w)
				}
			}
			for _, w := range tc.fix {
				if !strings.Contains(conflict.Fix, w) {
					t.Errorf("fix %q lacks %q", conflict.Fix, w)
				}
			}
			for _, w := range tc.notMsg {
				if strings.Contains(conflict.Message, w) {
					t.Errorf("message %q names %q", conflict.Message, w)
				}
			}
			for _, w := range tc.notFix {
				if strings.Contains(conflict.Fix, w) {
					t.Errorf("fix %q names %q", conflict.Fix, w)
				}
			}
		})
	}
}
