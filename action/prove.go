package action

import (
	"bytes"
	"errors"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rewrite"
	"github.com/kubedra/kubedra/rewrite/plan"
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
	m.res.Units = proof.Tree(m.tree, changes, func(p string) string { return absPath(m.in.open(p)) }, families())
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
	r := proof.Renders("-", in, out, families())
	if r.Status == proof.Proved {
		return out
	}
	for _, p := range r.Problems {
		m.res.Diagnostics = append(m.res.Diagnostics, p.Diagnostic(proof.RuleProof, m.in.name("-"), "left unchanged: migrated, the documents would change what the pod gets: ",
			"see docs/migrate.md#the-proof; check the rules that map its devices (kubedra rules show)"))
	}
	m.res.Failed++
	m.res.Migrated, m.res.Added = 0, 0
	return in
}

// proved says whether a batch of Input.Documents migrated on its own (in,
// migrated to out: documentBatch) passes the proof as proveDocuments
// judges all the batches: the same pods, claims and classes, when nothing
// ties the batch to the others (FnStream).
func (m *migration) proved(in []*inventory.Document, out []*yaml.RNode) bool {
	before := make([]*yaml.RNode, len(in))
	for i, d := range in {
		before[i] = d.Node
	}
	return proof.Renders("-", before, out, families().With(m.classNodes())).Status == proof.Proved
}

// families are the driver catalogue's device families, read once: every
// batch's proof needs them.
var families = sync.OnceValue(bundle.CatalogueFamilies)

// errProof is a file's failure when its batch fails the proof.
var errProof = errors.New("its migration fails the proof (see above): left as it was")

// plannedPods are the pod templates of the documents of a batch that its
// plan edits, by document index.
func plannedPods(docs []*inventory.Document, fp *plan.FilePlan) map[int][]proof.Pod {
	edited := map[int]bool{}
	for _, dp := range fp.Docs {
		edited[dp.Index] = true
	}
	out := map[int][]proof.Pod{}
	for _, d := range docs {
		if d.Node != nil && edited[d.Origin.Index] {
			out[d.Origin.Index] = append(out[d.Origin.Index], proof.Pods([]*yaml.RNode{d.Node})...)
		}
	}
	return out
}

// proveBatch proves one batch of a file that no kustomize unit covers:
// the pod templates its plan edits (before, read before the rewrite)
// against the documents of its new text and the objects it sends to a
// claims file. A cluster-scoped runtime's users are in other files, so its
// claims are proved where they are (a kustomize unit, check --baseline).
func proveBatch(path string, planned map[int][]proof.Pod, res rewrite.Result) []proof.Problem {
	// A document the plan could not be applied to keeps its text (and
	// says why): nothing of it to prove.
	for _, f := range res.Failures {
		delete(planned, f.Index)
	}
	var before []proof.Pod
	for _, i := range slices.Sorted(maps.Keys(planned)) {
		before = append(before, planned[i]...)
	}
	var after []*yaml.RNode
	for _, pc := range res.Pieces {
		if bytes.Equal(pc.Old, pc.New) {
			continue
		}
		// Read as a file's text is read (a List's items are its objects),
		// from the documents rewrite decoded to check that the text parses.
		if pc.Docs != nil {
			for _, d := range pc.Docs {
				after = append(after, files.Objects(d)...)
			}
			continue
		}
		for _, d := range files.Parse(path, pc.New).Docs {
			if d.Node != nil {
				after = append(after, d.Node)
			}
		}
	}
	after = append(after, res.Objects...)
	var out []proof.Problem
	pods := proof.Pods(after)
	for _, p := range proof.Compare(before, pods, families().With(after)) {
		if i := slices.IndexFunc(pods, func(a proof.Pod) bool { return a.Object == p.Object }); i >= 0 && pods[i].ClusterScoped && len(pods[i].Users) == 0 {
			continue
		}
		out = append(out, p)
	}
	return out
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
