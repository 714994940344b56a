package action

import (
	"bytes"
	"context"
	"sync"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// collectParameters reads the files once more, parsing only documents that
// can be classic DRA parameters, so that a claim finds its parameters in a
// file migrated later. Parameters on stdin are found when they come before
// their claims.
func (m *migration) collectParameters(ctx context.Context) error {
	var paths []string
	for _, p := range m.in.Paths {
		if p != "-" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	var mu sync.Mutex
	var groups [][]byte
	for _, g := range detect.ParameterGroups {
		groups = append(groups, []byte(g))
	}
	filter := func(doc []byte) bool {
		for _, g := range groups {
			if bytes.Contains(doc, g) {
				return true
			}
		}
		return false
	}
	opts := files.Options{Dir: m.in.Dir, Batch: batchSize, Filter: filter}
	return files.Read(ctx, paths, nil, opts, func(f *files.File) error {
		fs := detect.DRADocuments(f.Docs, m.dopts)
		mu.Lock()
		m.params.Add(fs)
		mu.Unlock()
		return nil
	})
}

// upgrade plans the DRA upgrades of one batch and adds them to its file
// plan (making one when the batch has no device-plugin edits).
func (m *migration) upgrade(st *fileState, path string, dra []inventory.DRAFinding, fp *plan.FilePlan) *plan.FilePlan {
	if len(dra) == 0 {
		return fp
	}
	m.params.Add(dra)
	ups, diags := plan.Upgrades(dra, m.params, m.target)
	st.diags = append(st.diags, diags...)
	if len(ups) == 0 {
		return fp
	}
	if fp == nil {
		fp = &plan.FilePlan{Path: path}
		if m.res.Plan != nil {
			st.plans = append(st.plans, fp)
		}
	}
	fp.Upgrades = append(fp.Upgrades, ups...)
	st.upgraded += len(ups)
	return fp
}

// upgradeDocuments applies the DRA upgrades to a KRM function's items and
// returns the indexes of the items removed.
func (m *migration) upgradeDocuments(docs []*inventory.Document, dra []inventory.DRAFinding) map[int]bool {
	if len(dra) == 0 {
		return nil
	}
	m.params.Add(dra)
	ups, diags := plan.Upgrades(dra, m.params, m.target)
	m.res.Diagnostics = append(m.res.Diagnostics, diags...)
	removed, err := rewrite.ApplyUpgrades(docs, ups)
	if err != nil {
		m.fail("-", err)
		return nil
	}
	m.res.Upgraded += len(ups)
	return removed
}
