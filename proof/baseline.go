package proof

import (
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// RuleBaseline is the rule id of check's diagnostics for a unit that,
// against the baseline, would change what its pods get.
const RuleBaseline = "check/unit-proof"

// Against proves the unit whose kustomization is in head (absolute)
// against the same unit at base, the repository before a change (check
// --baseline): base must build (else NotRendered: a new unit), head too.
func Against(base, head, name string, classes Classes) Result {
	fs := filesys.MakeFsOnDisk()
	return builds(name, func() ([]*yaml.RNode, error) { return Build(fs, base) }, func() ([]*yaml.RNode, error) { return Build(fs, head) }, classes)
}

// Renders proves a unit given as its objects before and after (a plain
// folder of manifests, read by the caller).
func Renders(name string, before, after []*yaml.RNode, classes Classes) Result {
	return compareRenders(Result{Unit: name, Problems: []Problem{}}, before, after, classes)
}

// BaselineDiagnostics say what a unit's proof against the baseline found:
// an error per problem, at the unit (its kustomization, or the folder).
func (r Result) BaselineDiagnostics() inventory.Diagnostics {
	if r.Status != Failed {
		return nil
	}
	file := r.Kustomization
	if file == "" {
		file = r.Unit
	}
	var out inventory.Diagnostics
	if r.Error != "" {
		out = append(out, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleBaseline, File: file,
			Message: "unit " + r.Unit + ": " + r.Error})
	}
	for _, p := range r.Problems {
		out = append(out, p.Diagnostic(RuleBaseline, file, "unit "+r.Unit+": against the baseline, what the pod gets changes: ",
			"give the pod its devices back (docs/migrate.md#the-proof), or migrate the baseline again with kubedra migrate"))
	}
	return out
}
