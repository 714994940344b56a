package action

import (
	"path/filepath"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/proof"
)

// holds reports whether the file at path is held back until the proof:
// a kustomize build unit covers it (migrate -w, diff or --out).
func (m *migration) holds(path string) bool {
	return m.emit != nil && m.emit.Hold != nil && m.emit.Hold(path)
}

// prove proves every kustomize unit a held file reaches (proof.Tree),
// then writes and counts the held files of the units that pass; each
// request of a dropped file says why it is left as it was.
func (m *migration) prove() {
	held := m.emit.Held()
	if len(held) == 0 {
		return
	}
	changes := make([]proof.Change, len(held))
	for i, h := range held {
		changes[i] = proof.Change{Path: h.Path, Abs: absPath(m.in.open(h.Path)), New: h.New}
	}
	m.res.Units = proof.Tree(m.tree, changes, func(p string) string { return absPath(m.in.open(p)) }, bundle.CatalogueFamilies())
	for _, r := range m.res.Units {
		m.res.Diagnostics = append(m.res.Diagnostics, r.Diagnostics()...)
		if r.Status == proof.Failed {
			m.res.Failed++
		}
	}
	keep, holding := proof.Keep(m.tree), m.tree.Held()
	for _, st := range m.pending {
		if keep(st.path) {
			m.merge(st)
			continue
		}
		// Left as it was: each request says why.
		for _, x := range st.findings {
			m.res.Diagnostics = append(m.res.Diagnostics, m.tree.HeldDiagnostic(x, holding[filepath.Clean(st.path)]))
		}
		if st.bad {
			m.res.Failed++
		}
	}
	if m.opts.PlanOnly {
		return // --plan: nothing is written
	}
	for _, h := range held {
		if keep(h.Path) {
			m.res.Changed++
		}
	}
	m.emit.Release(keep, m.fail)
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
