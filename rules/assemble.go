package rules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubedra/kubedra/inventory"
)

// applied reports whether a request gets a claim under opts.
func applied(st *reqState, opts Options) bool {
	if st.m == nil || st.base == "" || st.base == "-attached" {
		return false
	}
	return st.d.Status == Mappable || st.d.Status == Lossy && opts.AllowLossy
}

// assemble builds the claims: one per-pod claim with a request per container
// request, plus one shared claim per sharing group, and topology
// constraints per container.
func (s *Set) assemble(pod Pod, opts Options, states []*reqState, active []int) Resolution {
	res := Resolution{Decisions: make([]Decision, len(states))}
	podReqs := sharedClaims(&res, states, opts)
	if len(podReqs) > 0 {
		res.Claims = append(res.Claims, s.perPodClaims(pod, states, podReqs, len(res.Claims))...)
	}
	// Claim names are the pod's resourceClaims[].name: keep them unique.
	claimNames := map[string]bool{}
	for i := range res.Claims {
		res.Claims[i].Name = unique(res.Claims[i].Name, claimNames)
	}
	referAttached(states, opts)
	used := recordDecisions(&res, states, opts)
	s.keepHints(pod, states, active, used)
	keepTermsWhole(pod.Hints, used)
	res.UsedHints = usedHints(used)
	return res
}

// sharedClaims puts every applied request of a sharing group into the
// group's shared claim in res, and returns (indexes into states) the other
// applied requests, which get per-pod claims.
func sharedClaims(res *Resolution, states []*reqState, opts Options) []int {
	var podReqs []int
	shared := map[string]int{}
	for i, st := range states {
		if !applied(st, opts) {
			continue
		}
		if !st.shared {
			podReqs = append(podReqs, i)
			continue
		}
		ci, ok := shared[st.claimBase]
		if !ok {
			ci = len(res.Claims)
			shared[st.claimBase] = ci
			res.Claims = append(res.Claims, sharedClaim(st))
		}
		c := &res.Claims[ci]
		if e := c.Spec.Devices.Requests[0].Exactly; e.Count < st.spec.Count {
			e.Count = st.spec.Count
		}
		st.d.Claim, st.d.Request = ci, c.Spec.Devices.Requests[0].Name
	}
	return podReqs
}

// sharedClaim returns the shared claim of st's sharing group: st's request
// and the driver's sharing configuration.
func sharedClaim(st *reqState) Claim {
	c := Claim{Name: DNSLabel(st.claimBase, "device"), Shared: true}
	c.Spec.Devices.Requests = []resourcev1.DeviceRequest{{Name: DNSLabel(st.base, "device"), Exactly: st.spec.DeepCopy()}}
	cfg := st.m.r.Sharing.Config
	c.Spec.Devices.Config = append(c.Spec.Devices.Config, opaque([]string{DNSLabel(st.base, "device")}, cfg))
	return c
}

// referAttached points each applied capacity request at the claim and
// requests of the request it is attached to.
func referAttached(states []*reqState, opts Options) {
	for _, st := range states {
		if st.base == "-attached" && applied(states[st.host], opts) && (st.d.Status == Mappable || st.d.Status == Lossy && opts.AllowLossy) {
			st.d.Claim, st.d.Request = states[st.host].d.Claim, states[st.host].d.Request
			st.d.Refs = states[st.host].d.Refs
		}
	}
}

// recordDecisions copies every request's decision into res, with the
// --allow-lossy fix and whether an extended resource can serve it, and
// returns the hints that requests with a claim translated, marked true.
func recordDecisions(res *Resolution, states []*reqState, opts Options) map[int]bool {
	used := map[int]bool{}
	for i, st := range states {
		d := st.d
		if d.Status == Lossy && !opts.AllowLossy && d.Fix == "" {
			d.Fix = "pass --allow-lossy to apply this mapping"
		}
		if d.Claim >= 0 {
			for _, h := range st.hintUse {
				used[h] = true
			}
			c := res.Claims[d.Claim]
			d.ExtendedResource = d.Status == Mappable && !st.podSels && !c.Shared &&
				len(c.Spec.Devices.Config) == 0 && !constrained(c, d.Request)
		}
		res.Decisions[i] = d
	}
	return used
}

// keepHints marks false in used the hints that still matter to a request
// left on the device plugin (unmapped, or lossy without --allow-lossy): a
// label such a request needs must stay on the pod.
func (s *Set) keepHints(pod Pod, states []*reqState, active []int, used map[int]bool) {
	for _, st := range states {
		if st.d.Claim >= 0 || st.m == nil || st.m.r.Driver == "" {
			continue
		}
		for _, h := range active {
			if _, ok := s.translate(pod.Hints[h], st.m.r.Driver); ok {
				used[h] = false
			}
		}
		for _, h := range st.m.whenHints {
			used[h] = false
		}
		for h := range pod.Hints {
			if len(pod.Hints[h].TermRests) > 1 {
				if _, ok := s.translate(pod.Hints[h], st.m.r.Driver); ok {
					used[h] = false
				}
			}
		}
	}
}

// keepTermsWhole marks false every ORed affinity term hint in used when one
// of them is kept: ORed terms are removed whole or not at all.
func keepTermsWhole(hints []inventory.Hint, used map[int]bool) {
	for h, ok := range used {
		if !ok && len(hints[h].TermRests) > 1 {
			for g := range hints {
				if len(hints[g].TermRests) > 1 {
					if _, seen := used[g]; seen {
						used[g] = false
					}
				}
			}
			break
		}
	}
}

// usedHints returns, sorted, the hints marked true in used.
func usedHints(used map[int]bool) []int {
	var out []int
	for h, ok := range used {
		if ok {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}

func constrained(c Claim, req string) bool {
	for _, k := range c.Spec.Devices.Constraints {
		if len(k.Requests) == 0 || slices.Contains(k.Requests, req) {
			return true
		}
	}
	return false
}

func opaque(reqs []string, o Opaque) resourcev1.DeviceClaimConfiguration {
	raw, _ := json.Marshal(o.Parameters)
	return resourcev1.DeviceClaimConfiguration{
		Requests: reqs,
		DeviceConfiguration: resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{
			Driver: o.Driver, Parameters: runtime.RawExtension{Raw: raw},
		}},
	}
}

func cel(expr string) resourcev1.DeviceSelector {
	return resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}
}

// orTerms translates the device labels of a required node affinity with
// several (ORed) nodeSelectorTerms into one selector for driver's devices:
// (term 1's expressions ANDed) || (term 2's) ... It applies only when every
// term asks the same besides the labels it translates (then the terms left
// are all alike and the OR moves whole into the selector); otherwise ok is
// false and loss says why the affinity has to stay. use are the hints the
// selector replaces; no affinity hint for driver gives ok and nothing.
func (s *Set) orTerms(hints []inventory.Hint, driver string) (expr string, use []int, ok bool, loss string) {
	var rests []string
	for _, h := range hints {
		if h.Kind == inventory.HintNodeAffinity && len(h.TermRests) > 1 {
			rests = h.TermRests
			break
		}
	}
	if rests == nil {
		return "", nil, true, ""
	}
	perTerm := make([][]string, len(rests))
	rest := make([][]string, len(rests))
	translated := false
	for i, h := range hints {
		if h.Kind != inventory.HintNodeAffinity || h.Term >= len(rests) {
			continue
		}
		x, ok := s.translate(h, driver)
		if !ok || x.keep {
			vals := slices.Clone(h.Values)
			slices.Sort(vals)
			rest[h.Term] = append(rest[h.Term], h.Key+" "+h.Operator+" "+strings.Join(vals, ","))
		}
		if !ok {
			continue
		}
		translated = true
		if x.expr != "" {
			perTerm[h.Term] = append(perTerm[h.Term], x.expr)
		}
		if !x.keep {
			use = append(use, i)
		}
	}
	if !translated {
		return "", nil, true, ""
	}
	for t := range rest {
		slices.Sort(rest[t])
		if rests[t]+"\x00"+strings.Join(rest[t], "\x00") != rests[0]+"\x00"+strings.Join(rest[0], "\x00") {
			return "", nil, false, fmt.Sprintf("the required node affinity ORs %d nodeSelectorTerms that differ in more than the device labels; "+
				"one device selector cannot say which devices go with which other labels, so the affinity stays as it is and DRA nodes must keep the device labels it selects on (GPU feature discovery)", len(rests))
		}
	}
	var ors []string
	for _, xs := range perTerm {
		if len(xs) == 0 {
			return "", use, true, "" // a term that allows any device
		}
		ors = append(ors, "("+strings.Join(xs, " && ")+")")
	}
	return strings.Join(ors, " || "), use, true, ""
}

// hintX is a translated hint.
type hintX struct {
	expr string // "" when the hint needs no selector
	keep bool
}

var safeRaw = regexp.MustCompile(`^[A-Za-z0-9._-]*$`)

// translate turns a hint into a selector for devices of driver, using the
// winning hint rule for its label.
func (s *Set) translate(h inventory.Hint, driver string) (hintX, bool) {
	hr := s.hintRuleFor(h.Key, driver)
	if hr == nil {
		return hintX{}, false
	}
	op, vals := hintValues(h)
	parts, ok := hr.parts(op, vals)
	if !ok {
		return hintX{}, false
	}
	expr := parts[0]
	if len(parts) > 1 {
		expr = "(" + strings.Join(parts, ") || (") + ")"
	}
	if op == "NotIn" || op == "DoesNotExist" {
		if expr == "true" {
			return hintX{}, false // "no GPU here": nothing DRA can express
		}
		expr = "!(" + expr + ")"
	}
	if expr == "true" {
		expr = ""
	}
	return hintX{expr: expr, keep: hr.Keep}, true
}

// hintRuleFor returns the hint rule that wins for label and driver: the
// last of the highest layer, nil when none applies.
func (s *Set) hintRuleFor(label, driver string) *hintRule {
	var hr *hintRule
	for _, c := range s.hints {
		if c.Label == label && slices.Contains(c.Drivers, driver) && (hr == nil || c.layer >= hr.layer) {
			hr = c
		}
	}
	return hr
}

// parts returns the selectors a hint with operator op and values vals
// becomes, before negation (one per value of In and NotIn, ORed by the
// caller); false when the rule has no template for op or a value does not
// translate.
func (hr *hintRule) parts(op string, vals []string) ([]string, bool) {
	var parts []string
	switch op {
	case "In", "NotIn":
		if hr.In == "" || len(vals) == 0 {
			return nil, false
		}
		for _, v := range vals {
			x, ok := hr.expandValue(hr.In, v)
			if !ok {
				return nil, false
			}
			parts = append(parts, x)
		}
	case "Gt", "Lt":
		tmpl := hr.Gt
		if op == "Lt" {
			tmpl = hr.Lt
		}
		if tmpl == "" || len(vals) != 1 {
			return nil, false
		}
		x, ok := hr.expandValue(tmpl, vals[0])
		if !ok {
			return nil, false
		}
		parts = append(parts, x)
	case "Exists", "DoesNotExist":
		if hr.Exists == "" {
			return nil, false
		}
		parts = append(parts, hr.Exists)
	default:
		return nil, false
	}
	return parts, true
}

// expandValue expands tmpl for one label value v: the rule's Value pattern
// extracts {{value}}, {{raw}} and its other named groups, and Map replaces
// the value. It is false when v does not match, is missing from Map, or is
// unsafe as {{raw}} without a pattern.
func (hr *hintRule) expandValue(tmpl, v string) (string, bool) {
	raw := v
	vars := map[string][]string{}
	if hr.re != nil {
		m := hr.re.FindStringSubmatch(v)
		if m == nil {
			return "", false
		}
		raw = m[0]
		for i, n := range hr.re.SubexpNames() {
			if n != "" && n != "raw" {
				vars[n] = []string{m[i]}
			}
		}
		if i := hr.re.SubexpIndex("value"); i > 0 {
			raw = m[i]
		}
	} else if strings.Contains(tmpl, "raw") && !safeRaw.MatchString(v) {
		return "", false
	}
	if len(hr.Map) > 0 {
		mv, ok := hr.Map[raw]
		if !ok {
			return "", false
		}
		raw = mv
	}
	vars["value"], vars["raw"] = []string{raw}, []string{raw}
	x, err := expand(tmpl, vars, map[string]string{"raw": "raw"})
	return x, err == nil
}

// instanceFamily returns the EC2 instance family a pod is pinned to, from
// node.kubernetes.io/instance-type (or the beta label) or
// karpenter.k8s.aws/instance-family, when all values agree.
func instanceFamily(hints []inventory.Hint) string {
	fam := ""
	for _, h := range hints {
		op, vals := hintValues(h)
		if op != "In" || h.Kind == inventory.HintToleration || h.Kind == inventory.HintPreferred {
			continue
		}
		for _, v := range vals {
			var f string
			switch h.Key {
			case "node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type":
				f, _, _ = strings.Cut(v, ".")
			case "karpenter.k8s.aws/instance-family":
				f = v
			default:
				continue
			}
			if fam != "" && fam != f {
				return ""
			}
			fam = f
		}
	}
	return fam
}

// isZero reports whether an extended-resource quantity asks for nothing.
func isZero(q string) bool {
	qq, err := resource.ParseQuantity(strings.TrimSpace(q))
	return err == nil && qq.IsZero()
}

// parseCount reads an extended-resource quantity: a positive whole number.
func parseCount(q string) (int64, error) {
	qq, err := resource.ParseQuantity(strings.TrimSpace(q))
	if err != nil {
		return 0, err
	}
	n, ok := qq.AsInt64()
	if !ok || n < 1 || qq.MilliValue() != n*1000 {
		return 0, fmt.Errorf("not a positive whole number")
	}
	return n, nil
}

func rawModes(vars map[string][]string) map[string]string {
	m := map[string]string{}
	for k := range vars {
		m[k] = "raw"
	}
	return m
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// lastSegment turns a resource name into a request name base:
// nvidia.com/gpu -> gpu, amd.com/cpx_nps4 -> cpx-nps4.
func lastSegment(resourceName string) string {
	_, n, ok := strings.Cut(resourceName, "/")
	if !ok {
		n = resourceName
	}
	return DNSLabel(n, "device")
}

func unique(name string, taken map[string]bool) string {
	n := name
	for i := 2; taken[n]; i++ {
		suf := "-" + strconv.Itoa(i)
		base := name
		if len(base)+len(suf) > 63 {
			base = strings.Trim(base[:63-len(suf)], "-")
		}
		n = base + suf
	}
	taken[n] = true
	return n
}
