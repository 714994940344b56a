package simulate

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rules"
)

// RuleCordoned is the rule id of a cordoned node of a cluster: simulate
// places pods on it anyway.
const RuleCordoned = "simulate/cordoned"

// ClusterNode is a node read from a cluster or a dump, as ClusterWorlds
// takes it: plain values, so that simulate needs no cluster client.
type ClusterNode struct {
	Name, Pool, InstanceType string
	Labels                   map[string]string
	Taints                   []corev1.Taint
	// Allocatable are the extended resources the node advertises (what
	// its device plugins do).
	Allocatable map[string]int64
	// Slices are the node's ResourceSlices, when they are known (a
	// dump's): its devices are on DRA already.
	Slices        []*resourceapi.ResourceSlice
	Unschedulable bool
}

// ClusterWorlds builds the worlds of a cluster's nodes, in their order:
// before is the nodes as they are (on device plugins, or on DRA when
// their ResourceSlices are given); after moves every node whose devices a
// DRA driver can publish (its ResourceSlices, else the built-in shape of
// its instance type) to DRA. A cordoned node is a diagnostic (RuleCordoned).
func ClusterWorlds(nodes []ClusterNode, target rules.Version, beforeClasses, afterClasses []*resourceapi.DeviceClass) (*World, *World, inventory.Diagnostics) {
	before := NewWorld("before", target, beforeClasses)
	after := NewWorld("after", target, afterClasses)
	var diags inventory.Diagnostics
	for _, n := range nodes {
		spec := n.spec()
		before.AddNode(spec)
		after.AddNode(n.moved(spec))
		if n.Unschedulable {
			diags = append(diags, inventory.Diagnostic{Severity: inventory.Info, Rule: RuleCordoned,
				Message: fmt.Sprintf("node %s is cordoned; simulate places pods on it anyway", n.Name)})
		}
	}
	return before, after, diags
}

// spec is the node as it is: on its device plugins, or on DRA when its
// ResourceSlices are known.
func (n ClusterNode) spec() NodeSpec {
	s := NodeSpec{Name: n.Name, Pool: n.Pool, Shape: n.InstanceType, Labels: n.Labels, Taints: n.Taints, Allocatable: n.Allocatable, Mode: ModePlugin}
	if len(n.Slices) > 0 {
		s.Mode, s.Slices = ModeDRA, n.Slices
	}
	return s
}

// moved is the node s after the move: a plugin node of a built-in shape
// gets the shape's DRA devices; on DRA, the device plugins of the
// families its drivers serve are gone.
func (n ClusterNode) moved(s NodeSpec) NodeSpec {
	if s.Mode == ModePlugin {
		if shape, ok := LookupShape(n.InstanceType); ok {
			s.Mode = ModeDRA
			s.Devices = shape.DRAView(PoolOptions{}).Devices
		}
	}
	if s.Mode == ModeDRA {
		s.Allocatable = withoutServed(s.Allocatable, s)
	}
	return s
}

// withoutServed drops the extended resources of the device families a
// DRA node's drivers serve: the device plugins are gone there.
func withoutServed(alloc map[string]int64, n NodeSpec) map[string]int64 {
	families := map[string]bool{}
	for d := range n.Devices {
		families[detect.FamilyOfDriver(d)] = true
	}
	for _, s := range n.Slices {
		families[detect.FamilyOfDriver(s.Spec.Driver)] = true
	}
	out := map[string]int64{}
	for r, v := range alloc {
		if f := detect.FamilyOfResource(r); f == "" || !families[f] {
			out[r] = v
		}
	}
	return out
}

// MergeClasses are the classes of base, replaced or joined by those of
// over (by name), sorted by name: the catalogue's classes with a dump's or
// the manifests' own.
func MergeClasses(base, over []*resourceapi.DeviceClass) []*resourceapi.DeviceClass {
	byName := map[string]*resourceapi.DeviceClass{}
	for _, c := range base {
		byName[c.Name] = c
	}
	for _, c := range over {
		byName[c.Name] = c
	}
	out := make([]*resourceapi.DeviceClass, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
