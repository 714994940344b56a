package action

import (
	"path/filepath"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/kustomize"
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
	m.confineUnits()
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

// confineUnits holds, before any proof, every unit with a file migrate
// may not write: outside the input roots (m.outside: a kustomization
// reaching ../../elsewhere would get a claims file there), hard-linked or
// read-only (emit.Emitter.Writable). The unit is refused whole, each of
// its files keeps its bytes, and an error names the path. A path no unit
// reaches is a failed file.
func (m *migration) confineUnits() {
	refusals := append([]refused{}, m.outside...)
	sides := len(refusals)
	if !m.opts.PlanOnly {
		for _, h := range m.emit.Held() {
			if err := m.emit.Writable(h.Path, h.IsNew); err != nil {
				refusals = append(refusals, refused{h.Path, err})
			}
		}
	}
	for i, o := range refusals {
		p, refused := filepath.Clean(o.path), false
		for _, k := range m.tree.Roots() {
			reach := m.tree.Reach(k.Path)
			if !reach[p] && !besideReached(reach, p) {
				continue
			}
			refused = true
			m.tree.Fail(k.Path)
			m.res.Diagnostics = append(m.res.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: proof.RuleProof, File: k.Path,
				Message: "unit " + k.Dir() + " left unchanged: migrating it writes " + o.path + ": " + o.err.Error(),
				Fix:     "name a folder holding every file of the unit on the command line"})
			m.res.Failed++
		}
		if !refused && i < sides {
			m.fail(o.path, o.err) // a held file no unit reaches fails when released
		}
	}
}

// besideReached reports whether path is beside a kustomization reach
// holds (a file migrate adds there).
func besideReached(reach map[string]bool, path string) bool {
	for _, n := range kustomize.Names {
		if reach[filepath.Join(filepath.Dir(path), n)] {
			return true
		}
	}
	return false
}
