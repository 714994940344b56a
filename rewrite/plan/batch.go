package plan

import (
	"slices"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rules"
)

// Batch plans everything one batch of a file's documents needs, in one
// FilePlan: the device edits of its workloads (File), the upgrades of DRA
// written for an earlier release (Upgrades) and the edits of objects that
// count or govern devices (Governance). The claims the batch holds are
// reserved first, so that no new object takes their names.
func (p *Planner) Batch(path string, found detect.Result) *FileResult {
	p.ReserveIn(path, found.Claims...)
	p.LearnUses(found.Uses)
	r := p.File(path, found.Findings)
	if len(found.DRA) > 0 {
		p.params.Add(found.DRA)
		ups, diags := Upgrades(found.DRA, p.params, p.opts.Target)
		r.Diagnostics = append(r.Diagnostics, diags...)
		if len(ups) > 0 {
			r.filePlan(path).Upgrades = ups
		}
	}
	if len(found.Gov) > 0 {
		if path == "-" {
			// Stdin is not read before the stream: what came so far is
			// all there is.
			p.govAll = append(p.govAll, found.Gov...)
		}
		edits, diags := Governance(found.Gov, p.govAll, p.govOptions())
		r.Diagnostics = append(r.Diagnostics, diags...)
		if len(edits) > 0 {
			r.filePlan(path).Governance = edits
		}
	}
	return r
}

// filePlan returns the result's FilePlan, made when the batch has no
// device edits.
func (r *FileResult) filePlan(path string) *FilePlan {
	if r.Plan == nil {
		r.Plan = &FilePlan{Path: path}
	}
	return r.Plan
}

// Target is the release the Planner plans for.
func (p *Planner) Target() rules.Version { return p.opts.Target }

// Learn records what a file tells the plans of other files (the documents
// detect.MayConcernOthers lets through, read before the stream): the
// claims whose names are taken, classic DRA parameters, the ClusterQueues
// and Kueue Configurations, and the classes of Kueue-queued workloads.
// It is not safe for concurrent use.
func (p *Planner) Learn(path string, found detect.Result) {
	p.ReserveIn(path, found.Claims...)
	p.params.Add(found.DRA) // parameters are kept, the rest ignored
	for _, f := range found.Gov {
		if f.What == inventory.GovClusterQueue || f.What == inventory.GovKueueConfig {
			p.govAll = append(p.govAll, f)
		}
	}
	p.LearnQueued(found.Findings)
	p.LearnUses(found.Uses)
}

// LearnUses records the namespaces of the objects that run pods from
// cluster-scoped runtimes.
func (p *Planner) LearnUses(uses []detect.RuntimeUse) {
	for _, u := range uses {
		if p.users == nil {
			p.users = map[string][]string{}
		}
		if ns := p.users[u.Runtime]; !slices.Contains(ns, u.Namespace) {
			p.users[u.Runtime] = append(ns, u.Namespace)
			slices.Sort(p.users[u.Runtime])
		}
	}
}

// govOptions are the governance options of the Planner's run: the
// resolver and options its workloads are planned with.
func (p *Planner) govOptions() GovOptions {
	o := p.opts
	return GovOptions{Resolver: p.r, Strategy: o.Strategy, Target: o.Target, AllowLossy: o.AllowLossy, Share: o.Share,
		ConsumableShares: o.ConsumableShares, Ignore: o.Ignore, Queued: p.queued}
}

// LearnQueued records the (resource, class) pairs of the Kueue-queued
// workloads among findings, decided as the Planner decides them.
func (p *Planner) LearnQueued(findings []inventory.Finding) {
	var queued []inventory.Finding
	for _, f := range findings {
		if w := f.Workload; w != nil && (w.Labels[KueueQueueLabel] != "" || w.Annotations[KueueQueueLabel] != "") {
			queued = append(queued, f)
		}
	}
	if len(queued) == 0 {
		return
	}
	o := p.opts
	items, _ := Items(queued, p.r, ItemOptions{Rules: rules.Options{Target: o.Target, AllowLossy: o.AllowLossy, Share: o.Share,
		ConsumableShares: o.ConsumableShares}, Ignore: o.Ignore})
	out := KueueQueued(items, o.AllowLossy)
	if len(out) == 0 {
		return
	}
	p.queued = append(p.queued, out...)
	for _, it := range items {
		if f := it.Finding; p.queuedAt == nil || f.Origin.Path < p.queuedAt.Origin.Path ||
			f.Origin.Path == p.queuedAt.Origin.Path && f.Line < p.queuedAt.Line {
			p.queuedAt = &f
		}
	}
}

// KueueUnmapped warns once, at the first Kueue-queued workload, when the
// classes such workloads now claim are mapped by no Kueue Configuration
// the Planner learnt of: Kueue refuses to admit them ("DeviceClass ... is
// not mapped in DRA configuration", peers.md §1.4) until the cluster's
// Configuration, usually in another repository, maps them. KEP-5004 pods
// need no mapping, and ClusterQueues in the input have their own warning.
func (p *Planner) KueueUnmapped() *inventory.Diagnostic {
	if len(p.queued) == 0 || p.queuedAt == nil || p.opts.Strategy == ExtendedResource || !p.opts.KueueMapsClasses {
		return nil
	}
	mapped := p.kueueMapped()
	var need []KueueMapping
	var classes []string
	for _, q := range p.queued {
		for _, c := range q.Classes {
			if mapped[c] {
				continue
			}
			mapped[c] = true
			classes = append(classes, c)
			i := slices.IndexFunc(need, func(n KueueMapping) bool { return n.Name == q.Name })
			if i < 0 {
				need = append(need, KueueMapping{Name: q.Name})
				i = len(need) - 1
			}
			need[i].Classes = append(need[i].Classes, c)
		}
	}
	if len(need) == 0 {
		return nil
	}
	slices.SortFunc(need, func(a, b KueueMapping) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(classes)
	f := p.queuedAt
	return &inventory.Diagnostic{Severity: inventory.Info, Rule: RuleGovKueueConfig, File: f.Origin.Path, Line: f.Line,
		Object:  &inventory.ObjectRef{Kind: f.Kind, Namespace: f.Namespace, Name: f.Name},
		Message: "workloads in Kueue queues now claim devices of class " + strings.Join(classes, ", ") + ", which --kueue-maps-classes says the cluster's Kueue Configuration maps: Kueue admits such a workload only when its Configuration has a deviceClassMappings entry for each class",
		Fix:     "check that Kueue's Configuration (ConfigMap kueue-manager-config, controller_manager_config.yaml) has:\n" + KueueSnippet(need)}
}

// AllItems are the Items of everything detection found (scan, check): the
// device-plugin requests, DRA written for an earlier release against the
// target (status dra-upgrade, or unmapped) and the objects that count or
// govern devices, judged as migrate's default strategy (claims) would
// leave them, in order. A zero target is rules.DefaultTarget.
func AllItems(found detect.Result, r Resolver, opts ItemOptions) ([]Item, inventory.Diagnostics) {
	items, bugs := Items(found.Findings, r, opts)
	target := opts.Rules.Target
	if target == (rules.Version{}) {
		target = rules.DefaultTarget
	}
	ups := UpgradeItems(found.DRA, target, opts.Ignore)
	var govs []Item
	if len(found.Gov) > 0 {
		gopts := GovOptions{Resolver: r, Strategy: Claims, Target: target, Ignore: opts.Ignore, Queued: KueueQueued(items, false)}
		govs = GovernanceItems(found.Gov, gopts)
	}
	if len(ups)+len(govs) > 0 {
		items = append(append(items, ups...), govs...)
		SortItems(items)
	}
	return items, bugs
}
