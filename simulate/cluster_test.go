package simulate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// A cluster's nodes keep their allocatable before; after, a node of a
// built-in shape gets its devices and loses the plugins' resources of the
// families they serve, a node with ResourceSlices keeps them (and is on
// DRA before too), and a node of an unknown type stays on its plugins.
func TestClusterWorlds(t *testing.T) {
	slice := &resourceapi.ResourceSlice{}
	slice.Spec.Driver = "gpu.nvidia.com"
	slice.Spec.Devices = []resourceapi.Device{{Name: "gpu-0"}}
	gpus := map[string]int64{"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32, "example.com/widget": 1}
	nodes := []ClusterNode{
		{Name: "a", Pool: "p5", InstanceType: "p5.48xlarge", Allocatable: gpus, Unschedulable: true},
		{Name: "b", Pool: "dra", InstanceType: "unknown", Allocatable: map[string]int64{"nvidia.com/gpu": 1, "vpc.amazonaws.com/efa": 2},
			Slices: []*resourceapi.ResourceSlice{slice}},
		{Name: "c", Pool: "-", InstanceType: "unknown", Allocatable: map[string]int64{"nvidia.com/gpu": 4}},
	}
	before, after, diags := ClusterWorlds(nodes, rules.DefaultTarget, nil, nil)
	type node struct {
		Mode    Mode
		Alloc   map[string]int64
		Devices int
	}
	view := func(w *World) map[string]node {
		out := map[string]node{}
		for _, n := range w.Nodes {
			out[n.Name] = node{n.Mode, n.alloc, n.devices}
		}
		return out
	}
	wantBefore := map[string]node{
		"a": {ModePlugin, gpus, 0},
		"b": {ModeDRA, map[string]int64{"nvidia.com/gpu": 1, "vpc.amazonaws.com/efa": 2}, 1},
		"c": {ModePlugin, map[string]int64{"nvidia.com/gpu": 4}, 0},
	}
	if d := cmp.Diff(wantBefore, view(before)); d != "" {
		t.Errorf("before (-want +got):\n%s", d)
	}
	wantAfter := map[string]node{
		"a": {ModeDRA, map[string]int64{"example.com/widget": 1}, 8 + 32},
		"b": {ModeDRA, map[string]int64{"vpc.amazonaws.com/efa": 2}, 1},
		"c": {ModePlugin, map[string]int64{"nvidia.com/gpu": 4}, 0},
	}
	if d := cmp.Diff(wantAfter, view(after)); d != "" {
		t.Errorf("after (-want +got):\n%s", d)
	}
	// Devices per family, the plugin's and the driver's GPUs of node b
	// once: the same figures in both worlds.
	wantUsage := []FamilyUsage{{Family: "efa", Total: 2}, {Family: "nvidia", Total: 1}}
	for _, w := range []*World{before, after} {
		if d := cmp.Diff(wantUsage, w.Usage()["dra"]); d != "" {
			t.Errorf("%s usage of pool dra (-want +got):\n%s", w.Name, d)
		}
	}
	want := inventory.Diagnostics{{Severity: inventory.Info, Rule: RuleCordoned, Message: "node a is cordoned; simulate places pods on it anyway"}}
	if d := cmp.Diff(want, diags); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

// The classes over replace those of base with the same name and join the
// others, sorted by name.
func TestMergeClasses(t *testing.T) {
	class := func(name, expr string) *resourceapi.DeviceClass {
		c := &resourceapi.DeviceClass{}
		c.Name = name
		c.Spec.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}}
		return c
	}
	got := MergeClasses([]*resourceapi.DeviceClass{class("b", "base"), class("a", "base")}, []*resourceapi.DeviceClass{class("b", "over"), class("c", "over")})
	var names []string
	for _, c := range got {
		names = append(names, c.Name+"="+c.Spec.Selectors[0].CEL.Expression)
	}
	if d := cmp.Diff([]string{"a=base", "b=over", "c=over"}, names); d != "" {
		t.Errorf("classes (-want +got):\n%s", d)
	}
}
