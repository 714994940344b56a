package simulate

import (
	"context"
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

// PoolSide is a pool's mode and devices in one world.
type PoolSide struct {
	Mode Mode `json:"mode"`
	PoolUsage
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
	for _, t := range bm.Templates {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if skipped[t.Key] {
			res.Skipped = append(res.Skipped, Skip{TemplateRef: t.ref(), Reason: "its after form has a quantity left as a placeholder: render it first"})
			continue
		}
		bp := before.newPod(t, bm)
		count := t.Pods
		if t.DaemonSet {
			count = before.daemonPods(bp)
		}
		wl := Workload{TemplateRef: t.ref(), Pods: count}
		pools, placed, why, err := before.place(ctx, bp, count)
		wl.Before = outcome(pools, placed, count, why)
		if err != nil {
			wl.Before.Reasons = append(wl.Before.Reasons, "the allocator rejected the claims: "+err.Error())
		}
		at := byKey[t.Key]
		if at == nil {
			at = am.others[t.Key]
		}
		if at == nil {
			wl.After = Outcome{Pools: []PoolCount{}, Reasons: []string{"not in the after manifests"}}
		} else {
			wl.Migrated = !equality.Semantic.DeepEqual(t.Spec, at.Spec)
			ap := after.newPod(at, am)
			pools, placed, why, err := after.place(ctx, ap, count)
			wl.After = outcome(pools, placed, count, why)
			if err != nil {
				wl.After.Reasons = append(wl.After.Reasons, "the allocator rejected the claims: "+err.Error())
			} else if wl.After.Pods < wl.Before.Pods {
				wl.After.Reasons = appendNew(after.explain(ctx, ap, poolSet(wl.Before.Pools), pluginDevices(bp)), wl.After.Reasons...)
			}
		}
		wl.Verdict = verdict(wl)
		res.add(wl)
	}
	res.Summary.Skipped = len(res.Skipped)
	res.pools(before, after)
	return res, nil
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
		pr.Before.PoolUsage, pr.After.PoolUsage = bu[name], au[name]
		r.Pools = append(r.Pools, pr)
	}
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
