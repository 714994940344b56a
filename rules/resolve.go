package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules/selector"
)

// features returns the CEL features the API server of target enables by
// default (DRAConsumableCapacity is beta-on from 1.36; list attributes are
// alpha).
func features(target Version) selector.Features {
	return selector.Features{ConsumableCapacity: target.AtLeast(Version{1, 36})}
}

var compiled sync.Map // features+expr -> error

// checkCEL compiles a generated expression for target (cached).
func checkCEL(expr string, target Version) error {
	f := features(target)
	key := fmt.Sprint(f.ConsumableCapacity, "\x00", expr)
	if v, ok := compiled.Load(key); ok {
		if v == nil {
			return nil
		}
		return v.(error)
	}
	_, err := selector.Compile(expr, f)
	if err != nil {
		compiled.Store(key, err)
		return err
	}
	compiled.Store(key, nil)
	return nil
}

// TemplatePaths returns the CRD pod-template paths user rules files add.
func (s *Set) TemplatePaths() []inventory.TemplatePath {
	return slices.Clone(s.templatePaths)
}

// Naming returns the naming overrides of the rules files.
func (s *Set) Naming() Naming { return s.naming }

// match is a rule chosen for a request, with its variables.
type match struct {
	r    *rule
	vars map[string][]string
	// whenHints are hint indexes that made a When condition true.
	whenHints []int
}

// activeHints returns the indexes of hints that Resolve may translate:
// nodeSelector entries and required node-affinity expressions, the latter
// only when the affinity has one term (terms are ORed: orTerms translates
// several together).
func activeHints(hints []inventory.Hint) []int {
	multiTerm := false
	for _, h := range hints {
		if h.Kind == inventory.HintNodeAffinity && (h.Term > 0 || len(h.TermRests) > 1) {
			multiTerm = true
		}
	}
	var out []int
	for i, h := range hints {
		switch h.Kind {
		case inventory.HintNodeSelector:
			out = append(out, i)
		case inventory.HintNodeAffinity:
			if !multiTerm {
				out = append(out, i)
			}
		}
	}
	return out
}

func hintValues(h inventory.Hint) (op string, values []string) {
	op = h.Operator
	if op == "" {
		op = "In"
	}
	return op, h.Values
}

// find returns the rule that applies to resource in a pod with hints.
func (s *Set) find(resource string, hints []inventory.Hint, active []int) *match {
	var best *match
	bestRank := -1
	for _, r := range s.rules {
		if r.disabled || r.replacedBy != "" {
			continue
		}
		vars, ok := r.matchVars(resource)
		if !ok {
			continue
		}
		var when []int
		if r.When != nil {
			h, ok := r.whenHint(hints, active, vars)
			if !ok {
				continue
			}
			when = []int{h}
		}
		// Later layers win; within a layer a satisfied When beats none, an
		// exact name beats a pattern, and the first rule in file order wins.
		rank := r.layer * 4
		if r.When != nil {
			rank += 2
		}
		if r.Resource != "" {
			rank++
		}
		if rank > bestRank {
			for name, v := range r.Values {
				vars[name] = transform(v.Transform, strings.Join(vars[v.From], ""))
			}
			best, bestRank = &match{r: r, vars: vars, whenHints: when}, rank
		}
	}
	return best
}

// matchVars reports whether the rule names resource, and returns the
// variables the named groups of its match pattern capture.
func (r *rule) matchVars(resource string) (map[string][]string, bool) {
	vars := map[string][]string{}
	if r.Resource != "" {
		return vars, r.Resource == resource
	}
	m := r.re.FindStringSubmatch(resource)
	if m == nil {
		return vars, false
	}
	for i, n := range r.re.SubexpNames() {
		if n != "" {
			vars[n] = []string{m[i]}
		}
	}
	return vars, true
}

// whenHint returns the first of the active hints that satisfies the rule's
// When condition, false when none does; it adds the variables when.match
// captures from the hint's value to vars.
func (r *rule) whenHint(hints []inventory.Hint, active []int, vars map[string][]string) (int, bool) {
	w := r.When
	for _, i := range active {
		h := hints[i]
		op, vals := hintValues(h)
		if h.Key != w.Label || op != "In" {
			continue
		}
		for _, v := range vals {
			if len(w.Values) > 0 && !slices.Contains(w.Values, v) {
				continue
			}
			if r.whenRe != nil {
				m := r.whenRe.FindStringSubmatch(v)
				if m == nil {
					continue
				}
				for j, n := range r.whenRe.SubexpNames() {
					if n != "" {
						vars[n] = []string{m[j]}
					}
				}
			}
			return i, true
		}
	}
	return 0, false
}

// transform applies a named Value transform.
func transform(name, v string) []string {
	switch name {
	case "lower":
		return []string{strings.ToLower(v)}
	case "nvidiaMIGProfile":
		return migProfiles(v)
	}
	return []string{v}
}

var migRe = regexp.MustCompile(`^([0-9]+c\.)?([0-9]+g\.[0-9]+gb)\.(.+)$`)

// migProfiles undoes the NVIDIA device plugin's '+' -> '.' substitution in
// MIG resource names: 1g.10gb.me is profile 1g.10gb+me. Only the part after
// the memory size is affected; when it holds more dots, both readings
// (only the first dot was a '+', or all were) are candidates.
func migProfiles(name string) []string {
	m := migRe.FindStringSubmatch(name)
	if m == nil {
		return []string{name}
	}
	base, attrs := m[1]+m[2], m[3]
	out := []string{base + "+" + attrs}
	if all := base + "+" + strings.ReplaceAll(attrs, ".", "+"); all != out[0] {
		out = append(out, all)
	}
	return out
}

// shares returns the rule's consumable shares when opts ask for them.
func shares(r *rule, opts Options) *ConsumableShares {
	if r.Sharing == nil || !opts.ConsumableShares {
		return nil
	}
	return r.Sharing.ConsumableShares
}

// reqState is the working state for one PodRequest.
type reqState struct {
	d      Decision
	m      *match
	count  int64
	spec   resourcev1.ExactDeviceRequest
	shared bool
	// base is the request base name ("-attached" for a capacity request
	// merged into another request), claimBase the claim base name.
	base      string
	claimBase string
	host      int   // for attached requests: index of the host request
	hintUse   []int // hint indexes this request translated
	podSels   bool  // some selectors come from the pod, not the rule
}

// mapped reports whether the request's status is one a claim can serve
// (mappable, or lossy).
func (st *reqState) mapped() bool { return st.d.Status == Mappable || st.d.Status == Lossy }

// unmap marks the request unmapped for reason, with fix as the way out; it
// loses nothing, since nothing is applied.
func (st *reqState) unmap(reason, fix string) {
	st.d.Status = Unmapped
	st.d.Reason = reason
	st.d.Fix = fix
	st.d.Loss = ""
}

// Resolve decides, for every device request of one pod template, how it maps
// to DRA, and builds the claims that express the mapped ones. It returns an
// error only for a broken rule set; problems with the pod are decisions.
func (s *Set) Resolve(pod Pod, opts Options) (Resolution, error) {
	target := opts.Target
	if target == (Version{}) {
		target = DefaultTarget
	}
	active := activeHints(pod.Hints)
	states := make([]*reqState, len(pod.Requests))

	// Pass 1: rule, status, count.
	for i, pr := range pod.Requests {
		states[i] = s.decide(pr, pod.Hints, active, target)
	}

	// Pass 2: capacity resources (HAMi) attach to a request of the same
	// container and make it lossy too.
	for i := range pod.Requests {
		attachCapacity(pod, states, i)
	}

	// Pass 3: request specs, selectors and hint translations.
	for i, pr := range pod.Requests {
		if err := s.specify(pod, opts, target, active, states[i], pr); err != nil {
			return Resolution{}, err
		}
	}
	return s.assemble(pod, opts, states, active), nil
}

// decide finds the rule for one request and sets its status and device
// count: unmapped when no rule, the target or the quantity allows a mapping.
func (s *Set) decide(pr PodRequest, hints []inventory.Hint, active []int, target Version) *reqState {
	st := &reqState{d: Decision{Status: Unmapped, Claim: -1}}
	m := s.find(pr.Resource, hints, active)
	if m == nil {
		st.d.Reason = fmt.Sprintf("no rule maps %s", pr.Resource)
		st.d.Fix = "add a rule for it in a rules file (see docs/rules.md) and pass --rules FILE"
		return st
	}
	st.m = m
	r := m.r
	st.d.Rule = &RuleRef{ID: r.ID, Source: r.source}
	st.d.Driver = r.Driver
	if r.DeviceClass != "" {
		st.d.DeviceClass, _ = expand(r.DeviceClass, m.vars, rawModes(m.vars))
	}
	st.d.Status = r.Status
	st.d.Loss, st.d.Reason, st.d.Fix = r.Loss, r.Reason, r.Fix
	if r.Status == Unmapped || r.Status == DRABacked {
		if n, err := parseCount(pr.Quantity); err == nil {
			st.d.Count = n
		}
		return st
	}
	if r.minimum != (Version{}) && target.Less(r.minimum) {
		st.unmap(fmt.Sprintf("%s needs Kubernetes %s or newer (target is %s)", r.Driver, r.minimum, target),
			fmt.Sprintf("pass --target-version %s or newer, or keep this workload on the device plugin", r.minimum))
		return st
	}
	if isZero(pr.Quantity) {
		st.d.Zero = true
		st.d.Reason = "asks for no device: migrate removes the entry and adds no claim"
		st.d.Loss = ""
		return st
	}
	n, err := parseCount(pr.Quantity)
	if err != nil {
		st.unmap(fmt.Sprintf("quantity %q of %s is not a whole number kubedra can read", pr.Quantity, pr.Resource),
			"render the manifest first (helm template, kustomize build) so the quantity is a number, then scan the output")
		return st
	}
	st.count = n
	if c := r.Count; c != nil {
		per := c.UnitsPerDevice
		if fam := instanceFamily(hints); fam != "" {
			if v, ok := c.ByInstanceFamily[fam]; ok {
				per = v
			}
		}
		st.count = (n + per - 1) / per
		st.d.Loss = fmt.Sprintf("%d %s → %d device(s) at %d per device: %s", n, pr.Resource, st.count, per, r.Loss)
	}
	st.d.Count = st.count
	if r.Capacity != nil {
		st.d.Count = 0 // a capacity (MiB, percent), not devices
	}
	return st
}

// attachCapacity merges the capacity request i (HAMi memory, cores) into
// the request it modifies in the same container, which becomes lossy, and
// leaves it unmapped when kubedra maps no such request.
func attachCapacity(pod Pod, states []*reqState, i int) {
	st, pr := states[i], pod.Requests[i]
	if st.m == nil || st.m.r.Capacity == nil || !st.mapped() {
		return
	}
	c := st.m.r.Capacity
	host := -1
	for j, o := range pod.Requests {
		if o.Container == pr.Container && o.ContainerType == pr.ContainerType && o.Resource == c.AttachTo {
			host = j
		}
	}
	if host < 0 || states[host].m == nil || !states[host].mapped() {
		st.unmap(fmt.Sprintf("%s modifies a %s request in the same container, and there is none that kubedra maps", pr.Resource, c.AttachTo),
			fmt.Sprintf("request %s in container %s, or keep the workload on the device plugin", c.AttachTo, pr.Container))
		return
	}
	hs := states[host]
	st.d.Driver, st.d.DeviceClass = hs.d.Driver, hs.d.DeviceClass
	st.d.Count = 0
	if hs.d.Status == Mappable {
		hs.d.Status = Lossy
		hs.d.Loss = st.m.r.Loss
		hs.d.Fix = st.m.r.Fix
	}
	if c.Name != "" {
		q, err := resource.ParseQuantity(pr.Quantity + c.Unit)
		if err != nil {
			st.d.Status = Unmapped
			st.d.Reason = fmt.Sprintf("quantity %q of %s is not a number kubedra can read", pr.Quantity, pr.Resource)
			st.d.Fix = "render the manifest first so the quantity is a number"
			return
		}
		drv := hs.d.Driver
		expr := fmt.Sprintf(`has(device.capacity[%s].%s) && device.capacity[%s].%s.compareTo(quantity(%s)) >= 0`,
			celString(drv), c.Name, celString(drv), c.Name, celString(q.String()))
		hs.spec.Selectors = append(hs.spec.Selectors, cel(expr))
		hs.d.Selectors = append(hs.d.Selectors, expr)
	}
	st.base = "-attached"
	st.host = host
}

// specify builds the device request of a mapped request: its selectors, its
// request and claim names, its sharing form and whether an extended
// resource can serve it. The error is a rule selector that does not expand.
func (s *Set) specify(pod Pod, opts Options, target Version, active []int, st *reqState, pr PodRequest) error {
	if st.m == nil || st.d.Zero || st.base == "-attached" || !st.mapped() {
		return nil
	}
	r := st.m.r
	st.spec.DeviceClassName = st.d.DeviceClass
	st.spec.Count = st.count
	var sels []string
	for _, tmpl := range r.Selectors {
		x, err := expand(tmpl, st.m.vars, r.modes)
		if err != nil {
			return fmt.Errorf("rule %s (%s): %w", r.ID, r.source, err)
		}
		sels = append(sels, x)
	}
	ruleSels := len(sels)
	// Selectors from the pod (hints, a When label, a capacity) cannot
	// go into a DeviceClass that serves the resource name; the rule's
	// own, which follow from the name, can.
	st.podSels = len(st.d.Selectors) > 0 || len(st.m.whenHints) > 0
	sels = append(sels, s.hintSelectors(pod.Hints, active, st)...)
	for _, x := range sels {
		if err := checkCEL(x, target); err != nil {
			st.unmap(fmt.Sprintf("the generated selector would be rejected by the API server: %v", err),
				"fix the rule or hint translation that produced it (kubedra rules list shows the source)")
			return nil
		}
	}
	st.setSelectors(sels)
	st.base = firstNonEmpty(s.naming.Requests[pr.Resource], r.Request, lastSegment(pr.Resource))
	st.claimBase = firstNonEmpty(s.naming.Claims[pr.Resource], r.Claim, st.base)
	if !st.share(opts, target) {
		return nil
	}
	st.markExtendedResource(pr, ruleSels)
	return nil
}

// hintSelectors translates the pod's scheduling hints into selectors for the
// request's devices and records the hints they replace; ORed affinity terms
// it cannot translate make the request lossy instead.
func (s *Set) hintSelectors(hints []inventory.Hint, active []int, st *reqState) []string {
	r := st.m.r
	var sels []string
	for _, hi := range active {
		x, ok := s.translate(hints[hi], r.Driver)
		if !ok {
			continue
		}
		if x.expr != "" {
			sels = append(sels, x.expr)
			st.podSels = true
		}
		if !x.keep {
			st.hintUse = append(st.hintUse, hi)
		}
	}
	st.hintUse = append(st.hintUse, st.m.whenHints...)
	if x, use, ok, loss := s.orTerms(hints, r.Driver); !ok {
		st.d.Status = Lossy
		st.d.Loss = strings.TrimPrefix(st.d.Loss+"; "+loss, "; ")
		st.d.Fix = firstNonEmpty(st.d.Fix, "give every nodeSelectorTerm the same non-device labels, or pass --allow-lossy to keep the affinity and migrate the count")
	} else {
		if x != "" {
			sels = append(sels, x)
			st.podSels = true
		}
		st.hintUse = append(st.hintUse, use...)
	}
	return sels
}

// setSelectors makes sels, followed by the capacity selectors of pass 2,
// the request's selectors; a selector that a rule and a hint both produce
// is kept once.
func (st *reqState) setSelectors(sels []string) {
	sels = append(sels, st.d.Selectors...)
	seen := map[string]bool{}
	sels = slices.DeleteFunc(sels, func(x string) bool {
		dup := seen[x]
		seen[x] = true
		return dup
	})
	st.d.Selectors = sels
	st.spec.Selectors = nil
	for _, x := range sels {
		st.spec.Selectors = append(st.spec.Selectors, cel(x))
	}
}

// share picks the request's sharing form under opts: a named shared claim
// (Share) or shares of one device (ConsumableShares, which wins). It
// returns false when target cannot serve consumable shares, leaving the
// request unmapped.
func (st *reqState) share(opts Options, target Version) bool {
	r := st.m.r
	st.shared = r.Sharing != nil && opts.Share
	if cs := shares(r, opts); cs != nil {
		st.shared = false
		if target.Less(Version{1, 36}) {
			st.unmap(fmt.Sprintf("consumable shares need DRAConsumableCapacity, off by default before Kubernetes 1.36 (target is %s)", target),
				"pass --target-version 1.36 or newer, or drop --consumable-shares")
			return false
		}
		// k replicas of the plugin's GPU: one device, k of its shares.
		if st.count > 1 {
			q := resource.NewQuantity(st.count, resource.DecimalSI)
			st.spec.Capacity = &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{resourcev1.QualifiedName(cs.Capacity): *q}}
		}
		st.spec.Count = 1
		st.d.Count = 1
		st.d.Loss = cs.Loss
	}
	if st.shared {
		st.d.Loss = r.Sharing.Loss
		st.claimBase = firstNonEmpty(r.Sharing.Claim, st.claimBase+"-shared")
	}
	return true
}

// markExtendedResource sets the extended resource name a DeviceClass could
// serve a mappable request of a plain count under (KEP-5004); ruleSels is
// how many of its selectors come from the rule.
func (st *reqState) markExtendedResource(pr PodRequest, ruleSels int) {
	r := st.m.r
	if st.d.Status != Mappable || r.Count != nil {
		return
	}
	if ruleSels > 0 {
		// A class of kubedra's with the rule's selectors (one per
		// MIG profile, as NVIDIA's extended-resource demo has).
		st.d.ExtendedResourceName = pr.Resource
	} else {
		st.d.ExtendedResourceName = firstNonEmpty(r.ExtendedResourceName, pr.Resource)
		st.d.ClassDeclares = r.ExtendedResourceName != ""
	}
}
