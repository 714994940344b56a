package kustomize

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubedra/kubedra/inventory"
)

// Roots are the deployable units: the kustomizations (not Components)
// that no other kustomization lists, in the order found.
func (t *Tree) Roots() []*Kustomization {
	if t == nil {
		return nil
	}
	var out []*Kustomization
	for _, p := range t.order {
		if k := t.Kustomizations[p]; k != nil && !k.Component && !k.OffName && len(t.by[p]) == 0 {
			out = append(out, k)
		}
	}
	return out
}

// Reach returns the files and kustomizations the kustomization at k
// reaches (itself included), as clean paths.
func (t *Tree) Reach(k string) map[string]bool {
	seen := map[string]bool{}
	t.reach(filepath.Clean(k), seen)
	return seen
}

// Covers reports whether the file at path belongs to a kustomize build
// unit: a kustomization lists it, it is one, or it is beside one (a file
// migrate adds there: a claims file, the name-reference configurations).
func (t *Tree) Covers(path string) bool {
	if t == nil || len(t.Kustomizations) == 0 {
		return false
	}
	p := filepath.Clean(path)
	if len(t.by[p]) > 0 || t.Kustomizations[p] != nil {
		return true
	}
	if t.dirs == nil {
		t.dirs = map[string]bool{}
		for k := range t.Kustomizations {
			t.dirs[filepath.Dir(k)] = true
		}
	}
	return t.dirs[filepath.Dir(p)]
}

// Fail holds the unit whose kustomization is at k because its proof
// failed: what it reaches is left as it was, with every unit sharing a
// file with it (Held).
func (t *Tree) Fail(k string) {
	if t.failed == nil {
		t.failed = map[string]bool{}
	}
	t.failed[filepath.Clean(k)] = true
	t.held = nil
}

// Failed reports whether the unit at k failed its proof.
func (t *Tree) Failed(k string) bool { return t != nil && t.failed[filepath.Clean(k)] }

// HeldDiagnostic says a request stays because its build unit is held; by
// is the kustomization that is the reason (HeldBy): one holding a patch
// kubedra cannot migrate, or a unit whose proof failed.
func (t *Tree) HeldDiagnostic(x inventory.Finding, by string) inventory.Diagnostic {
	d := inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleHeld,
		File: x.Origin.Path, Line: x.Line, Object: x.Object(), Container: x.Container, Resource: x.Resource, Field: x.FieldPath(),
		Message: "left unchanged: " + by + " (or a kustomization sharing its bases) holds a patch kubedra cannot migrate (see above), and a base must be migrated the same way for every overlay",
		Fix:     "rewrite that patch as a strategic-merge patch file, then migrate again"}
	if k := t.Kustomizations[filepath.Clean(by)]; k != nil && k.OffName {
		d.Message = "left unchanged: " + by + " lists the file as a patch, and kustomize does not build that kustomization from its folder (it reads " + strings.Join(Names, ", ") + "): a patch cannot take new objects, and no unit of it can be proved"
		d.Fix = "give that kustomization a folder of its own as kustomization.yaml, then migrate again"
	} else if t.Failed(by) {
		d.Message = "left unchanged: the unit " + filepath.Dir(by) + " (or a unit sharing its files) fails its proof (see above): migrated, it would not give its pods the devices they have"
		d.Fix = "see the proof's problems above; docs/migrate.md#the-proof"
	}
	return d
}

// Unblock lifts the holds of the kustomizations whose every patch that
// kubedra cannot migrate sets only resources no rule maps (mapped says
// which do): migrate leaves those requests as they are, so such a patch
// holds nothing up (the proof still checks each unit). It returns diags
// with the diagnostics of those operations made infos.
func (t *Tree) Unblock(diags inventory.Diagnostics, mapped func(resource string) bool) inventory.Diagnostics {
	unmapped := func(d inventory.Diagnostic) bool {
		return d.Rule == RulePatch && d.Resource != "" && !mapped(d.Resource)
	}
	for k, ds := range t.why {
		t.bad[k] = slices.ContainsFunc(ds, func(d inventory.Diagnostic) bool { return !unmapped(d) })
	}
	t.held = nil
	out := make(inventory.Diagnostics, 0, len(diags))
	for _, d := range diags {
		if unmapped(d) {
			d.Severity = inventory.Info
			d.Message = "a patch sets " + d.Resource + ", which no rule maps: it stays as it is, and its units are migrated around it"
			d.Fix = ""
		}
		out = append(out, d)
	}
	return out
}

// PatchFindings are the device requests the tree's JSON 6902 patches set
// (Kustomization.Findings), in the order found: requests that no workload
// shows until kustomize builds the unit.
func (t *Tree) PatchFindings() []inventory.Finding {
	var out []inventory.Finding
	for _, k := range t.Ordered() {
		out = append(out, k.Findings...)
	}
	return out
}

// Shared returns the kustomizations (bases and components) that more than
// one kustomization lists.
func (t *Tree) Shared() []string {
	var out []string
	for _, p := range t.order {
		if len(t.by[p]) > 1 {
			out = append(out, p)
		}
	}
	return out
}

// reach returns the files and kustomizations the kustomization at k
// reaches (itself included).
func (t *Tree) reach(k string, seen map[string]bool) {
	if seen[k] {
		return
	}
	seen[k] = true
	kk := t.Kustomizations[k]
	if kk == nil {
		return
	}
	for _, u := range kk.Uses {
		if u.Path != "" {
			t.reach(u.Path, seen)
		}
	}
}

// MapAddsFor are the JSON 6902 adds into containers' limits or requests of
// every kustomization that reaches the file at path.
func (t *Tree) MapAddsFor(path string) []MapAdd {
	if t == nil {
		return nil
	}
	if t.mapAdds == nil {
		t.mapAdds = map[string][]MapAdd{}
		for _, p := range t.order {
			k := t.Kustomizations[p]
			if len(k.MapAdds) == 0 {
				continue
			}
			seen := map[string]bool{}
			t.reach(p, seen)
			for f := range seen {
				t.mapAdds[f] = append(t.mapAdds[f], k.MapAdds...)
			}
		}
	}
	return t.mapAdds[filepath.Clean(path)]
}
