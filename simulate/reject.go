package simulate

import (
	"fmt"
	"sort"
	"strings"
)

// rejectKind is the filter that kept a pod off a node.
type rejectKind uint8

const (
	rejectNone rejectKind = iota
	rejectProblem
	rejectCordoned
	rejectAffinity
	rejectTaint
	rejectNotAdvertised
	rejectTooFew
	rejectFull
	rejectSharedElsewhere
	rejectNoDRA
	rejectClassCount
	rejectClassFull
	rejectDevicesFull
	rejectNodeDevices
	rejectAllocator
)

// reject is why one node did not take a pod: the filter and its details.
// It is comparable, so nodes are counted per reason, and formatted only
// when a template does not fit whole.
type reject struct {
	kind       rejectKind
	name       string
	want, have int64
	// selectors: the request narrows its class with selectors.
	selectors bool
}

// message says the reason in words; p gives the affinity terms.
func (r reject) message(p *pod) string {
	switch r.kind {
	case rejectCordoned:
		return "node is cordoned (unschedulable)"
	case rejectAffinity:
		return fmt.Sprintf("node affinity/selector does not match (%s)", strings.Join(affinityTerms(p), ", "))
	case rejectTaint:
		return "untolerated taint " + r.name
	case rejectNotAdvertised:
		return fmt.Sprintf("no %s: the node does not advertise it and no DeviceClass on it serves it", r.name)
	case rejectTooFew:
		return fmt.Sprintf("insufficient %s (%d asked, %d on the node)", r.name, r.want, r.have)
	case rejectFull:
		return fmt.Sprintf("insufficient %s (%d asked; the pods placed before took the rest)", r.name, r.want)
	case rejectSharedElsewhere:
		return fmt.Sprintf("ResourceClaim %s is allocated on another node", r.name)
	case rejectNoDRA:
		return "no DRA devices: the node is on the device plugin"
	case rejectClassCount:
		sel := ""
		if r.selectors {
			sel = " matches the request's selectors"
		}
		if r.have == 0 {
			return "no device of class " + r.name + sel
		}
		return fmt.Sprintf("%d %s of class %s%s (%d asked)", r.have, plural(int(r.have), "device", "devices"), r.name, sel, r.want)
	case rejectClassFull:
		return fmt.Sprintf("too few free devices of class %s (%d asked; the pods placed before took the rest)", r.name, r.want)
	case rejectDevicesFull:
		return fmt.Sprintf("too few free devices (%d asked; the pods placed before took the rest)", r.want)
	case rejectNodeDevices:
		return fmt.Sprintf("%d devices on the node, a pod's claims take %d", r.have, r.want)
	case rejectAllocator:
		return "the allocator finds no devices that meet the claims together (constraints, topology or selectors)"
	}
	return "does not fit"
}

// plural is one or many by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// affinityTerms names the pod's nodeSelector and required node affinity.
func affinityTerms(p *pod) []string {
	var terms []string
	for k, v := range p.tpl.Spec.NodeSelector {
		terms = append(terms, k+"="+v)
	}
	sort.Strings(terms)
	if a := p.tpl.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms = append(terms, "required node affinity")
	}
	return terms
}

// whyNot says why pods of p were left unplaced: its own problems, which
// keep it off every node, else the nodes that rejected it counted per
// reason, most first ("3 nodes: untolerated taint ...").
func whyNot(p *pod, rejects []reject, nodes int) []string {
	if len(p.problems) > 0 {
		return slicesClone(p.problems)
	}
	if nodes == 0 {
		return []string{"no node it may run on"}
	}
	byReject := map[reject]int{}
	for _, r := range rejects {
		byReject[r]++
	}
	counts := map[string]int{}
	for r, n := range byReject {
		counts[r.message(p)] += n
	}
	msgs := make([]string, 0, len(counts))
	for m := range counts {
		msgs = append(msgs, m)
	}
	sort.Slice(msgs, func(i, j int) bool {
		if counts[msgs[i]] != counts[msgs[j]] {
			return counts[msgs[i]] > counts[msgs[j]]
		}
		return msgs[i] < msgs[j]
	})
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = fmt.Sprintf("%d %s: %s", counts[m], plural(counts[m], "node", "nodes"), m)
	}
	if len(out) == 0 {
		out = append(out, "the nodes it may run on are full")
	}
	return out
}
