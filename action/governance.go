package action

import (
	"bytes"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite"
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
	return plan.KueueQueued(items, p.AllowLossy)
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

// governDocuments applies the governance edits to a KRM function's items.
func (m *migration) governDocuments(docs []*inventory.Document, gov []inventory.GovFinding) {
	if len(gov) == 0 {
		return
	}
	edits, diags := plan.Governance(gov, gov, m.govOptions())
	m.res.Diagnostics = append(m.res.Diagnostics, diags...)
	if err := rewrite.ApplyGovernance(docs, edits); err != nil {
		m.fail("-", err)
		return
	}
	m.res.Governed += len(edits)
}

// kueueMarker is in the text of every Kueue object and configuration.
var kueueMarker = []byte("kueue.x-k8s.io")

// mayBeKueue reports whether a document's text can be a Kueue
// ClusterQueue or Configuration (the byte filter of migrate's first pass).
func mayBeKueue(doc []byte) bool { return bytes.Contains(doc, kueueMarker) }

// kueueFindings are the governance findings of the ClusterQueues and Kueue
// Configurations among docs: what a Configuration anywhere in the input
// needs to hold, and whether the input has one.
func kueueFindings(docs []*inventory.Document) []inventory.GovFinding {
	var out []inventory.GovFinding
	for _, f := range detect.GovernanceDocuments(docs) {
		if f.What == inventory.GovClusterQueue || f.What == inventory.GovKueueConfig {
			out = append(out, f)
		}
	}
	return out
}
