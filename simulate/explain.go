package simulate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/dynamic-resource-allocation/structured"
)

// explain says in words why p does not fit (more of its pods) in w.
// before are the pools its pods ran on before the move; beforeDevices
// the devices one pod took there.
func (w *World) explain(ctx context.Context, p *pod, before map[string]int, beforeDevices int64) []string {
	asksDRA := len(p.claims) > 0 || len(p.shared) > 0
	reasons := slicesClone(p.problems)
	if asksDRA {
		reasons = append(reasons, w.stillOnPlugin(before)...)
	}
	dra, candidates := w.draNodes(p)
	switch {
	case asksDRA && len(dra) == 0:
		reasons = append(reasons, "no pool is on DRA")
	case asksDRA && len(candidates) == 0:
		reasons = append(reasons, w.placementReason(p, dra))
	}
	reasons = append(reasons, w.unserved(p)...)
	if len(candidates) == 0 || !asksDRA || len(p.problems) > 0 {
		return orDefault(reasons, "fewer pods fit: the nodes are full")
	}
	all := append(slicesClone(p.claims), sharedClaims(p.shared)...)
	requests, matched := w.requestReasons(ctx, all, candidates)
	reasons = append(reasons, requests...)
	if matched {
		reasons = append(reasons, w.constraintReasons(ctx, all, candidates)...)
	}
	if asked := int64(p.devices); beforeDevices > 0 && asked > beforeDevices {
		reasons = append(reasons, fmt.Sprintf("a pod's claims ask %d devices where the device-plugin pod asked %d (its effective request)", asked, beforeDevices))
	}
	if len(reasons) == 0 && w.anyFits(ctx, candidates, all) {
		reasons = append(reasons, fmt.Sprintf("fewer pods fit: the DRA nodes are full (%d devices per pod)", p.devices))
	}
	return orDefault(reasons, "no DRA node can allocate the pod's claims")
}

// stillOnPlugin says which of the pools a pod ran on before are still on
// the device plugin, where its claims cannot be served.
func (w *World) stillOnPlugin(before map[string]int) []string {
	var pools []string
	for pool := range before {
		for _, n := range w.Nodes {
			if n.Pool == pool {
				if n.Mode == ModePlugin {
					pools = append(pools, pool)
				}
				break
			}
		}
	}
	sort.Strings(pools)
	reasons := make([]string, len(pools))
	for i, pool := range pools {
		reasons[i] = fmt.Sprintf("pool %s is still on the device plugin", pool)
	}
	return reasons
}

// draNodes are w's DRA nodes, and the first one of each pool that p's
// affinity and tolerations let it on.
func (w *World) draNodes(p *pod) (dra, candidates []*Node) {
	seen := map[string]bool{}
	for _, n := range w.Nodes {
		if n.Mode != ModeDRA {
			continue
		}
		dra = append(dra, n)
		if p.placeable(n) && !seen[n.Pool] {
			seen[n.Pool] = true
			candidates = append(candidates, n)
		}
	}
	return dra, candidates
}

// unserved says which extended resources p still requests that no DRA
// class maps and no node it may run on advertises.
func (w *World) unserved(p *pod) []string {
	var reasons []string
	for r := range p.requests {
		if _, mapped := w.extended[r]; mapped {
			continue
		}
		served := false
		for _, n := range w.Nodes {
			if _, ok := n.alloc[r]; ok && p.placeable(n) {
				served = true
			}
		}
		if !served {
			reasons = append(reasons, fmt.Sprintf("still requests %s, which no node it may run on advertises", r))
		}
	}
	return reasons
}

// requestReasons says which requests of the claims no candidate node can
// serve on its own: no device matches, or not as many as asked; matched
// is true when every request can be.
func (w *World) requestReasons(ctx context.Context, claims []*resourceapi.ResourceClaim, candidates []*Node) (reasons []string, matched bool) {
	matched = true
	for _, c := range claims {
		for _, r := range c.Spec.Devices.Requests {
			if w.classes[requestClass(r)] == nil {
				continue
			}
			if !w.anyFits(ctx, candidates, []*resourceapi.ResourceClaim{single(c, r, 1)}) {
				matched = false
				reasons = append(reasons, fmt.Sprintf("no device matches the selector of request %s (class %s): %s", r.Name, requestClass(r), quoteSelectors(r, w.classes[requestClass(r)])))
			} else if !w.anyFits(ctx, candidates, []*resourceapi.ResourceClaim{single(c, r, 0)}) {
				matched = false
				reasons = append(reasons, fmt.Sprintf("request %s asks %d devices of class %s, more than any node it may run on has", r.Name, requestCount(r.Exactly.AllocationMode, r.Exactly.Count), requestClass(r)))
			}
		}
	}
	return reasons, matched
}

// constraintReasons says which matchAttribute constraints keep a claim off
// every candidate node that would take it without them.
func (w *World) constraintReasons(ctx context.Context, claims []*resourceapi.ResourceClaim, candidates []*Node) []string {
	var reasons []string
	for _, c := range claims {
		if len(c.Spec.Devices.Constraints) == 0 {
			continue
		}
		loose := c.DeepCopy()
		loose.Spec.Devices.Constraints = nil
		if !w.anyFits(ctx, candidates, []*resourceapi.ResourceClaim{c}) && w.anyFits(ctx, candidates, []*resourceapi.ResourceClaim{loose}) {
			for _, k := range c.Spec.Devices.Constraints {
				if k.MatchAttribute != nil {
					reasons = append(reasons, fmt.Sprintf("the matchAttribute %s constraint (requests %s) cannot be met on any node", *k.MatchAttribute, strings.Join(k.Requests, ", ")))
				}
			}
		}
	}
	return reasons
}

// orDefault is l, or d alone when l is empty.
func orDefault(l []string, d string) []string {
	if len(l) == 0 {
		return []string{d}
	}
	return l
}

func requestClass(r resourceapi.DeviceRequest) string {
	if r.Exactly != nil {
		return r.Exactly.DeviceClassName
	}
	if len(r.FirstAvailable) > 0 {
		return r.FirstAvailable[0].DeviceClassName
	}
	return ""
}

// single is a claim of one request of c; count > 0 overrides the count.
func single(c *resourceapi.ResourceClaim, r resourceapi.DeviceRequest, count int64) *resourceapi.ResourceClaim {
	s := c.DeepCopy()
	s.UID += "-probe"
	r = *r.DeepCopy()
	if count > 0 {
		if r.Exactly != nil {
			r.Exactly.AllocationMode, r.Exactly.Count = resourceapi.DeviceAllocationModeExactCount, count
		}
		for i := range r.FirstAvailable {
			r.FirstAvailable[i].AllocationMode, r.FirstAvailable[i].Count = resourceapi.DeviceAllocationModeExactCount, count
		}
	}
	s.Spec.Devices = resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{r}}
	return s
}

// anyFits reports whether the claims can be allocated on one of the nodes
// when nothing is allocated there.
func (w *World) anyFits(ctx context.Context, nodes []*Node, claims []*resourceapi.ResourceClaim) bool {
	need := 0
	for _, c := range claims {
		need += claimDevices(c)
	}
	for _, n := range nodes {
		if !n.shareable && need > n.devices || !w.enough(ctx, n, claims, false) {
			continue
		}
		a, err := w.allocatorFor(ctx, n)
		if err != nil {
			continue
		}
		if res, err := a.Allocate(ctx, n.obj, claims); err == nil && res != nil {
			return true
		}
	}
	return false
}

// allocatorFor is n's allocator with nothing allocated.
func (w *World) allocatorFor(ctx context.Context, n *Node) (structured.Allocator, error) {
	return w.allocator(ctx, &Node{state: newState(), slices: n.slices})
}

func quoteSelectors(r resourceapi.DeviceRequest, class *resourceapi.DeviceClass) string {
	var sel []resourceapi.DeviceSelector
	if r.Exactly != nil {
		sel = r.Exactly.Selectors
	} else if len(r.FirstAvailable) > 0 {
		sel = r.FirstAvailable[0].Selectors
	}
	var out []string
	for _, s := range sel {
		if s.CEL != nil {
			out = append(out, "`"+s.CEL.Expression+"`")
		}
	}
	if len(out) == 0 && class != nil {
		for _, s := range class.Spec.Selectors {
			if s.CEL != nil {
				out = append(out, "`"+s.CEL.Expression+"` (the class's selector)")
			}
		}
	}
	if len(out) == 0 {
		return "no selector: no device of the class on the nodes it may run on"
	}
	return strings.Join(out, " && ")
}

// placementReason says why no DRA node takes the pod.
func (w *World) placementReason(p *pod, dra []*Node) string {
	for _, n := range dra {
		if ok, err := p.affinity.Match(n.obj); err == nil && ok {
			t, _ := corev1helpers.FindMatchingUntoleratedTaint(logger, n.obj.Spec.Taints, p.tol, func(t *corev1.Taint) bool {
				return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
			}, false)
			return fmt.Sprintf("the pod does not tolerate the taint %s of the DRA nodes", t.ToString())
		}
	}
	return fmt.Sprintf("node affinity excludes every DRA node (%s)", strings.Join(affinityTerms(p), ", "))
}
