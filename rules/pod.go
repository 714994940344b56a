package rules

import (
	"fmt"
	"slices"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubedra/kubedra/inventory"
)

// The API server's limits on one claim (k8s.io/api/resource/v1): the
// allocator refuses a claim whose requests add up to more devices, so a
// pod that asks for more gets several claims.
const (
	maxClaimDevices  = resourcev1.AllocationResultsMaxSize
	maxClaimRequests = resourcev1.DeviceRequestsMaxSize
	maxClaimConfigs  = resourcev1.DeviceConfigMaxSize
)

// entry is one device request of the pod's own (per-pod) claims.
type entry struct {
	name      string
	base      string // request name base ("gpu")
	claimBase string // claim name base
	spec      resourcev1.ExactDeviceRequest
	cfg       []Opaque
	key       string // entries with one key ask for interchangeable devices
	owner     int    // the state that made it
	users     []int  // the states whose container references it
	bin       int    // the claim it lands in
}

// podKey groups requests whose devices are interchangeable: the same class,
// selectors and rule (so the same driver configuration).
func podKey(st *reqState) string {
	return st.spec.DeviceClassName + "\x00" + strings.Join(st.d.Selectors, "\x00") + "\x00" + st.m.r.ID
}

func containerKey(r PodRequest) string { return string(r.ContainerType) + "/" + r.Container }

// perPodClaims builds the pod's own claims from the requests idxs (indexes
// into states), numbering them from first, and points every request's
// decision at the requests its container references.
//
// Devices are counted the way the kubelet and scheduler count device-plugin
// resources (the effective request): long-lived containers (app containers
// and sidecars) each get their own devices; a (non-sidecar) init container
// runs before the app containers start and after the earlier init
// containers ended, so it reuses the devices of the app containers and of
// the sidecars that start after it, and asks for more only when those are
// not enough. The pod then asks for max over init containers (each plus the
// sidecars running beside it) against the sum of the long-lived ones.
//
// A claim holds at most 32 devices and 32 requests: beyond that the
// requests are spread over several claims, keeping each container's
// requests together where they fit, and a request of more than 32 devices
// is split. A topology constraint that would span two claims is dropped,
// and the decisions say so.
func (s *Set) perPodClaims(pod Pod, states []*reqState, idxs []int, first int) []Claim {
	entries, uses := podEntries(pod, states, idxs)
	taken := map[string]bool{}
	nameEntries(pod, entries, taken)
	entries = splitEntries(entries, uses, taken)
	bins := pack(pod, entries)
	constraints := s.topologyOf(pod, states, entries)
	claims := claimsOf(entries, bins)
	constrain(pod, states, claims, constraints)
	if bins > 1 {
		noteSpread(pod, states, entries)
	}
	refer(pod, states, idxs, entries, uses, first)
	return claims
}

// podEntries makes the entries of the requests idxs: one per long-lived
// container's request, and one per init container's request for the
// devices that the entries it may reuse do not cover. uses are the entries
// each init container's request references.
func podEntries(pod Pod, states []*reqState, idxs []int) (entries []*entry, uses map[int][]*entry) {
	byOwner := map[int]*entry{}
	newEntry := func(i int, count int64) *entry {
		st := states[i]
		e := &entry{base: st.base, claimBase: st.claimBase, spec: *st.spec.DeepCopy(), cfg: st.m.r.Config, key: podKey(st), owner: i}
		e.spec.Count = count
		byOwner[i] = e
		return e
	}
	var inits []int
	for _, i := range idxs {
		if pod.Requests[i].ContainerType == inventory.InitContainer {
			inits = append(inits, i)
			continue
		}
		e := newEntry(i, states[i].spec.Count)
		e.users = []int{i}
	}
	slices.SortStableFunc(inits, func(a, b int) int { return pod.Requests[a].ContainerIndex - pod.Requests[b].ContainerIndex })
	uses = map[int][]*entry{}
	for _, i := range inits {
		st := states[i]
		chosen := choose(reusable(pod, byOwner, idxs, i, podKey(st)), st.spec.Count)
		var have int64
		for _, e := range chosen {
			have += e.spec.Count
		}
		if have < st.spec.Count {
			chosen = append(chosen, newEntry(i, st.spec.Count-have))
		}
		for _, e := range chosen {
			e.users = append(e.users, i)
		}
		uses[i] = chosen
	}
	for _, i := range idxs {
		if e := byOwner[i]; e != nil {
			entries = append(entries, e)
		}
	}
	return entries, uses
}

// reusable returns the entries with key whose devices the init container
// of request i may reuse: those of the app containers, of the sidecars
// listed after it and of the init containers before it (they have ended).
func reusable(pod Pod, byOwner map[int]*entry, idxs []int, i int, key string) []*entry {
	r := pod.Requests[i]
	var pool []*entry
	for _, j := range idxs {
		e := byOwner[j]
		if e == nil || e.key != key {
			continue
		}
		o := pod.Requests[j]
		switch o.ContainerType {
		case inventory.Container:
		case inventory.SidecarContainer:
			// A sidecar listed before the init container runs beside
			// it: their devices must differ.
			if o.ContainerIndex < r.ContainerIndex {
				continue
			}
		default: // an earlier init container's own devices: it has ended
			if o.ContainerIndex >= r.ContainerIndex {
				continue
			}
		}
		pool = append(pool, e)
	}
	return pool
}

// nameEntries names the entries' requests: the base name when it is unique
// in the pod, else base-container, made unique in taken.
func nameEntries(pod Pod, entries []*entry, taken map[string]bool) {
	n := map[string]int{}
	for _, e := range entries {
		n[e.base]++
	}
	for _, e := range entries {
		name := e.base
		if n[e.base] > 1 {
			name = e.base + "-" + pod.Requests[e.owner].Container
		}
		e.name = unique(DNSLabel(name, "device"), taken)
	}
}

// splitEntries splits each entry of more devices than a claim holds into
// parts of at most maxClaimDevices, named uniquely in taken, and adds the
// parts to the uses that reference the entry.
func splitEntries(entries []*entry, uses map[int][]*entry, taken map[string]bool) []*entry {
	var split []*entry
	for _, e := range entries {
		split = append(split, e)
		for rest := e.spec.Count - maxClaimDevices; rest > 0; rest -= maxClaimDevices {
			part := *e
			part.spec = *e.spec.DeepCopy()
			part.spec.Count = min(rest, maxClaimDevices)
			part.name = unique(e.name, taken)
			part.users = slices.Clone(e.users)
			split = append(split, &part)
			for _, u := range e.users {
				if slices.Contains(uses[u], e) {
					uses[u] = append(uses[u], &part)
				}
			}
		}
		e.spec.Count = min(e.spec.Count, maxClaimDevices)
	}
	return split
}

// claimsOf builds the bins claims that pack placed the entries in: their
// requests and configs, and names joined from the entries' claim bases.
func claimsOf(entries []*entry, bins int) []Claim {
	claims := make([]Claim, bins)
	for _, e := range entries {
		c := &claims[e.bin]
		c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, resourcev1.DeviceRequest{Name: e.name, Exactly: e.spec.DeepCopy()})
		for _, cfg := range e.cfg {
			c.Spec.Devices.Config = append(c.Spec.Devices.Config, opaque([]string{e.name}, cfg))
		}
	}
	bases := make([][]string, bins)
	for _, e := range entries {
		if !slices.Contains(bases[e.bin], e.claimBase) {
			bases[e.bin] = append(bases[e.bin], e.claimBase)
		}
	}
	for b := range claims {
		claims[b].Name = DNSLabel(strings.Join(bases[b], "-"), "device")
	}
	return claims
}

// constrain adds each topology constraint to the claim that holds all its
// entries; a constraint whose entries span claims is dropped, and the
// decisions of their users say so.
func constrain(pod Pod, states []*reqState, claims []Claim, constraints []constraint) {
	for _, k := range constraints {
		bin := -1
		spans := false
		for _, e := range k.entries {
			if bin >= 0 && e.bin != bin {
				spans = true
			}
			bin = e.bin
		}
		if !spans {
			claims[bin].Spec.Devices.Constraints = append(claims[bin].Spec.Devices.Constraints, k.c)
			continue
		}
		for _, e := range k.entries {
			for _, u := range e.users {
				note(states[u], fmt.Sprintf("the %d devices of container %s do not fit in one claim (at most %d), so its requests are spread over several claims and the matchAttribute %s alignment between them is lost",
					k.total, pod.Requests[k.entries[0].owner].Container, maxClaimDevices, *k.c.MatchAttribute))
			}
		}
	}
}

// noteSpread says so on the decisions of the containers whose own devices
// were spread over several claims.
func noteSpread(pod Pod, states []*reqState, entries []*entry) {
	spread := map[string]map[int]bool{}
	for _, e := range entries {
		k := containerKey(pod.Requests[e.owner])
		if spread[k] == nil {
			spread[k] = map[int]bool{}
		}
		spread[k][e.bin] = true
	}
	for _, e := range entries {
		if k := containerKey(pod.Requests[e.owner]); len(spread[k]) > 1 {
			note(states[e.owner], fmt.Sprintf("the pod asks for more devices than one claim holds (%d): container %s's are spread over %d claims, and no constraint spans claims",
				maxClaimDevices, pod.Requests[e.owner].Container, len(spread[k])))
		}
	}
}

// refer points the decision of every request idxs at the requests its
// container references, in claim order, numbering claims from first.
func refer(pod Pod, states []*reqState, idxs []int, entries []*entry, uses map[int][]*entry, first int) {
	// Each request's own entries and every entry's place, found once (a
	// pod of 10,000 containers made a walk of all entries per request).
	owned := map[int][]*entry{}
	place := make(map[*entry]int, len(entries))
	for k, e := range entries {
		owned[e.owner] = append(owned[e.owner], e)
		place[e] = k
	}
	for _, i := range idxs {
		st := states[i]
		refs := slices.Clone(uses[i])
		if pod.Requests[i].ContainerType != inventory.InitContainer {
			refs = append(refs, owned[i]...)
		}
		slices.SortStableFunc(refs, func(a, b *entry) int { return place[a] - place[b] })
		st.d.Refs = nil
		for _, e := range refs {
			st.d.Refs = append(st.d.Refs, ClaimRef{Claim: first + e.bin, Request: e.name})
		}
		st.d.Claim, st.d.Request = st.d.Refs[0].Claim, st.d.Refs[0].Request
	}
}

// note records a split note on a decision once.
func note(st *reqState, msg string) {
	if !strings.Contains(st.d.Split, msg) {
		st.d.Split = strings.TrimPrefix(st.d.Split+"; "+msg, "; ")
	}
}

// choose picks the requests an init container reuses for need devices: one
// of exactly that size, else the smallest large enough, else as many as
// there are (the caller adds the rest).
func choose(pool []*entry, need int64) []*entry {
	var best *entry
	for _, e := range pool {
		if e.spec.Count == need {
			return []*entry{e}
		}
		if e.spec.Count > need && (best == nil || e.spec.Count < best.spec.Count) {
			best = e
		}
	}
	if best != nil {
		return []*entry{best}
	}
	return pool
}

// pack assigns entries to claims (entry.bin) and returns how many there
// are. Two rules hold for every claim: it is within the API's limits (32
// devices, requests and configs), and every container uses either one of
// its requests or all of them, because a container names a claim at most
// once (resources.claims is a list keyed by name; naming a claim without a
// request gives all of its devices). One claim when both hold for all the
// pod's requests; else first fit of each container's requests together,
// then of single requests.
func pack(pod Pod, entries []*entry) int {
	fits := func(es []*entry) bool {
		var devs, cfgs int64
		for _, e := range es {
			devs += e.spec.Count
			cfgs += int64(len(e.cfg))
		}
		return devs <= maxClaimDevices && len(es) <= maxClaimRequests && cfgs <= maxClaimConfigs
	}
	// valid: each container uses one request of the claim, or all of them.
	valid := func(es []*entry) bool {
		uses := map[string]int{}
		for _, e := range es {
			seen := map[string]bool{}
			for _, u := range e.users {
				k := containerKey(pod.Requests[u])
				if !seen[k] {
					seen[k] = true
					uses[k]++
				}
			}
		}
		for _, n := range uses {
			if n > 1 && n < len(es) {
				return false
			}
		}
		return true
	}
	if fits(entries) && valid(entries) {
		return 1
	}
	var bins [][]*entry
	var binDevs []int64 // devices of each bin
	place := func(es []*entry) bool {
		var devs int64
		for _, e := range es {
			devs += e.spec.Count
		}
		for b := range bins {
			// A full bin is passed over before any copy: first fit fills
			// the bins in turn, and a pod of 10,000 containers made
			// every request try every full bin.
			if len(bins[b])+len(es) > maxClaimRequests || binDevs[b]+devs > maxClaimDevices {
				continue
			}
			if cand := append(slices.Clone(bins[b]), es...); fits(cand) && valid(cand) {
				bins[b], binDevs[b] = cand, binDevs[b]+devs
				return true
			}
		}
		if !fits(es) || !valid(es) {
			return false
		}
		bins, binDevs = append(bins, slices.Clone(es)), append(binDevs, devs)
		return true
	}
	var order []string
	byContainer := map[string][]*entry{}
	for _, e := range entries {
		k := containerKey(pod.Requests[e.owner])
		if _, ok := byContainer[k]; !ok {
			order = append(order, k)
		}
		byContainer[k] = append(byContainer[k], e)
	}
	for _, k := range order {
		if place(byContainer[k]) {
			continue
		}
		for _, e := range byContainer[k] {
			place([]*entry{e}) // one request always fits, and is valid, in a claim of its own
		}
	}
	for b, es := range bins {
		for _, e := range es {
			e.bin = b
		}
	}
	return len(bins)
}

// constraint is a topology constraint over entries.
type constraint struct {
	c       resourcev1.DeviceConstraint
	entries []*entry
	total   int64
}

// topologyOf adds matchAttribute constraints: per container, accelerators
// and network devices requested together are aligned (dra.md section 10);
// an accelerator request alone gets a group constraint when its rule asks
// for one on the pod's instance family.
func (s *Set) topologyOf(pod Pod, states []*reqState, entries []*entry) []constraint {
	type ctr struct {
		accel, net []*entry
	}
	var order []string
	by := map[string]*ctr{}
	for _, e := range entries {
		t := states[e.owner].m.r.Topology
		if t == nil {
			continue
		}
		key := containerKey(pod.Requests[e.owner])
		c := by[key]
		if c == nil {
			c = &ctr{}
			by[key] = c
			order = append(order, key)
		}
		if t.Role == "network" {
			c.net = append(c.net, e)
		} else {
			c.accel = append(c.accel, e)
		}
	}
	var out []constraint
	fam := instanceFamily(pod.Hints)
	for _, key := range order {
		c := by[key]
		if len(c.accel) == 0 {
			continue
		}
		// All accelerators of one container must share one rule's attribute.
		t := states[c.accel[0].owner].m.r.Topology
		var total int64
		same := true
		for _, e := range c.accel {
			total += e.spec.Count
			if states[e.owner].m.r.Topology.Align != t.Align {
				same = false
			}
		}
		if !same || t.Align == "" {
			continue
		}
		attr := t.Align
		if strings.Contains(attr, "{n}") {
			g := int64(0)
			for _, n := range t.Groups {
				if n >= total {
					g = n
					break
				}
			}
			if g == 0 {
				continue
			}
			if len(c.net) == 0 && (g != total || total == 1 || !slices.Contains(t.GroupAlone, fam)) {
				continue
			}
			attr = strings.ReplaceAll(attr, "{n}", fmt.Sprint(g))
		} else if len(c.net) == 0 || t.MaxCount > 0 && total > t.MaxCount {
			continue
		}
		k := constraint{total: total}
		for _, e := range append(slices.Clone(c.accel), c.net...) {
			k.c.Requests = append(k.c.Requests, e.name)
			k.entries = append(k.entries, e)
			if states[e.owner].m.r.Topology.Role == "network" {
				k.total += e.spec.Count
			}
		}
		qn := resourcev1.FullyQualifiedName(attr)
		k.c.MatchAttribute = &qn
		out = append(out, k)
	}
	return out
}
