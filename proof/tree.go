package proof

import (
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/kustomize"
)

// RuleProof is the rule id of a unit's proof (docs/migrate.md#the-proof).
const RuleProof = "migrate/unit-proof"

// Change is a file's new text, before anything is written.
type Change struct {
	// Path is the file as the tree names it; Abs where it is on disk.
	Path, Abs string
	New       []byte
}

// Tree proves every root unit of tree (a kustomization nothing else
// lists) that a change reaches, in the order found; abs gives a path of
// the tree on disk. A unit that fails is held in tree (Tree.Fail), so
// that Tree.Held leaves it, and every unit sharing a file with it, as it
// was; Diagnostics says why.
func Tree(tree *kustomize.Tree, changes []Change, abs func(string) string, classes Classes) []Result {
	over, changed := map[string][]byte{}, map[string]bool{}
	for _, c := range changes {
		over[c.Abs] = c.New
		changed[filepath.Clean(c.Path)] = true
	}
	before, after := filesys.MakeFsOnDisk(), NewOverlay(over)
	out := []Result{}
	for _, k := range tree.Roots() {
		if !reaches(tree.Reach(k.Path), changed) {
			continue
		}
		r := Kustomization(abs(k.Dir()), k.Dir(), before, after, classes)
		r.Kustomization = k.Path
		if r.Status == Failed {
			tree.Fail(k.Path)
		}
		out = append(out, r)
	}
	return out
}

func reaches(reach, changed map[string]bool) bool {
	for p := range changed {
		if reach[p] {
			return true
		}
	}
	return false
}

// proofFix is what to do about a unit that fails its proof.
const proofFix = "the unit is left as it was; a JSON 6902 patch that replaces a pod's resourceClaims or a container's resources.claims must add to them (path .../-) or carry the claims; see docs/migrate.md#the-proof"

// Diagnostics say what a unit's proof found, at its kustomization: an
// error per problem of a unit that failed, a warning for a unit that
// could not be rendered before (migrated without a proof).
func (r Result) Diagnostics() inventory.Diagnostics {
	var out inventory.Diagnostics
	switch r.Status {
	case Failed:
		if r.Error != "" {
			out = append(out, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleProof, File: r.Kustomization,
				Message: "unit " + r.Unit + " left unchanged: " + r.Error, Fix: proofFix})
		}
		for _, p := range r.Problems {
			out = append(out, p.Diagnostic(RuleProof, r.Kustomization, "unit "+r.Unit+" left unchanged: migrated, its render would change what the pod gets: ", proofFix))
		}
	case NotRendered:
		out = append(out, inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleProof, File: r.Kustomization,
			Message: "unit " + r.Unit + " migrated without a proof: it does not build as it is: " + r.Error})
	}
	return out
}

// Keep reports whether a held file may be written once tree's units are
// proved: no held unit reaches it, and it is not beside a held
// kustomization (a file migrate adds there).
func Keep(tree *kustomize.Tree) func(path string) bool {
	holding := tree.Held()
	return func(path string) bool {
		p := filepath.Clean(path)
		if _, ok := holding[p]; ok {
			return false
		}
		for _, n := range kustomize.Names {
			if _, ok := holding[filepath.Join(filepath.Dir(p), n)]; ok {
				return false
			}
		}
		return true
	}
}
