package simulate

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubedra/kubedra/rules"
)

// Verdicts of a workload.
const (
	Same     = "same"
	Worse    = "worse"
	Better   = "better"
	NeverFit = "never-fit"
)

// Result is a simulation: per workload pod template and per pool.
type Result struct {
	Workloads []Workload `json:"workloads"`
	// Skipped are the templates simulate cannot judge, in either world.
	Skipped []Skip       `json:"skipped"`
	Pools   []PoolResult `json:"pools"`
	Summary Summary      `json:"summary"`
}

// Workload is one pod template's outcome in both worlds.
type Workload struct {
	TemplateRef
	Pods int `json:"pods"`
	// Migrated is true when the after pod template differs from the
	// before one.
	Migrated bool    `json:"migrated"`
	Before   Outcome `json:"before"`
	After    Outcome `json:"after"`
	Verdict  string  `json:"verdict"`
}

// Outcome is where a template's pods landed in one world. Reasons say why
// not all of them did: the nodes that rejected them counted per reason
// ("3 nodes: untolerated taint ..."), or what keeps the pod off every
// node; after a move that fits fewer, first what changed. Empty (never
// nil) when every pod fits.
type Outcome struct {
	Fits    bool        `json:"fits"`
	Pods    int         `json:"pods"`
	Pools   []PoolCount `json:"pools"`
	Reasons []string    `json:"reasons"`
}

// MarshalJSON writes an outcome's lists as [] when they are empty, however
// it was built: simulate's JSON promises every list.
func (o Outcome) MarshalJSON() ([]byte, error) {
	type plain Outcome // without this method
	p := plain(o)
	if p.Pools == nil {
		p.Pools = []PoolCount{}
	}
	if p.Reasons == nil {
		p.Reasons = []string{}
	}
	return json.Marshal(p)
}

// PoolCount is the pods of a template on one pool.
type PoolCount struct {
	Pool string `json:"pool"`
	Pods int    `json:"pods"`
}

// PoolResult is a pool in both worlds.
type PoolResult struct {
	Name   string   `json:"name"`
	Shape  string   `json:"shape,omitempty"`
	Nodes  int      `json:"nodes"`
	Before PoolSide `json:"before"`
	After  PoolSide `json:"after"`
}

// PoolSide is a pool's mode and devices, per family, in one world.
type PoolSide struct {
	Mode    Mode          `json:"mode"`
	Devices []FamilyUsage `json:"devices"`
}

// Summary counts the verdicts and the pods placed.
type Summary struct {
	Workloads  int `json:"workloads"`
	Same       int `json:"same"`
	Worse      int `json:"worse"`
	Better     int `json:"better"`
	NeverFit   int `json:"neverFit"`
	Pods       int `json:"pods"`
	PodsBefore int `json:"podsBefore"`
	PodsAfter  int `json:"podsAfter"`
	// Skipped counts the templates simulate could not judge.
	Skipped int `json:"skipped"`
}

// Worse reports whether some workload fits worse after the move.
func (r *Result) Worse() bool { return r.Summary.Worse > 0 }

// Run packs the before manifests into the before world and the after
// manifests into the after world, template by template in the before
// manifests' order, and compares. A template whose after form asks no
// device is packed as it is; one missing from the after manifests is
// worse.
func Run(ctx context.Context, before, after *World, bm, am *Manifests) (*Result, error) {
	res := &Result{Workloads: []Workload{}, Skipped: append([]Skip{}, bm.Skipped...), Pools: []PoolResult{}}
	byKey := map[string]*Template{}
	for _, t := range am.Templates {
		byKey[t.Key] = t
	}
	skipped := map[string]bool{}
	for _, s := range am.Skipped {
		skipped[s.key] = true
	}
	ts := bm.Templates
	for i := 0; i < len(ts); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// A unit is one template, or the templates of a gang.
		j := i + 1
		for ts[i].Gang != "" && j < len(ts) && ts[j].Gang == ts[i].Gang {
			j++
		}
		var unit []*Template
		for _, t := range ts[i:j] {
			if skipped[t.Key] {
				res.Skipped = append(res.Skipped, Skip{TemplateRef: t.ref(), Reason: "its after form has a quantity left as a placeholder: render it first"})
				continue
			}
			unit = append(unit, t)
		}
		i = j
		if len(unit) > 0 {
			res.judge(ctx, before, after, bm, am, unit, byKey)
		}
	}
	res.Summary.Skipped = len(res.Skipped)
	res.pools(before, after)
	return res, nil
}

// judge packs a unit of templates in both worlds and adds their verdicts.
func (r *Result) judge(ctx context.Context, before, after *World, bm, am *Manifests, unit []*Template, byKey map[string]*Template) {
	wls := make([]Workload, len(unit))
	bps, aps := make([]*pod, len(unit)), make([]*pod, len(unit))
	counts := make([]int, len(unit))
	for k, t := range unit {
		bps[k] = before.newPod(t, bm)
		counts[k] = t.Pods
		if t.DaemonSet {
			counts[k] = before.daemonPods(bps[k])
		}
		wls[k] = Workload{TemplateRef: t.ref(), Pods: counts[k]}
	}
	outs, _ := before.placeUnit(ctx, unit, bps, counts)
	missing := ""
	for k, t := range unit {
		wls[k].Before = outs[k]
		at := byKey[t.Key]
		if at == nil {
			at = am.others[t.Key]
		}
		if at == nil {
			missing = t.PodTemplatePath
			continue
		}
		wls[k].Migrated = !equality.Semantic.DeepEqual(t.Spec, at.Spec)
		aps[k] = after.newPod(at, am)
	}
	if missing != "" {
		for k := range unit {
			why := "not in the after manifests"
			if aps[k] != nil {
				why = "the group schedules whole or not at all: " + missing + " is not in the after manifests"
			}
			wls[k].After = Outcome{Pools: []PoolCount{}, Reasons: []string{why}}
		}
	} else {
		outs, failed := after.placeUnit(ctx, unit, aps, counts)
		for k := range unit {
			wls[k].After = outs[k]
			if !failed[k] && wls[k].After.Pods < wls[k].Before.Pods {
				wls[k].After.Reasons = appendNew(after.explain(ctx, aps[k], poolSet(wls[k].Before.Pools), pluginDevices(bps[k])), outs[k].Reasons...)
			}
		}
	}
	for _, wl := range wls {
		wl.Verdict = verdict(wl)
		r.add(wl)
	}
}

// placeUnit packs the pods of a unit: one template's pods one by one, or
// a gang's groups, each whole (every template's share of the group) or
// not at all, giving back what a group that does not fit took. failed
// says which templates' claims the allocator rejected.
func (w *World) placeUnit(ctx context.Context, unit []*Template, pods []*pod, counts []int) (outs []Outcome, failed []bool) {
	outs, failed = make([]Outcome, len(pods)), make([]bool, len(pods))
	groups := unit[0].Groups
	if unit[0].Gang == "" || groups == 0 {
		pools, placed, why, err := w.place(ctx, pods[0], counts[0])
		outs[0] = outcome(pools, placed, counts[0], why)
		if err != nil {
			outs[0].Reasons, failed[0] = append(outs[0].Reasons, "the allocator rejected the claims: "+err.Error()), true
		}
		return outs, failed
	}
	pools, placed, whys := make([]map[string]int, len(pods)), make([]int, len(pods)), make([][]string, len(pods))
	for k := range pools {
		pools[k] = map[string]int{}
	}
	var journal []placement
	w.journal = &journal
	defer func() { w.journal = nil }()
	for range groups {
		journal = journal[:0]
		short, got := -1, make([]map[string]int, len(pods))
		for k, p := range pods {
			per := counts[k] / groups
			pl, n, why, err := w.place(ctx, p, per)
			got[k] = pl
			if err != nil {
				why, failed[k] = append(why, "the allocator rejected the claims: "+err.Error()), true
			}
			if n < per || err != nil {
				short, whys[k] = k, why
				note := fmt.Sprintf("the group schedules whole or not at all: %s places %d of its %d pods", unit[k].PodTemplatePath, n, per)
				for k2 := range pods {
					whys[k2] = append([]string{note}, whys[k2]...)
				}
				break
			}
		}
		if short >= 0 {
			w.undo(journal)
			break
		}
		for k := range pods {
			for pool, n := range got[k] {
				pools[k][pool] += n
			}
			placed[k] += counts[k] / groups
		}
	}
	for k := range pods {
		var why []string
		if placed[k] < counts[k] {
			why = whys[k]
		}
		outs[k] = outcome(pools[k], placed[k], counts[k], why)
	}
	return outs, failed
}

// appendNew appends the strings of add that l does not hold.
func appendNew(l []string, add ...string) []string {
	for _, s := range add {
		l = appendOnce(l, s)
	}
	return l
}

func poolSet(l []PoolCount) map[string]int {
	m := map[string]int{}
	for _, p := range l {
		m[p.Pool] = p.Pods
	}
	return m
}

// pluginDevices is the number of device units one pod asked through
// extended resources.
func pluginDevices(p *pod) int64 {
	var n int64
	for r, q := range p.requests {
		if deviceResource(r) {
			n += q
		}
	}
	return n
}

// outcome is where pods landed and, when not all did, why (never nil).
func outcome(pools map[string]int, placed, want int, why []string) Outcome {
	o := Outcome{Fits: placed == want, Pods: placed, Pools: []PoolCount{}, Reasons: append([]string{}, why...)}
	for p, n := range pools {
		o.Pools = append(o.Pools, PoolCount{Pool: p, Pods: n})
	}
	sort.Slice(o.Pools, func(i, j int) bool { return o.Pools[i].Pool < o.Pools[j].Pool })
	return o
}

func verdict(w Workload) string {
	switch {
	case w.After.Pods < w.Before.Pods:
		return Worse
	case w.After.Pods > w.Before.Pods:
		return Better
	case w.Before.Fits:
		return Same
	}
	return NeverFit
}

func (r *Result) add(w Workload) {
	r.Workloads = append(r.Workloads, w)
	s := &r.Summary
	s.Workloads++
	s.Pods += w.Pods
	s.PodsBefore += w.Before.Pods
	s.PodsAfter += w.After.Pods
	switch w.Verdict {
	case Same:
		s.Same++
	case Worse:
		s.Worse++
	case Better:
		s.Better++
	case NeverFit:
		s.NeverFit++
	}
}

func (r *Result) pools(before, after *World) {
	bu, au := before.Usage(), after.Usage()
	names := append([]string(nil), before.Pools()...)
	for _, p := range after.Pools() {
		if !containsString(names, p) {
			names = append(names, p)
		}
	}
	for _, name := range names {
		pr := PoolResult{Name: name}
		for _, n := range before.Nodes {
			if n.Pool == name {
				pr.Nodes++
				pr.Shape, pr.Before.Mode = n.Shape, mergeMode(pr.Before.Mode, n.Mode)
			}
		}
		for _, n := range after.Nodes {
			if n.Pool == name {
				pr.After.Mode = mergeMode(pr.After.Mode, n.Mode)
				if pr.Shape == "" {
					pr.Shape = n.Shape
				}
			}
		}
		pr.Before.Devices, pr.After.Devices = orEmpty(bu[name]), orEmpty(au[name])
		r.Pools = append(r.Pools, pr)
	}
}

func orEmpty(l []FamilyUsage) []FamilyUsage {
	if l == nil {
		return []FamilyUsage{}
	}
	return l
}

// ModeMixed is a pool whose nodes are in different modes (read from a
// cluster mid-cutover).
const ModeMixed Mode = "mixed"

func mergeMode(have, m Mode) Mode {
	if have == "" || have == m {
		return m
	}
	return ModeMixed
}

// Worlds builds the before and after worlds of an inventory: each pool's
// nodes, named <pool>-<i>, in the mode of each world, with the shape's
// view for that mode.
func Worlds(inv *Inventory, target rules.Version, beforeClasses, afterClasses []*resourceapi.DeviceClass) (*World, *World) {
	before := NewWorld("before", target, beforeClasses)
	after := NewWorld("after", target, afterClasses)
	for _, p := range inv.Pools {
		// The nodes of a pool share their views (read-only).
		views := map[Mode]View{ModePlugin: p.Shape.PluginView(p.Options), ModeDRA: p.Shape.DRAView(p.Options)}
		for i := range p.Count {
			name := fmt.Sprintf("%s-%d", p.Name, i)
			before.AddNode(p.node(name, p.Before, views[p.Before]))
			after.AddNode(p.node(name, p.After, views[p.After]))
		}
	}
	return before, after
}

// node is the NodeSpec of one node of the pool in a mode.
func (p Pool) node(name string, m Mode, v View) NodeSpec {
	s := NodeSpec{Name: name, Pool: p.Name, Shape: p.Shape.Name, Mode: m, Taints: p.Taints}
	s.Labels = map[string]string{}
	for k, val := range v.Labels {
		s.Labels[k] = val
	}
	for k, val := range p.Labels {
		s.Labels[k] = val
	}
	s.Devices = v.Devices
	s.Allocatable = map[string]int64{}
	for k, val := range v.Allocatable {
		s.Allocatable[k] = val
	}
	return s
}
