package proof

import (
	"fmt"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Status is a unit's verdict.
type Status string

// Statuses.
const (
	// Proved: every pod template gets the same devices after.
	Proved Status = "proved"
	// Failed: a pod template would lose or change devices, or the unit no
	// longer builds; its files are left as they were.
	Failed Status = "failed"
	// NotRendered: the unit does not build before the migration (a remote
	// base, a generator kustomize runs only with flags), so there is
	// nothing to compare it with.
	NotRendered Status = "not-rendered"
)

// Result is one unit's proof.
type Result struct {
	// Unit is the kustomization's folder, as the input names it, and
	// Kustomization its file.
	Unit          string `json:"unit" yaml:"unit"`
	Kustomization string `json:"kustomization,omitempty" yaml:"kustomization,omitempty"`
	Status        Status `json:"status" yaml:"status"`
	// Pods counts the pod templates compared; Devices those that ask for
	// devices before.
	Pods    int `json:"pods" yaml:"pods"`
	Devices int `json:"devices" yaml:"devices"`
	// Problems say what would change (Failed).
	Problems []Problem `json:"problems" yaml:"problems"`
	// Error is why the unit did not build (NotRendered: before; Failed:
	// after).
	Error string `json:"error,omitempty" yaml:"error,omitempty"`
}

// Kustomization proves the unit whose kustomization is in dir (absolute):
// it builds it from before and from after (the same tree with the
// migration's new text laid over, Overlay) and compares the renders.
func Kustomization(dir, name string, before, after filesys.FileSystem, classes Classes) Result {
	return builds(name, func() ([]*yaml.RNode, error) { return Build(before, dir) }, func() ([]*yaml.RNode, error) { return Build(after, dir) }, classes)
}

// builds proves a unit from its two builds: one that fails before leaves
// nothing to compare (NotRendered), one that fails after is a failure.
func builds(name string, before, after func() ([]*yaml.RNode, error), classes Classes) Result {
	r := Result{Unit: name, Problems: []Problem{}}
	b, err := before()
	if err != nil {
		r.Status, r.Error = NotRendered, err.Error()
		return r
	}
	a, err := after()
	if err != nil {
		r.Status, r.Error = Failed, fmt.Sprintf("the unit no longer builds: %v", err)
		return r
	}
	return compareRenders(r, b, a, classes)
}

func compareRenders(r Result, before, after []*yaml.RNode, classes Classes) Result {
	bp := Pods(before)
	r.Pods = len(bp)
	for _, p := range bp {
		if asks(p) {
			r.Devices++
		}
	}
	r.Problems = append(r.Problems, Compare(bp, Pods(after), classes.With(after))...)
	r.Status = Proved
	if len(r.Problems) > 0 {
		r.Status = Failed
	}
	return r
}

// Build renders the kustomization in dir as `kustomize build` does, with
// its defaults (load restrictions, no plugins, no Helm).
func Build(fsys filesys.FileSystem, dir string) ([]*yaml.RNode, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []*yaml.RNode
	for _, res := range m.Resources() {
		out = append(out, &res.RNode)
	}
	return out, nil
}
