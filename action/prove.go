package action

import (
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory"
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

// proveDocuments proves what migrating Input.Documents gives, as one unit
// (a KRM function's items, a post-renderer's render): it returns out when
// every pod keeps its devices, else the documents as they came, with an
// error per problem (the run fails).
func (m *migration) proveDocuments(out []*yaml.RNode) []*yaml.RNode {
	in := make([]*yaml.RNode, len(m.in.Documents))
	for i, d := range m.in.Documents {
		in[i] = d.Node
	}
	r := proof.Renders("-", in, out, bundle.CatalogueFamilies())
	if r.Status == proof.Proved {
		return out
	}
	for _, p := range r.Problems {
		obj := p.Object
		m.res.Diagnostics = append(m.res.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: proof.RuleProof, File: m.in.name("-"),
			Object: &obj, Container: p.Container, Message: "left unchanged: migrated, the documents would change what the pod gets: " + p.Message,
			Fix: "see docs/migrate.md#the-proof; check the rules that map its devices (kubedra rules show)"})
	}
	m.res.Failed++
	m.res.Migrated, m.res.Added = 0, 0
	return in
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}
