package action

import (
	"path/filepath"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/proof"
)

// RuleProof is the rule id of a unit that fails its proof (docs/migrate.md#the-proof).
const RuleProof = "migrate/unit-proof"

// heldFile is what a file held back for the proof added to the run's
// result, undone when its unit fails.
type heldFile struct {
	diags, workloads             [2]int // ranges in the result's lists
	migrated, upgraded, governed int
	added                        int
	findings                     []inventory.Finding
}

// holds reports whether the file at path is held back until the proof:
// a kustomize build unit covers it (migrate -w, diff or --out).
func (m *migration) holds(path string) bool {
	return m.emit != nil && m.emit.Hold != nil && m.emit.Hold(path)
}

// hold records what a held file added to the result (end).
func (m *migration) hold(st *fileState, diagsFrom, workFrom int) {
	if m.heldFiles == nil {
		m.heldFiles = map[string]*heldFile{}
	}
	m.heldFiles[filepath.Clean(st.path)] = &heldFile{diags: [2]int{diagsFrom, len(m.res.Diagnostics)}, workloads: [2]int{workFrom, len(m.res.Workloads)},
		migrated: st.migrated, upgraded: st.upgraded, governed: st.governed, added: st.added, findings: st.findings}
}

// prove renders every kustomize unit a held file reaches before and after
// (proof.Kustomization), holds the units that fail with every unit
// sharing a file with them (kustomize.Tree.Fail, Held), writes the held
// files of the others and undoes what the dropped ones added.
func (m *migration) prove() {
	held := m.emit.Held()
	if len(held) == 0 {
		return
	}
	over, changed := map[string][]byte{}, map[string]bool{}
	for _, h := range held {
		over[absPath(m.in.open(h.Path))] = h.New
		changed[filepath.Clean(h.Path)] = true
	}
	before, after := filesys.MakeFsOnDisk(), proof.NewOverlay(over)
	classes := catalogueFamilies()
	m.res.Units = []proof.Result{}
	for _, k := range m.tree.Roots() {
		if !touches(m.tree.Reach(k.Path), changed) {
			continue
		}
		r := proof.Kustomization(absPath(m.in.open(k.Dir())), k.Dir(), before, after, classes)
		m.res.Units = append(m.res.Units, r)
		m.proofDiagnostics(k, r)
	}
	holding := m.tree.Held()
	keep := func(path string) bool {
		p := filepath.Clean(path)
		if _, ok := holding[p]; ok {
			return false
		}
		for _, n := range kustomize.Names {
			if _, ok := holding[filepath.Join(filepath.Dir(p), n)]; ok {
				return false // a file migrate adds beside a held kustomization
			}
		}
		return true
	}
	if m.opts.PlanOnly {
		return // --plan: nothing is written
	}
	var dropped []string
	for _, h := range held {
		if keep(h.Path) {
			m.res.Changed++
		} else if _, ok := m.heldFiles[filepath.Clean(h.Path)]; ok {
			dropped = append(dropped, filepath.Clean(h.Path))
		}
	}
	m.emit.Release(keep, m.fail)
	m.undo(dropped, holding)
}

// proofDiagnostics says what a unit's proof found.
func (m *migration) proofDiagnostics(k *kustomize.Kustomization, r proof.Result) {
	switch r.Status {
	case proof.Failed:
		m.tree.Fail(k.Path)
		m.res.Failed++
		if r.Error != "" {
			m.res.Diagnostics = append(m.res.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleProof, File: k.Path,
				Message: "unit " + r.Unit + " left unchanged: " + r.Error, Fix: proofFix})
		}
		for _, p := range r.Problems {
			obj := p.Object
			m.res.Diagnostics = append(m.res.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleProof, File: k.Path,
				Object: &obj, Container: p.Container, Message: "unit " + r.Unit + " left unchanged: migrated, its render would change what the pod gets: " + p.Message, Fix: proofFix})
		}
	case proof.NotRendered:
		m.res.Diagnostics = append(m.res.Diagnostics, inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleProof, File: k.Path,
			Message: "unit " + r.Unit + " migrated without a proof: it does not build as it is: " + r.Error})
	}
}

// proofFix is what to do about a unit that fails its proof.
const proofFix = "the unit is left as it was; a JSON 6902 patch that replaces a pod's resourceClaims or a container's resources.claims must add to them (path .../-) or carry the claims; see docs/migrate.md#the-proof"

// undo takes back what the dropped files added: their counts and
// workloads, and their diagnostics, replaced by one per request saying
// why the file is left as it was.
func (m *migration) undo(dropped []string, holding map[string]string) {
	slices.SortFunc(dropped, func(a, b string) int { return m.heldFiles[b].diags[0] - m.heldFiles[a].diags[0] })
	for _, p := range dropped {
		h := m.heldFiles[p]
		var why inventory.Diagnostics
		for _, x := range h.findings {
			why = append(why, m.tree.HeldDiagnostic(x, holding[p]))
		}
		m.res.Diagnostics = slices.Replace(m.res.Diagnostics, h.diags[0], h.diags[1], why...)
		m.res.Workloads = slices.Delete(m.res.Workloads, h.workloads[0], h.workloads[1])
		m.res.Migrated -= h.migrated
		m.res.Upgraded -= h.upgraded
		m.res.Governed -= h.governed
		m.res.Added -= h.added
	}
}

func touches(reach, changed map[string]bool) bool {
	for p := range changed {
		if reach[p] {
			return true
		}
	}
	return false
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// catalogueFamilies are the device families of the driver catalogue's
// DeviceClasses, which the proof knows classes by.
func catalogueFamilies() proof.Classes {
	c := proof.Classes{}
	dcs, _ := bundle.CatalogueClasses()
	for _, dc := range dcs {
		for _, s := range dc.Spec.Selectors {
			if s.CEL != nil {
				c.Add(dc.Name, s.CEL.Expression)
			}
		}
	}
	return c
}
