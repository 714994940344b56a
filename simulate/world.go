package simulate

import (
	"context"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rules"
)

// Node is one node in one world.
type Node struct {
	Name  string
	Pool  string
	Shape string
	Mode  Mode
	obj   *corev1.Node
	// alloc and used are the extended resources the device plugins
	// advertise and what the placed pods took.
	alloc, used map[string]int64
	slices      []*resourceapi.ResourceSlice
	devices     int
	shareable   bool
	state       structured.AllocatedState
	exclusive   int
	// match caches the devices each class and selectors match.
	match map[string][]structured.DeviceID
}

// NodeSpec describes a node to add to a world.
type NodeSpec struct {
	Name, Pool, Shape string
	Mode              Mode
	Labels            map[string]string
	Taints            []corev1.Taint
	// Allocatable are the extended resources advertised (plugin mode, or
	// resources no DRA driver serves).
	Allocatable map[string]int64
	// Devices per driver (DRA mode), published as one ResourceSlice per
	// driver; Slices, when set, are used as read instead.
	Devices map[string][]resourceapi.Device
	Slices  []*resourceapi.ResourceSlice
}

// World is a cluster in one state: nodes in input order, DeviceClasses,
// and what the placed pods hold.
type World struct {
	Name     string
	Nodes    []*Node
	classes  classes
	features structured.Features
	cache    *dracel.Cache
	// shared are ResourceClaims (namespace/name) allocated by an earlier
	// pod, with the node their devices are on.
	shared map[string]*Node
	// extended maps an extended resource name to the DeviceClass that
	// serves it on DRA nodes (DRAExtendedResource), when the target has it.
	extended map[string]string
	pools    []string
	matches  map[sliceKey][]int
	// journal, when set, records each pod placed, so that a group that
	// does not fit whole gives back what it took.
	journal *[]placement
}

// placement is what one pod took on a node.
type placement struct {
	node     *Node
	results  []resourceapi.AllocationResult
	devices  []structured.DeviceID
	requests map[string]int64
	shared   []string
}

// undo gives back what the placements took, last first.
func (w *World) undo(ps []placement) {
	for i := len(ps) - 1; i >= 0; i-- {
		p, n := ps[i], ps[i].node
		for _, id := range p.devices {
			n.state.AllocatedDevices.Delete(id)
			n.exclusive--
		}
		for _, r := range p.results {
			for _, d := range r.Devices.Results {
				if d.ShareID == nil {
					continue
				}
				id := structured.MakeDeviceID(d.Driver, d.Pool, d.Device)
				n.state.AllocatedSharedDeviceIDs.Delete(structured.MakeSharedDeviceID(id, d.ShareID))
				if d.ConsumedCapacity != nil {
					n.state.AggregatedCapacity.Remove(structured.NewDeviceConsumedCapacity(id, d.ConsumedCapacity))
				}
			}
		}
		for r, q := range p.requests {
			if _, ok := n.alloc[r]; ok {
				n.used[r] -= q
			}
		}
		for _, k := range p.shared {
			delete(w.shared, k)
		}
	}
}

type classes map[string]*resourceapi.DeviceClass

func (c classes) List() ([]*resourceapi.DeviceClass, error) {
	out := make([]*resourceapi.DeviceClass, 0, len(c))
	for _, v := range c {
		out = append(out, v)
	}
	return out, nil
}

func (c classes) Get(name string) (*resourceapi.DeviceClass, error) {
	if v, ok := c[name]; ok {
		return v, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "resource.k8s.io", Resource: "deviceclasses"}, name)
}

// Features returns the allocator features on by default in a Kubernetes
// release (shared/reference/dra.md §4).
func Features(v rules.Version) structured.Features {
	at := func(minor int) bool { return v.AtLeast(rules.Version{Major: 1, Minor: minor}) }
	return structured.Features{
		AdminAccess:             at(34),
		PrioritizedList:         at(34),
		PartitionableDevices:    at(36),
		ConsumableCapacity:      at(36),
		DeviceTaints:            at(36),
		DeviceBindingAndStatus:  at(36),
		FractionalCapacityRange: at(38),
	}
}

// NewWorld makes an empty world for a target version, with the given
// DeviceClasses.
func NewWorld(name string, target rules.Version, dcs []*resourceapi.DeviceClass) *World {
	f := Features(target)
	w := &World{Name: name, classes: classes{}, features: f, shared: map[string]*Node{}, extended: map[string]string{}, matches: map[sliceKey][]int{},
		cache: dracel.NewCache(1000, dracel.Features{EnableConsumableCapacity: f.ConsumableCapacity})}
	for _, dc := range dcs {
		w.classes[dc.Name] = dc
	}
	if target.AtLeast(rules.Version{Major: 1, Minor: 36}) {
		for _, dc := range dcs {
			if n := dc.Spec.ExtendedResourceName; n != nil && *n != "" {
				w.extended[*n] = dc.Name
			}
			w.extended["deviceclass.resource.kubernetes.io/"+dc.Name] = dc.Name
		}
	}
	return w
}

// AddNode adds a node to the world.
func (w *World) AddNode(s NodeSpec) {
	n := &Node{Name: s.Name, Pool: s.Pool, Shape: s.Shape, Mode: s.Mode, alloc: s.Allocatable, used: map[string]int64{}, state: newState()}
	if n.alloc == nil {
		n.alloc = map[string]int64{}
	}
	n.obj = &corev1.Node{}
	n.obj.Name = s.Name
	n.obj.Labels = map[string]string{corev1.LabelHostname: s.Name}
	for k, v := range s.Labels {
		n.obj.Labels[k] = v
	}
	n.obj.Spec.Taints = s.Taints
	n.slices = s.Slices
	if n.slices == nil {
		drivers := make([]string, 0, len(s.Devices))
		for d := range s.Devices {
			drivers = append(drivers, d)
		}
		sort.Strings(drivers)
		for _, d := range drivers {
			sl := &resourceapi.ResourceSlice{}
			sl.Name = s.Name + "-" + strings.ReplaceAll(d, ".", "-")
			sl.Spec = resourceapi.ResourceSliceSpec{Driver: d, NodeName: &n.obj.Name,
				Pool: resourceapi.ResourcePool{Name: s.Name, Generation: 1, ResourceSliceCount: 1}, Devices: s.Devices[d]}
			n.slices = append(n.slices, sl)
		}
	}
	for _, sl := range n.slices {
		n.devices += len(sl.Spec.Devices)
		for _, d := range sl.Spec.Devices {
			if d.AllowMultipleAllocations != nil && *d.AllowMultipleAllocations {
				n.shareable = true
			}
		}
	}
	w.Nodes = append(w.Nodes, n)
	if len(w.pools) == 0 || w.pools[len(w.pools)-1] != s.Pool {
		if !containsString(w.pools, s.Pool) {
			w.pools = append(w.pools, s.Pool)
		}
	}
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// Pools lists the pools in the order their first node was added.
func (w *World) Pools() []string { return w.pools }

// FamilyUsage is the devices of one family (nvidia, efa, neuron, tpu,
// ...; inventory/detect's families, else the resource or driver name) on a
// pool in one world: in use by the placed pods, and in total. Plugin nodes
// count extended-resource units, DRA nodes published devices; a node that
// has both for a family counts them once (the larger).
type FamilyUsage struct {
	Family string `json:"family"`
	Used   int64  `json:"used"`
	Total  int64  `json:"total"`
}

// Usage sums the pools' devices per family, families in name order.
func (w *World) Usage() map[string][]FamilyUsage {
	sums := map[string]map[string]*FamilyUsage{}
	for _, n := range w.Nodes {
		pool := sums[n.Pool]
		if pool == nil {
			pool = map[string]*FamilyUsage{}
			sums[n.Pool] = pool
		}
		plugin, dra := map[string]*FamilyUsage{}, map[string]*FamilyUsage{}
		add := func(m map[string]*FamilyUsage, f string, used, total int64) {
			if m[f] == nil {
				m[f] = &FamilyUsage{Family: f}
			}
			m[f].Used += used
			m[f].Total += total
		}
		for r, v := range n.alloc {
			if deviceResource(r) && !alias(r, n.alloc) {
				add(plugin, familyOf(detect.FamilyOfResource(r), r), n.used[r], v)
			}
		}
		for _, sl := range n.slices {
			add(dra, familyOf(detect.FamilyOfDriver(sl.Spec.Driver), sl.Spec.Driver), 0, int64(len(sl.Spec.Devices)))
		}
		for id := range n.state.AllocatedDevices {
			add(dra, familyOf(detect.FamilyOfDriver(id.Driver.String()), id.Driver.String()), 1, 0)
		}
		for id := range n.state.AllocatedSharedDeviceIDs {
			add(dra, familyOf(detect.FamilyOfDriver(id.Driver.String()), id.Driver.String()), 1, 0)
		}
		for f, d := range dra {
			if p := plugin[f]; p != nil {
				d.Used += p.Used
				d.Total = max(d.Total, p.Total)
				d.Used = min(d.Used, d.Total)
			}
			add(pool, f, d.Used, d.Total)
		}
		for f, p := range plugin {
			if dra[f] == nil {
				add(pool, f, p.Used, p.Total)
			}
		}
	}
	out := map[string][]FamilyUsage{}
	for name, fams := range sums {
		l := []FamilyUsage{}
		for _, u := range fams {
			l = append(l, *u)
		}
		sort.Slice(l, func(i, j int) bool { return l[i].Family < l[j].Family })
		out[name] = l
	}
	return out
}

// familyOf is a device family, or the name it comes from when unknown.
func familyOf(family, name string) string {
	if family == "" {
		return name
	}
	return family
}

// alias reports whether r counts devices another resource of the node
// already counts (the Neuron plugin's neurondevice and neuroncore).
func alias(r string, alloc map[string]int64) bool {
	if r == "aws.amazon.com/neurondevice" || r == "aws.amazon.com/neuroncore" {
		_, ok := alloc["aws.amazon.com/neuron"]
		return ok
	}
	return false
}

// deviceResource reports whether an extended resource counts as a device
// (not hugepages or the like).
func deviceResource(name string) bool {
	return strings.Contains(name, "/") && !strings.HasPrefix(name, "hugepages-") && !strings.HasPrefix(name, "kubernetes.io/")
}

func newState() structured.AllocatedState {
	return structured.AllocatedState{AllocatedDevices: sets.New[structured.DeviceID](),
		AllocatedSharedDeviceIDs: sets.New[structured.SharedDeviceID](), AggregatedCapacity: structured.NewConsumedCapacityCollection()}
}

// allocator builds the DRA allocator for one node with its current state.
func (w *World) allocator(ctx context.Context, n *Node) (structured.Allocator, error) {
	return structured.NewAllocator(ctx, w.features, n.state, w.classes, n.slices, w.cache)
}

// commit records the allocations of a pod on n and returns the devices it
// took that were free.
func (n *Node) commit(results []resourceapi.AllocationResult) (taken []structured.DeviceID) {
	for _, r := range results {
		for _, d := range r.Devices.Results {
			id := structured.MakeDeviceID(d.Driver, d.Pool, d.Device)
			if d.ShareID != nil {
				n.state.AllocatedSharedDeviceIDs.Insert(structured.MakeSharedDeviceID(id, d.ShareID))
				if d.ConsumedCapacity != nil {
					n.state.AggregatedCapacity.Insert(structured.NewDeviceConsumedCapacity(id, d.ConsumedCapacity))
				}
				continue
			}
			if !n.state.AllocatedDevices.Has(id) {
				n.state.AllocatedDevices.Insert(id)
				n.exclusive++
				taken = append(taken, id)
			}
		}
	}
	return taken
}

// Objects returns the world's nodes as Kubernetes Nodes (labels, taints,
// the extended resources in status capacity and allocatable) and their
// ResourceSlices: what a test cluster (kwok, an e2e control plane) needs
// to reproduce the world.
func (w *World) Objects() ([]*corev1.Node, []*resourceapi.ResourceSlice) {
	var nodes []*corev1.Node
	var slices []*resourceapi.ResourceSlice
	for _, n := range w.Nodes {
		o := n.obj.DeepCopy()
		o.APIVersion, o.Kind = "v1", "Node"
		rl := corev1.ResourceList{}
		for r, v := range n.alloc {
			rl[corev1.ResourceName(r)] = *resource.NewQuantity(v, resource.DecimalSI)
		}
		if len(rl) > 0 {
			o.Status.Capacity, o.Status.Allocatable = rl, rl.DeepCopy()
		}
		nodes = append(nodes, o)
		for _, s := range n.slices {
			c := s.DeepCopy()
			c.APIVersion, c.Kind = "resource.k8s.io/v1", "ResourceSlice"
			slices = append(slices, c)
		}
	}
	return nodes, slices
}
