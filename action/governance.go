package action

import (
	"bytes"
	"slices"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// withGovernance adds the findings about objects that count or govern
// devices (status governance) to the items, in order. Scan judges them
// as migrate's default strategy (claims) would leave them.
func withGovernance(items []plan.Item, govs []inventory.GovFinding, set *rules.Set, opts ScanOptions) []plan.Item {
	if len(govs) == 0 {
		return items
	}
	target := opts.Target
	if target == (rules.Version{}) {
		target = rules.DefaultTarget
	}
	gopts := plan.GovOptions{Resolver: set, Strategy: plan.Claims, Target: target, Ignore: opts.Ignore, Queued: plan.KueueQueued(items, false)}
	items = append(items, plan.GovernanceItems(govs, gopts)...)
	plan.SortItems(items)
	return items
}

// govOptions are the governance options of a migration: the resolver and
// options its workloads are planned with.
func (m *migration) govOptions() plan.GovOptions {
	p := m.opts.Plan
	strategy := p.Strategy
	if strategy == "" {
		strategy = plan.Claims
	}
	return plan.GovOptions{Resolver: m.resolver, Strategy: strategy, Target: m.target, AllowLossy: p.AllowLossy, Share: p.Share,
		ConsumableShares: p.ConsumableShares, Ignore: p.Ignore, Queued: m.queued}
}

// queuedClasses are the (resource, class) pairs of the Kueue-queued
// workloads among findings, decided as migrate decides them.
func (m *migration) queuedClasses(findings []inventory.Finding) []plan.KueueMapping {
	var queued []inventory.Finding
	for _, f := range findings {
		if w := f.Workload; w != nil && (w.Labels[plan.KueueQueueLabel] != "" || w.Annotations[plan.KueueQueueLabel] != "") {
			queued = append(queued, f)
		}
	}
	if len(queued) == 0 {
		return nil
	}
	p := m.opts.Plan
	items, _ := plan.Items(queued, m.resolver, plan.ItemOptions{Rules: rules.Options{Target: m.target, AllowLossy: p.AllowLossy, Share: p.Share,
		ConsumableShares: p.ConsumableShares}, Ignore: p.Ignore})
	out := plan.KueueQueued(items, p.AllowLossy)
	if len(out) > 0 {
		for _, it := range items {
			if f := it.Finding; m.queuedAt == nil || f.Origin.Path < m.queuedAt.Origin.Path ||
				f.Origin.Path == m.queuedAt.Origin.Path && f.Line < m.queuedAt.Line {
				m.queuedAt = &f
			}
		}
	}
	return out
}

// queuedUnmapped warns once, at the first Kueue-queued workload, when the
// classes such workloads now claim are mapped by no Kueue Configuration
// in the input: Kueue refuses to admit them ("DeviceClass ... is not
// mapped in DRA configuration", peers.md §1.4) until the cluster's
// Configuration, usually in another repository, maps them. KEP-5004 pods
// need no mapping, and ClusterQueues in the input have their own warning.
func (m *migration) queuedUnmapped() *inventory.Diagnostic {
	if len(m.queued) == 0 || m.queuedAt == nil || m.opts.Plan.Strategy == plan.ExtendedResource {
		return nil
	}
	mapped := map[string]bool{}
	for _, f := range m.govAll {
		switch f.What {
		case inventory.GovClusterQueue:
			return nil
		case inventory.GovKueueConfig:
			for _, cs := range f.Mappings {
				for _, c := range cs {
					mapped[c] = true
				}
			}
		}
	}
	var need []plan.KueueMapping
	var classes []string
	for _, q := range m.queued {
		for _, c := range q.Classes {
			if mapped[c] {
				continue
			}
			mapped[c] = true
			classes = append(classes, c)
			i := slices.IndexFunc(need, func(n plan.KueueMapping) bool { return n.Name == q.Name })
			if i < 0 {
				need = append(need, plan.KueueMapping{Name: q.Name})
				i = len(need) - 1
			}
			need[i].Classes = append(need[i].Classes, c)
		}
	}
	if len(need) == 0 {
		return nil
	}
	slices.SortFunc(need, func(a, b plan.KueueMapping) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(classes)
	f := m.queuedAt
	return &inventory.Diagnostic{Severity: inventory.Warning, Rule: plan.RuleGovKueueConfig, File: f.Origin.Path, Line: f.Line,
		Object:  &inventory.ObjectRef{Kind: f.Kind, Namespace: f.Namespace, Name: f.Name},
		Message: "workloads in Kueue queues now claim devices of class " + strings.Join(classes, ", ") + ", and no Kueue Configuration in the input maps them: Kueue admits such a workload only when its Configuration has a deviceClassMappings entry for each class",
		Fix:     "add to Kueue's Configuration (ConfigMap kueue-manager-config, controller_manager_config.yaml) and restart Kueue, or migrate with the Configuration among the inputs:\n" + plan.KueueSnippet(need)}
}

// govern plans the governance edits of one batch and adds them to its
// file plan (making one when the batch has no other edits).
func (m *migration) govern(st *fileState, path string, gov []inventory.GovFinding, fp *plan.FilePlan) *plan.FilePlan {
	if len(gov) == 0 {
		return fp
	}
	if path == "-" {
		// Stdin is not read before the stream: what came so far is all
		// there is.
		m.govAll = append(m.govAll, gov...)
	}
	edits, diags := plan.Governance(gov, m.govAll, m.govOptions())
	st.diags = append(st.diags, diags...)
	if len(edits) == 0 {
		return fp
	}
	if fp == nil {
		fp = &plan.FilePlan{Path: path}
		if m.res.Plan != nil {
			st.plans = append(st.plans, fp)
		}
	}
	fp.Governance = append(fp.Governance, edits...)
	st.governed += len(edits)
	return fp
}

// kueueMarker is in the text of every Kueue object and configuration.
var kueueMarker = []byte("kueue.x-k8s.io")

// mayBeKueue reports whether a document's text can be a Kueue
// ClusterQueue or Configuration (the byte filter of migrate's first pass).
func mayBeKueue(doc []byte) bool { return bytes.Contains(doc, kueueMarker) }

// kueueFindings are the governance findings of the ClusterQueues and Kueue
// Configurations among gov: what a Configuration anywhere in the input
// needs to hold, and whether the input has one.
func kueueFindings(gov []inventory.GovFinding) []inventory.GovFinding {
	var out []inventory.GovFinding
	for _, f := range gov {
		if f.What == inventory.GovClusterQueue || f.What == inventory.GovKueueConfig {
			out = append(out, f)
		}
	}
	return out
}
