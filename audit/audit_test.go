package audit_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/cluster/clustertest"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rules"
)

// factsFromFakes reads a testdata/cluster file through the live Reader on
// client-go fakes seeded from it.
func factsFromFakes(t *testing.T, name string) *cluster.Facts {
	t.Helper()
	fakes, err := clustertest.Load("../testdata/cluster/" + name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fakes.Reader().Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// fired lists, per check, "severity objects" of each finding.
func fired(r *audit.Report) map[string][]string {
	out := map[string][]string{}
	for _, it := range r.Items {
		var objs []string
		for _, o := range it.Objects {
			objs = append(objs, o.String())
		}
		out[it.Check] = append(out[it.Check], string(it.Severity)+" "+strings.Join(objs, ","))
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// Every check fires on exactly the objects it should in the mixed cluster.
func TestMixedCluster(t *testing.T) {
	r := audit.Run(factsFromFakes(t, "mixed.yaml"), audit.Options{Resolver: rules.Default()})
	want := map[string][]string{
		audit.CheckAPIReadiness: {"info "},
		audit.CheckNodeConflict: {"error Node/gpu-mixed-1"},
		audit.CheckDaemonSetOverlap: {"error DaemonSet/kube-system/nvidia-device-plugin-daemonset," +
			"DaemonSet/dra-driver-nvidia-gpu/dra-driver-nvidia-gpu-kubelet-plugin,Node/gpu-mixed-1"},
		audit.CheckClassNameClash:   {"warning DeviceClass/gpu-legacy,DeviceClass/gpu.nvidia.com"},
		audit.CheckPluginAdvertises: {"warning Node/gpu-mixed-1,Node/gpu-plugin-1"},
		audit.CheckNodeSupport:      {"error Node/trn-1", "warning Node/trn-1", "warning Node/trn-1"},
		audit.CheckGPUOperatorMode:  {"error ClusterPolicy/cluster-policy,GPUCluster/default"},
		audit.CheckQuotaCounting:    {"warning ResourceQuota/ml/gpus", "warning ResourceQuota/neuron/neuron"},
		audit.CheckStaleNodeLabels:  {"info Node/gpu-dra-1", "warning Node/gpu-dra-1"},
		audit.CheckPluginWorkloads:  {"info Deployment/ml/trainer", "warning CronJob/neuron/compile"},
	}
	if d := cmp.Diff(want, fired(r)); d != "" {
		t.Errorf("findings per check (-want +got):\n%s", d)
	}
	verdicts := map[string]audit.Verdict{}
	for _, p := range r.Pools {
		verdicts[p.Name] = p.Verdict
	}
	wantVerdicts := map[string]audit.Verdict{"gpu-dra": audit.Blocked, "gpu-mixed": audit.Conflicting,
		"gpu-plugin": audit.Blocked, "m7i.2xlarge": audit.Ready, "trn": audit.Blocked}
	if d := cmp.Diff(wantVerdicts, verdicts); d != "" {
		t.Errorf("pool verdicts (-want +got):\n%s", d)
	}
	if !r.HasErrors() {
		t.Error("HasErrors() = false")
	}
	// The stale-label check must not call the label the driver DaemonSet
	// selects on stale, and must name the GFD label; the device taint is
	// not stale on a DRA node (NVIDIA's chart and demos tolerate it) but
	// claim-only pods must tolerate it themselves.
	for _, it := range r.Items {
		if it.Check == audit.CheckStaleNodeLabels && it.Severity == audit.Warning {
			if strings.Contains(it.Message, "nvidia.com/dra") || !strings.Contains(it.Message, "nvidia.com/gpu.product") ||
				strings.Contains(it.Message, "taint") {
				t.Errorf("stale labels: %s", it.Message)
			}
		}
		if it.Check == audit.CheckStaleNodeLabels && it.Severity == audit.Info {
			if !strings.Contains(it.Message, "keep the taint nvidia.com/gpu:NoSchedule") || !strings.Contains(it.Fix, "kubedra migrate keeps existing tolerations") {
				t.Errorf("device taint: %s / %s", it.Message, it.Fix)
			}
		}
		if it.Check == audit.CheckClassNameClash && !strings.Contains(it.Message, "uses gpu.nvidia.com") {
			t.Errorf("clash winner must be the newest class: %s", it.Message)
		}
	}
	wg := r.Workloads
	if len(wg) != 2 || wg[0].Status != rules.Mappable || wg[0].Pods != 2 || wg[1].Status != rules.Lossy {
		t.Errorf("workload groups: %+v", wg)
	}
}

// A cluster ready for cutover: nothing above info, every pool ready.
func TestCleanCluster(t *testing.T) {
	r := audit.Run(factsFromFakes(t, "clean.yaml"), audit.Options{Resolver: rules.Default()})
	for _, it := range r.Items {
		if it.Severity != audit.Info {
			t.Errorf("unexpected %s %s: %s", it.Severity, it.Check, it.Message)
		}
	}
	for _, p := range r.Pools {
		if p.Verdict != audit.Ready {
			t.Errorf("pool %s: %s %v", p.Name, p.Verdict, p.Checks)
		}
	}
	for _, c := range r.Checks {
		if c.Result != audit.Pass {
			t.Errorf("check %s: %s", c.ID, c.Result)
		}
	}
}

func TestAPIReadiness(t *testing.T) {
	tests := []struct {
		name    string
		version string
		served  []string
		want    []string
	}{
		{"not served", "v1.37.2", nil, []string{"error"}},
		{"alpha only", "v1.31.4", []string{"v1alpha3"}, []string{"error", "info"}},
		{"no v1 on 1.34", "v1.34.1", []string{"v1beta1"}, []string{"error", "info"}},
		{"beta on 1.33", "v1.33.5-eks-1", []string{"v1beta2", "v1beta1"}, []string{"info", "warning"}},
		{"1.35 without KEP-5004 default", "v1.35.0", []string{"v1"}, []string{"info"}},
		{"1.37 ready", "v1.37.2", []string{"v1"}, nil},
		{"unknown version", "", []string{"v1"}, []string{"info"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := audit.Run(&cluster.Facts{ServerVersion: tt.version, ResourceAPIVersions: tt.served}, audit.Options{})
			var got []string
			for _, it := range r.Items {
				if it.Check == audit.CheckAPIReadiness {
					got = append(got, string(it.Severity))
				}
			}
			slices.Sort(got)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// A check whose input could not be read is skipped, not passed.
func TestSkippedOnProblem(t *testing.T) {
	f := factsFromFakes(t, "mixed.yaml")
	f.Problems = append(f.Problems, cluster.Problem("resourcequotas", "forbidden"))
	r := audit.Run(f, audit.Options{})
	for _, c := range r.Checks {
		if c.ID == audit.CheckQuotaCounting && (c.Result != audit.Skipped || !strings.Contains(c.Reason, "resourcequotas")) {
			t.Errorf("quota check: %+v", c)
		}
	}
	if !r.Partial() || len(r.Problems) != 1 {
		t.Errorf("report must be partial: %+v", r.Problems)
	}
}

// Node nuances from dra.md §7, one node each.
func TestNodeSupport(t *testing.T) {
	node := func(name string, labels map[string]string, os, kubelet string) cluster.Node {
		n := cluster.Node{Name: name, Labels: labels, OSImage: os, KubeletVersion: kubelet, Pool: name}
		return n
	}
	tests := []struct {
		name     string
		server   string
		node     cluster.Node
		provider string
		driver   string
		plugin   string
		want     []string
	}{
		{"auto mode before 1.36 with DRA", "v1.35.0", node("a", map[string]string{"eks.amazonaws.com/compute-type": "auto"}, "", "v1.35.0"), "eks", "gpu.nvidia.com", "", []string{"error"}},
		{"auto mode before 1.36 with plugin", "v1.35.0", node("a", map[string]string{"eks.amazonaws.com/compute-type": "auto"}, "", "v1.35.0"), "eks", "", "nvidia.com/gpu", []string{"warning"}},
		{"auto mode 1.36 neuron DRA", "v1.36.0", node("a", map[string]string{"eks.amazonaws.com/compute-type": "auto"}, "", "v1.36.0"), "eks", "neuron.aws.com", "", []string{"error"}},
		{"gke DRA without plugin opt-out", "v1.37.0", node("g", nil, "", "v1.37.0"), "gke", "gpu.nvidia.com", "", []string{"error"}},
		{"old kubelet with DRA", "v1.37.0", node("o", nil, "", "v1.33.1"), "", "gpu.nvidia.com", "", []string{"warning"}},
		{"plain plugin node", "v1.37.0", node("p", nil, "", "v1.37.0"), "", "", "nvidia.com/gpu", nil},
		{"cpu node with Karpenter", "v1.37.0", node("c", map[string]string{"karpenter.sh/nodepool": "x"}, "", "v1.37.0"), "", "", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.node
			n.Provider = tt.provider
			n.EKSAutoMode = n.Labels["eks.amazonaws.com/compute-type"] == "auto"
			_, n.Karpenter = n.Labels["karpenter.sh/nodepool"]
			f := &cluster.Facts{ServerVersion: tt.server, ResourceAPIVersions: []string{"v1"}, Nodes: []cluster.Node{n}}
			if tt.driver != "" {
				f.Slices = []cluster.SliceGroup{{Node: n.Name, Driver: tt.driver, Family: detect.FamilyOfDriver(tt.driver), Slices: 1, Devices: 1}}
			}
			if tt.plugin != "" {
				f.Nodes[0].Allocatable = map[string]string{tt.plugin: "1"}
			}
			r := audit.Run(f, audit.Options{})
			var got []string
			for _, it := range r.Items {
				if it.Check == audit.CheckNodeSupport {
					got = append(got, string(it.Severity))
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }

// The clean cluster's plugin DaemonSet is unknown to the signatures; its
// family comes from the nodes it serves, and moving the driver onto the
// plugin pool makes the overlap check fire.
func TestOverlapInferredFamily(t *testing.T) {
	f := factsFromFakes(t, "clean.yaml")
	for i := range f.DaemonSets {
		if f.DaemonSets[i].Role == cluster.DRADriver {
			f.DaemonSets[i].Placement.Affinity = nil
		}
	}
	r := audit.Run(f, audit.Options{})
	got := fired(r)[audit.CheckDaemonSetOverlap]
	want := []string{"error DaemonSet/kube-system/example-device-plugin,DaemonSet/dra-example-driver/dra-example-driver-kubeletplugin,Node/plugin-1"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// A pod template the source could not convert is a finding, never a
// silent "mapping status unknown".
func TestWorkloadDocumentError(t *testing.T) {
	w := cluster.Workload{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ml", Name: "trainer", Pods: 1,
		Requests:      []cluster.Request{{Container: "cuda", Resource: "nvidia.com/gpu", Quantity: "1"}},
		DocumentError: "pod template of Deployment ml/trainer: boom"}
	r := audit.Run(&cluster.Facts{ServerVersion: "v1.37.2", ResourceAPIVersions: []string{"v1"}, Workloads: []cluster.Workload{w}},
		audit.Options{Resolver: rules.Default()})
	got := fired(r)[audit.CheckPluginWorkloads]
	want := []string{"info Deployment/ml/trainer", "warning Deployment/ml/trainer"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("plugin-workloads findings (-want +got):\n%s", d)
	}
	if !slices.ContainsFunc(r.Items, func(f audit.Finding) bool { return strings.Contains(f.Message, "boom") }) {
		t.Errorf("the conversion error is not reported: %+v", r.Items)
	}
}
