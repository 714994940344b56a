package action

import (
	"bytes"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// parameterGroups are the API groups of classic DRA parameter kinds.
var parameterGroups = func() [][]byte {
	var out [][]byte
	for _, g := range detect.ParameterGroups {
		out = append(out, []byte(g))
	}
	return out
}()

// mayBeParameters reports whether a document's text can hold classic DRA
// parameters (the byte filter of migrate's first pass).
func mayBeParameters(doc []byte) bool {
	for _, g := range parameterGroups {
		if bytes.Contains(doc, g) {
			return true
		}
	}
	return false
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
