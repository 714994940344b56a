package simulate

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	dracel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/klog/v2"

	"github.com/kubedra/kubedra/inventory/detect"
)

// MaxDevicesPerClaim is the most devices one claim may hold
// (resource.k8s.io/v1 AllocationResultsMaxSize).
const MaxDevicesPerClaim = resourceapi.AllocationResultsMaxSize

// pod is a pod template resolved against one world's manifests: what one
// of its pods asks for.
type pod struct {
	tpl *Template
	// requests are the effective extended-resource requests (the
	// Kubernetes formula for init containers and sidecars).
	requests map[string]int64
	affinity nodeaffinity.RequiredNodeAffinity
	tol      []corev1.Toleration
	// claims are made from templates, one set per pod; shared are
	// ResourceClaims by namespace/name.
	claims []*resourceapi.ResourceClaim
	shared []sharedClaim
	// problems keep the pod off every node, whatever the node.
	problems []string
	// devices is the fewest devices the claims can take.
	devices int
}

type sharedClaim struct {
	key   string
	claim *resourceapi.ResourceClaim
}

var effectiveOpts = resourcehelper.PodResourcesOptions{SkipPodLevelResources: true}

// newPod resolves t's claims against m.
func newPod(t *Template, m *Manifests) *pod {
	p := &pod{tpl: t, requests: map[string]int64{}, tol: t.Spec.Tolerations}
	for r, q := range resourcehelper.PodRequests(&corev1.Pod{Spec: *defaultRequests(t.Spec)}, effectiveOpts) {
		if detect.IsExtendedResource(string(r)) && q.Value() > 0 {
			p.requests[string(r)] = q.Value()
		}
	}
	p.affinity = nodeaffinity.NewRequiredNodeAffinity(t.Spec.NodeSelector, t.Spec.Affinity)
	for i, rc := range t.Spec.ResourceClaims {
		switch {
		case rc.ResourceClaimTemplateName != nil:
			key := nsName(t.Namespace, *rc.ResourceClaimTemplateName)
			rct, ok := m.ClaimTemplates[key]
			if !ok {
				p.problems = append(p.problems, fmt.Sprintf("ResourceClaimTemplate %s (claim %s) does not exist", key, rc.Name))
				continue
			}
			c := &resourceapi.ResourceClaim{Spec: *rct.Spec.Spec.DeepCopy()}
			defaultClaim(c)
			c.Name, c.Namespace = t.Name+"-"+rc.Name, t.Namespace
			c.UID = types.UID(fmt.Sprintf("%s-%d", t.Key, i))
			p.claims = append(p.claims, c)
			p.checkClaim(c, "claim "+rc.Name+" (template "+*rc.ResourceClaimTemplateName+")")
		case rc.ResourceClaimName != nil:
			key := nsName(t.Namespace, *rc.ResourceClaimName)
			c, ok := m.Claims[key]
			if !ok {
				p.problems = append(p.problems, fmt.Sprintf("ResourceClaim %s does not exist", key))
				continue
			}
			c = c.DeepCopy()
			defaultClaim(c)
			c.UID = types.UID("claim-" + key)
			p.shared = append(p.shared, sharedClaim{key: key, claim: c})
			p.checkClaim(c, "ResourceClaim "+key)
		}
	}
	return p
}

// defaultRequests copies spec with the API server's defaulting of
// requests: a limit without a request is the request too.
func defaultRequests(spec *corev1.PodSpec) *corev1.PodSpec {
	s := spec.DeepCopy()
	for _, list := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range list {
			r := &list[i].Resources
			for name, q := range r.Limits {
				if _, ok := r.Requests[name]; !ok {
					if r.Requests == nil {
						r.Requests = corev1.ResourceList{}
					}
					r.Requests[name] = q
				}
			}
		}
	}
	return s
}

// defaultClaim applies the API server's defaults: allocation mode
// ExactCount and count 1.
func defaultClaim(c *resourceapi.ResourceClaim) {
	for i := range c.Spec.Devices.Requests {
		r := &c.Spec.Devices.Requests[i]
		if r.Exactly != nil {
			defaultMode(&r.Exactly.AllocationMode, &r.Exactly.Count)
		}
		for j := range r.FirstAvailable {
			defaultMode(&r.FirstAvailable[j].AllocationMode, &r.FirstAvailable[j].Count)
		}
	}
}

func defaultMode(mode *resourceapi.DeviceAllocationMode, count *int64) {
	if *mode == "" {
		*mode = resourceapi.DeviceAllocationModeExactCount
	}
	if *mode == resourceapi.DeviceAllocationModeExactCount && *count == 0 {
		*count = 1
	}
}

// newPod resolves t against m and the world's DeviceClasses: a claim
// naming a class the world lacks keeps the pod off every node.
func (w *World) newPod(t *Template, m *Manifests) *pod {
	p := newPod(t, m)
	for _, c := range append(slicesClone(p.claims), sharedClaims(p.shared)...) {
		for _, cn := range classNames(c) {
			if w.classes[cn] == nil {
				p.problems = appendOnce(p.problems, fmt.Sprintf("DeviceClass %s does not exist", cn))
			}
		}
	}
	return p
}

// checkClaim records what keeps a claim from ever being allocated, and
// counts its devices.
func (p *pod) checkClaim(c *resourceapi.ResourceClaim, what string) {
	n := claimDevices(c)
	p.devices += n
	if n > MaxDevicesPerClaim {
		p.problems = append(p.problems, fmt.Sprintf("%s asks %d devices, more than the %d a claim may hold", what, n, MaxDevicesPerClaim))
	}
}

// claimDevices is the fewest devices a claim takes: counts of exact
// requests (1 for All), the smallest subrequest of firstAvailable.
func claimDevices(c *resourceapi.ResourceClaim) int {
	n := 0
	for _, r := range c.Spec.Devices.Requests {
		switch {
		case r.Exactly != nil:
			n += int(requestCount(r.Exactly.AllocationMode, r.Exactly.Count))
		case len(r.FirstAvailable) > 0:
			least := -1
			for _, s := range r.FirstAvailable {
				if k := int(requestCount(s.AllocationMode, s.Count)); least < 0 || k < least {
					least = k
				}
			}
			n += least
		}
	}
	return n
}

func requestCount(mode resourceapi.DeviceAllocationMode, count int64) int64 {
	if mode == resourceapi.DeviceAllocationModeAll {
		return 1
	}
	if count <= 0 {
		return 1
	}
	return count
}

// classNames are the DeviceClasses a claim names.
func classNames(c *resourceapi.ResourceClaim) []string {
	var out []string
	for _, r := range c.Spec.Devices.Requests {
		if r.Exactly != nil {
			out = append(out, r.Exactly.DeviceClassName)
		}
		for _, s := range r.FirstAvailable {
			out = append(out, s.DeviceClassName)
		}
	}
	return out
}

var logger = klog.Background()

// placeable reports whether node affinity and taints let the pod on n.
func (p *pod) placeable(n *Node) bool { return p.admits(n).kind == rejectNone }

// admits is the filter of node affinity and taints that rejects the pod
// on n, if any.
func (p *pod) admits(n *Node) reject {
	if n.obj.Spec.Unschedulable {
		return reject{kind: rejectCordoned}
	}
	if ok, err := p.affinity.Match(n.obj); err != nil || !ok {
		return reject{kind: rejectAffinity}
	}
	t, untolerated := corev1helpers.FindMatchingUntoleratedTaint(logger, n.obj.Spec.Taints, p.tol, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	if untolerated {
		return reject{kind: rejectTaint, name: t.ToString()}
	}
	return reject{}
}

// fit tries the pod on n and, when it fits, takes what it uses; else it
// says which filter rejected it. It returns an error only for input the
// allocator rejects (a CEL error).
func (w *World) fit(ctx context.Context, p *pod, n *Node) (bool, reject, error) {
	if len(p.problems) > 0 {
		return false, reject{kind: rejectProblem}, nil
	}
	if why := p.admits(n); why.kind != rejectNone {
		return false, why, nil
	}
	claims := p.claims
	var extended *resourceapi.ResourceClaim
	for r, q := range p.requests {
		if have, ok := n.alloc[r]; ok {
			if have < q {
				return false, reject{kind: rejectTooFew, name: r, want: q, have: have}, nil
			}
			if have-n.used[r] < q {
				return false, reject{kind: rejectFull, name: r, want: q}, nil
			}
			continue
		}
		class, ok := w.extended[r]
		if !ok || len(n.slices) == 0 {
			return false, reject{kind: rejectNotAdvertised, name: r}, nil
		}
		// DRAExtendedResource: the scheduler allocates a claim for the
		// extended resource on nodes no device plugin serves it.
		if extended == nil {
			extended = &resourceapi.ResourceClaim{}
			extended.Name, extended.Namespace, extended.UID = p.tpl.Name+"-extended-resources", p.tpl.Namespace, types.UID(p.tpl.Key+"-extended")
		}
		extended.Spec.Devices.Requests = append(extended.Spec.Devices.Requests, resourceapi.DeviceRequest{
			Name: fmt.Sprintf("container-%d", len(extended.Spec.Devices.Requests)), Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: q}})
	}
	var pending []string
	for _, s := range p.shared {
		at, done := w.shared[s.key]
		if done {
			if at != n {
				return false, reject{kind: rejectSharedElsewhere, name: s.key}, nil
			}
			continue
		}
		claims = append(claims, s.claim)
		pending = append(pending, s.key)
	}
	if extended != nil {
		claims = append(slicesClone(claims), extended)
	}
	if len(claims) > 0 {
		if len(n.slices) == 0 {
			return false, reject{kind: rejectNoDRA}, nil
		}
		need := p.devices
		if extended != nil {
			need += claimDevices(extended)
		}
		if !n.shareable && need > n.devices-n.exclusive {
			why := w.short(ctx, n, claims, false)
			switch {
			case why.kind != rejectNone:
			case need > n.devices:
				why = reject{kind: rejectNodeDevices, want: int64(need), have: int64(n.devices)}
			default:
				why = reject{kind: rejectDevicesFull, want: int64(need)}
			}
			return false, why, nil
		}
		if why := w.short(ctx, n, claims, true); why.kind != rejectNone {
			return false, why, nil
		}
		a, err := w.allocator(ctx, n)
		if err != nil {
			return false, reject{}, err
		}
		res, err := a.Allocate(ctx, n.obj, claims)
		if err != nil {
			return false, reject{}, err
		}
		if res == nil {
			return false, reject{kind: rejectAllocator}, nil
		}
		taken := n.commit(res)
		if w.journal != nil {
			*w.journal = append(*w.journal, placement{node: n, results: res, devices: taken})
		}
	} else if w.journal != nil {
		*w.journal = append(*w.journal, placement{node: n})
	}
	if w.journal != nil {
		last := &(*w.journal)[len(*w.journal)-1]
		last.requests, last.shared = p.requests, pending
	}
	for r, q := range p.requests {
		if _, ok := n.alloc[r]; ok {
			n.used[r] += q
		}
	}
	for _, k := range pending {
		w.shared[k] = n
	}
	return true, reject{}, nil
}

func slicesClone[T any](s []T) []T { return append([]T(nil), s...) }

// place packs count pods of p greedily: each pod on the first node, in
// world order, where it fits. Nodes only fill up, so a node a pod of p
// did not fit stays skipped for the next. DaemonSet pods are tried on
// their own nodes instead. When some pods are left, why says why: the
// nodes that rejected them, counted per reason.
func (w *World) place(ctx context.Context, p *pod, count int) (pools map[string]int, placed int, why []string, err error) {
	pools = map[string]int{}
	var rejects []reject
	if p.tpl.DaemonSet {
		nodes := 0
		for _, n := range w.Nodes {
			if !p.placeable(n) {
				continue
			}
			nodes++
			ok, r, err := w.fit(ctx, p, n)
			if err != nil {
				return pools, placed, nil, err
			}
			if ok {
				pools[n.Pool]++
				placed++
			} else {
				rejects = append(rejects, r)
			}
		}
		if placed < count {
			why = whyNot(p, rejects, nodes)
		}
		return pools, placed, why, nil
	}
	cursor := 0
	for range count {
		for cursor < len(w.Nodes) {
			ok, r, err := w.fit(ctx, p, w.Nodes[cursor])
			if err != nil {
				return pools, placed, nil, err
			}
			if ok {
				break
			}
			rejects = append(rejects, r)
			cursor++
		}
		if cursor == len(w.Nodes) {
			break
		}
		pools[w.Nodes[cursor].Pool]++
		placed++
	}
	if placed < count {
		why = whyNot(p, rejects, len(w.Nodes))
	}
	return pools, placed, why, nil
}

// daemonPods is the number of nodes a DaemonSet's placement selects.
func (w *World) daemonPods(p *pod) int {
	n := 0
	for _, node := range w.Nodes {
		if p.placeable(node) {
			n++
		}
	}
	return n
}

func appendOnce(l []string, s string) []string {
	if containsString(l, s) {
		return l
	}
	return append(l, s)
}

func sharedClaims(s []sharedClaim) []*resourceapi.ResourceClaim {
	var out []*resourceapi.ResourceClaim
	for _, c := range s {
		out = append(out, c.claim)
	}
	return out
}

// enough reports whether n has, for every exact request of the claims,
// at least as many matching devices as it asks (free ones when free is
// set). It is a necessary condition the allocator's search would find
// only after trying every combination; shareable devices are never
// counted out.
func (w *World) enough(ctx context.Context, n *Node, claims []*resourceapi.ResourceClaim, free bool) bool {
	return w.short(ctx, n, claims, free).kind == rejectNone
}

// short is the first exact request of the claims that n has too few
// matching devices for (too few free ones when free is set), as a reject.
func (w *World) short(ctx context.Context, n *Node, claims []*resourceapi.ResourceClaim, free bool) reject {
	for _, c := range claims {
		for _, r := range c.Spec.Devices.Requests {
			e := r.Exactly
			if e == nil || e.AllocationMode != resourceapi.DeviceAllocationModeExactCount {
				continue
			}
			ids, ok := w.matching(ctx, n, e)
			if !ok {
				continue
			}
			total := int64(len(ids))
			if e.Count > total {
				return reject{kind: rejectClassCount, name: e.DeviceClassName, want: e.Count, have: total, selectors: len(e.Selectors) > 0}
			}
			have := total
			if free && !n.shareable {
				for _, id := range ids {
					if n.state.AllocatedDevices.Has(id) {
						have--
					}
				}
			}
			if e.Count > have {
				return reject{kind: rejectClassFull, name: e.DeviceClassName, want: e.Count}
			}
		}
	}
	return reject{}
}

// matching lists the devices of n the request's class and selectors
// match, cached per node; ok is false when a selector cannot be
// evaluated here (the allocator then decides).
func (w *World) matching(ctx context.Context, n *Node, e *resourceapi.ExactDeviceRequest) ([]structured.DeviceID, bool) {
	class := w.classes[e.DeviceClassName]
	if class == nil {
		return nil, false
	}
	var exprs []string
	for _, s := range append(slicesClone(class.Spec.Selectors), e.Selectors...) {
		if s.CEL != nil {
			exprs = append(exprs, s.CEL.Expression)
		}
	}
	key := e.DeviceClassName + "\x00" + strings.Join(exprs, "\x00")
	if ids, ok := n.match[key]; ok {
		return ids, ids != nil
	}
	if n.match == nil {
		n.match = map[string][]structured.DeviceID{}
	}
	ids := []structured.DeviceID{}
	for _, sl := range n.slices {
		idx, ok := w.matchSlice(ctx, sl, key, exprs)
		if !ok {
			n.match[key] = nil
			return nil, false
		}
		for _, i := range idx {
			ids = append(ids, structured.MakeDeviceID(sl.Spec.Driver, sl.Spec.Pool.Name, sl.Spec.Devices[i].Name))
		}
	}
	n.match[key] = ids
	return ids, true
}

// sliceKey identifies a device list shared by the nodes of a pool.
type sliceKey struct {
	first *resourceapi.Device
	n     int
	key   string
}

// matchSlice returns the indices of the devices of sl all exprs match,
// computed once per device list (the nodes of a pool share theirs).
func (w *World) matchSlice(ctx context.Context, sl *resourceapi.ResourceSlice, key string, exprs []string) ([]int, bool) {
	if len(sl.Spec.Devices) == 0 {
		return nil, true
	}
	k := sliceKey{first: &sl.Spec.Devices[0], n: len(sl.Spec.Devices), key: sl.Spec.Driver + "\x00" + key}
	if idx, ok := w.matches[k]; ok {
		return idx, idx != nil
	}
	var idx []int
	for i, d := range sl.Spec.Devices {
		ok := true
		for _, x := range exprs {
			cr := w.cache.GetOrCompile(x)
			if cr.Error != nil {
				w.matches[k] = nil
				return nil, false
			}
			m, _, err := cr.DeviceMatches(ctx, dracel.Device{Driver: sl.Spec.Driver, AllowMultipleAllocations: d.AllowMultipleAllocations, Attributes: d.Attributes, Capacity: d.Capacity})
			if err != nil || !m {
				ok = false
				break
			}
		}
		if ok {
			idx = append(idx, i)
		}
	}
	if idx == nil {
		idx = []int{}
	}
	w.matches[k] = idx
	return idx, true
}
