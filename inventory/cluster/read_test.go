package cluster_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/cluster/clustertest"
)

const mixed = "../../testdata/cluster/mixed.yaml"

func readDumpFile(t *testing.T, path string) *cluster.Facts {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	facts, err := cluster.ReadDump(f, cluster.Scope{})
	if err != nil {
		t.Fatalf("ReadDump: %v", err)
	}
	return facts
}

// The live read of fakes seeded from a dump, the dump itself, and the dump
// the live read writes all give the same Facts.
func TestLiveDumpAgree(t *testing.T) {
	fakes, err := clustertest.Load(mixed)
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	r := fakes.Reader()
	r.Dump = &dump
	live, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fromFixture := readDumpFile(t, mixed)
	if d := cmp.Diff(clustertest.JSON(t, fromFixture), clustertest.JSON(t, live)); d != "" {
		t.Errorf("live read differs from the fixture dump (-dump +live):\n%s", d)
	}
	again, err := cluster.ReadDump(&dump, cluster.Scope{})
	if err != nil {
		t.Fatalf("reading our own dump: %v", err)
	}
	if d := cmp.Diff(clustertest.JSON(t, live), clustertest.JSON(t, again)); d != "" {
		t.Errorf("--from-dump differs from live (-live +dump):\n%s", d)
	}
}

func TestFacts(t *testing.T) {
	f := readDumpFile(t, mixed)
	var ds []string
	for _, d := range f.DaemonSets {
		ds = append(ds, string(d.Role)+":"+d.Family+":"+d.Namespace+"/"+d.Name)
	}
	want := []string{"dra-driver:nvidia:dra-driver-nvidia-gpu/dra-driver-nvidia-gpu-kubelet-plugin",
		"device-plugin:nvidia:kube-system/nvidia-device-plugin-daemonset"}
	if d := cmp.Diff(want, ds); d != "" {
		t.Errorf("DaemonSets (-want +got), CSI node plugin must not count:\n%s", d)
	}
	var pods []string
	for _, p := range f.PluginPods {
		pods = append(pods, string(p.Role)+":"+p.Family+":"+p.Name+"@"+p.Node)
	}
	want = []string{"dra-driver:nvidia:dra-driver-nvidia-gpu-kubelet-plugin-ccccc@gpu-dra-1",
		"device-plugin:nvidia:nvidia-device-plugin-daemonset-aaaaa@gpu-plugin-1",
		"device-plugin:nvidia:nvidia-device-plugin-daemonset-bbbbb@gpu-mixed-1",
		"device-plugin::legacy-plugin@cpu-1"}
	if d := cmp.Diff(want, pods); d != "" {
		t.Errorf("PluginPods (-want +got):\n%s", d)
	}
	var ws []string
	for _, w := range f.Workloads {
		ws = append(ws, w.Kind+":"+w.Namespace+"/"+w.Name+":"+w.Requests[0].Resource+"="+w.Requests[0].Quantity)
		if w.Name == "trainer" && (w.Pods != 2 || w.Template.NodeSelector["nvidia.com/gpu.product"] == "") {
			t.Errorf("trainer: pods=%d template=%+v", w.Pods, w.Template)
		}
		if w.Name == "served-by-dra" && w.DRABacked != 1 {
			t.Errorf("served-by-dra: DRABacked=%d", w.DRABacked)
		}
	}
	want = []string{"Deployment:ml/trainer:nvidia.com/gpu=2", "Pod:ml/served-by-dra:nvidia.com/gpu=1",
		"CronJob:neuron/compile:aws.amazon.com/neuroncore=2"}
	if d := cmp.Diff(want, ws); d != "" {
		t.Errorf("Workloads grouped by top-level owner (-want +got):\n%s", d)
	}
	pools := map[string]string{}
	for _, n := range f.Nodes {
		pools[n.Name] = n.PoolName() + "/" + n.Provider
	}
	wantPools := map[string]string{"cpu-1": "m7i.2xlarge/", "gpu-dra-1": "gpu-dra/eks", "gpu-mixed-1": "gpu-mixed/eks",
		"gpu-plugin-1": "gpu-plugin/eks", "trn-1": "trn/eks"}
	if d := cmp.Diff(wantPools, pools); d != "" {
		t.Errorf("pools (-want +got):\n%s", d)
	}
	if len(f.Quotas) != 2 {
		t.Errorf("quotas with device keys: got %d, want 2 (pods-only quota excluded)", len(f.Quotas))
	}
	if len(f.Operators) != 2 || len(f.DeviceClasses) != 3 || len(f.Slices) != 3 {
		t.Errorf("operators=%d classes=%d slice groups=%d", len(f.Operators), len(f.DeviceClasses), len(f.Slices))
	}
	if f.DeviceClasses[0].Name != "gpu-legacy" || f.DeviceClasses[0].Drivers[0] != "gpu.nvidia.com" {
		t.Errorf("class drivers from CEL: %+v", f.DeviceClasses[0])
	}
}

// A forbidden resource type is a Problem, not an error.
func TestForbiddenIsPartial(t *testing.T) {
	fakes, err := clustertest.Load(mixed)
	if err != nil {
		t.Fatal(err)
	}
	fakes.Client.PrependReactor("list", "resourcequotas", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "resourcequotas"}, "", nil)
	})
	fakes.Dynamic.PrependReactor("list", "resourceslices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceslices"}, "", nil)
	})
	r := fakes.Reader()
	var dump bytes.Buffer
	r.Dump = &dump
	f, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The dump's ClusterInfo keeps the problems as they were.
	again, err := cluster.ReadDump(&dump, cluster.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(f.Problems, again.Problems); d != "" {
		t.Errorf("problems read back from the dump (-live +dump):\n%s", d)
	}
	var got []string
	for _, p := range f.Problems {
		got = append(got, p.Resource)
		if want := "could not read " + p.Resource + ": forbidden"; !strings.HasPrefix(p.Message, want) || p.Rule != cluster.RuleUnreadable || p.Severity != inventory.Error {
			t.Errorf("%s: %+v, want an error %s with a message that starts %q", p.Resource, p, cluster.RuleUnreadable, want)
		}
	}
	if d := cmp.Diff([]string{"resourcequotas", "resourceslices.resource.k8s.io"}, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if !f.Missing("resourceslices") || f.Missing("nodes") || len(f.Nodes) != 5 {
		t.Errorf("Missing() or nodes wrong: %+v", f.Problems)
	}
}

// kubectl get ... -o yaml output is a kind: List; what it lacks is reported.
func TestKubectlList(t *testing.T) {
	in := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status:
    allocatable: {nvidia.com/gpu: "8"}
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: s}
  spec: {driver: gpu.nvidia.com, nodeName: n1, pool: {name: p, generation: 1, resourceSliceCount: 1}, devices: [{name: gpu-0}]}
`
	f, err := cluster.ReadDump(strings.NewReader(in), cluster.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 1 || f.Nodes[0].Allocatable["nvidia.com/gpu"] != "8" || len(f.Slices) != 1 {
		t.Fatalf("facts: %+v", f)
	}
	if d := cmp.Diff([]string{"v1"}, f.ResourceAPIVersions); d != "" {
		t.Errorf("served versions inferred from objects (-want +got):\n%s", d)
	}
	if !f.Missing("pods") || !f.Missing("resourcequotas") || f.Missing("nodes") {
		t.Errorf("problems: %+v", f.Problems)
	}
	for _, p := range f.Problems {
		if p.Rule != cluster.RuleNotInDump || p.Severity != inventory.Warning || p.Message != "could not read "+p.Resource+": "+cluster.NotInDump {
			t.Errorf("a type kubectl's output lacks: %+v", p)
		}
	}
}

// A ClusterInfo written before problems were diagnostics holds resource and
// reason: they read as the live read's problem.
func TestDumpLegacyProblems(t *testing.T) {
	in := `apiVersion: kubedra.dev/v1alpha1
kind: ClusterInfo
serverVersion: v1.37.2
resourceAPIVersions: [v1]
read: [nodes]
problems:
- {resource: pods, reason: "forbidden: pods is forbidden"}
`
	f, err := cluster.ReadDump(strings.NewReader(in), cluster.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	want := inventory.Diagnostics{cluster.Problem("pods", "forbidden: pods is forbidden")}
	if d := cmp.Diff(want, f.Problems); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}

func TestCanSchedule(t *testing.T) {
	node := &corev1.Node{}
	node.Name = "n"
	node.Labels = map[string]string{"gpu": "yes"}
	node.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "dra", Effect: corev1.TaintEffectNoSchedule},
		{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}}
	tol := []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "dra", Effect: corev1.TaintEffectNoSchedule}}
	affinity := func(op corev1.NodeSelectorOperator, vals ...string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "gpu", Operator: op, Values: vals}}}}}}}
	}
	byName := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n"}}}}}}}}
	tests := []struct {
		name string
		p    cluster.Placement
		want bool
	}{
		{"untolerated taint", cluster.Placement{}, false},
		{"tolerated", cluster.Placement{Tolerations: tol}, true},
		{"selector match", cluster.Placement{NodeSelector: map[string]string{"gpu": "yes"}, Tolerations: tol}, true},
		{"selector mismatch", cluster.Placement{NodeSelector: map[string]string{"gpu": "no"}, Tolerations: tol}, false},
		{"affinity In", cluster.Placement{Affinity: affinity(corev1.NodeSelectorOpIn, "yes"), Tolerations: tol}, true},
		{"affinity NotIn", cluster.Placement{Affinity: affinity(corev1.NodeSelectorOpNotIn, "yes"), Tolerations: tol}, false},
		{"affinity DoesNotExist", cluster.Placement{Affinity: affinity(corev1.NodeSelectorOpDoesNotExist), Tolerations: tol}, false},
		{"matchFields metadata.name", cluster.Placement{Affinity: byName, Tolerations: tol}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, why := cluster.CanSchedule(tt.p, node); got != tt.want {
				t.Errorf("CanSchedule = %v (%s), want %v", got, why, tt.want)
			}
		})
	}
	// The DaemonSet controller's own tolerations let daemons onto cordoned nodes.
	cordoned := node.DeepCopy()
	cordoned.Spec.Taints = []corev1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}}
	if ok, _ := cluster.CanSchedule(cluster.Placement{}, cordoned); ok {
		t.Error("a plain pod must not land on a cordoned node")
	}
	if ok, why := cluster.DaemonSetCanSchedule(cluster.Placement{}, cordoned); !ok {
		t.Errorf("a daemon pod lands on a cordoned node: %s", why)
	}
}

func TestClassifyPod(t *testing.T) {
	tests := []struct {
		name, image, dsName string
		labels              map[string]string
		hostPaths           []string
		want                string
	}{
		{name: "nvidia by image", image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", want: "device-plugin:nvidia"},
		{name: "neuron by label", image: "x", labels: map[string]string{"name": "neuron-device-plugin-ds"}, want: "device-plugin:neuron"},
		{name: "efa helm label", image: "x", labels: map[string]string{"app.kubernetes.io/name": "aws-efa-k8s-device-plugin"}, want: "device-plugin:efa"},
		{name: "amd by name", image: "x", dsName: "amdgpu-device-plugin-daemonset", want: "device-plugin:amd"},
		{name: "unknown plugin by hostPath", image: "x", hostPaths: []string{"/var/lib/kubelet/device-plugins"}, want: "device-plugin:"},
		{name: "nvidia DRA driver by image", image: "nvcr.io/nvidia/k8s-dra-driver-gpu:v25.8.0", want: "dra-driver:nvidia"},
		{name: "dranet", image: "registry.k8s.io/networking/dranet:v1.0.0", want: "dra-driver:efa"},
		{name: "unknown DRA driver by name and hostPath", image: "x", dsName: "acme-dra-kubelet-plugin", hostPaths: []string{"/var/lib/kubelet/plugins_registry"}, want: "dra-driver:"},
		{name: "CSI node plugin", image: "ebs-csi-driver", dsName: "ebs-csi-node", hostPaths: []string{"/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins"}, want: ""},
		{name: "plain pod", image: "nginx", want: ""},
		{name: "GFD from the plugin image", image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0", dsName: "nvdp-nvidia-device-plugin-gpu-feature-discovery",
			labels: map[string]string{"app.kubernetes.io/name": "nvidia-device-plugin"}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := &corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: tt.image}}}
			for _, p := range tt.hostPaths {
				spec.Volumes = append(spec.Volumes, corev1.Volume{Name: "v", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: p}}})
			}
			c, ok := cluster.ClassifyPod(spec, tt.labels, tt.dsName)
			got := ""
			if ok {
				got = string(c.Role) + ":" + c.Family
			}
			if got != tt.want {
				t.Errorf("got %q (%s), want %q", got, c.Evidence, tt.want)
			}
		})
	}
}

// -n scopes workloads, not plugins: device-plugin and driver pods of other
// namespaces are read too, and when that is forbidden the facts say so.
func TestNamespaceReadsPluginsClusterWide(t *testing.T) {
	fakes, err := clustertest.Load(mixed)
	if err != nil {
		t.Fatal(err)
	}
	all := readDumpFile(t, mixed)
	r := fakes.Reader()
	r.Namespace = "ml"
	var dump bytes.Buffer
	r.Dump = &dump
	f, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(clustertest.JSON(t, all.PluginPods), clustertest.JSON(t, f.PluginPods)); d != "" {
		t.Errorf("plugin pods with -n ml (-all namespaces +ml):\n%s", d)
	}
	if f.PluginPodsScope != "" {
		t.Errorf("PluginPodsScope = %q", f.PluginPodsScope)
	}
	again, err := cluster.ReadDump(&dump, cluster.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(clustertest.JSON(t, f), clustertest.JSON(t, again)); d != "" {
		t.Errorf("dump of a -n read differs (-live +dump):\n%s", d)
	}

	fakes, _ = clustertest.Load(mixed)
	fakes.Client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() != "ml" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
		}
		return false, nil, nil
	})
	r = fakes.Reader()
	r.Namespace = "ml"
	f, err = r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(f.PluginPodsScope, "namespace ml only (listing pods in all namespaces: forbidden") || !strings.Contains(f.PluginPodsScope, "in namespace kube-system: forbidden") {
		t.Errorf("PluginPodsScope = %q", f.PluginPodsScope)
	}
}
