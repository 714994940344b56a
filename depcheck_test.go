package kubedra_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestDependencyDirection keeps data flowing one way (docs/design.md):
//   - only cmd/ imports cobra and lipgloss (k8s.io/apiserver, which the CEL
//     compiler needs, pulls cobra in transitively, so this rule is about
//     direct imports);
//   - inventory, inventory/detect, rules, rewrite, simulate and stream
//     never depend on client-go, not even transitively: detection, rules,
//     rewriting and simulating work without a cluster;
//   - only inventory/cluster (and its test helpers below it, clustertest)
//     imports client-go directly; in particular nothing under cmd/ does:
//     commands reach a cluster through action.ClusterSource;
//   - only inventory/chart imports the Helm SDK, and inventory, detect,
//     files, rules and rewrite never depend on it;
//   - stages import only what comes before them (layers below):
//     inventory/detect reports facts without rules, plan decides without
//     YAML output, rewrite changes documents without writing them, and
//     only cmd/ imports action.
func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/kubedra/kubedra"
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	clusterImports := false // the client-go rule saw the one package it allows
	chartImports := false   // the Helm rule saw inventory/chart
	for dec.More() {
		var p struct {
			ImportPath                               string
			Imports, TestImports, XTestImports, Deps []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		n++
		pkg := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, mod), "/")
		if !strings.HasPrefix(pkg, "cmd/") {
			for _, d := range p.Imports {
				if strings.HasPrefix(d, "github.com/spf13/cobra") || strings.HasPrefix(d, "charm.land/lipgloss") ||
					strings.HasPrefix(d, "github.com/charmbracelet/") {
					t.Errorf("%s imports %s: only cmd/ may import cobra or lipgloss", p.ImportPath, d)
				}
			}
		}
		for _, d := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if !strings.HasPrefix(d, "k8s.io/client-go/") {
				continue
			}
			switch {
			case pkg == "inventory/cluster":
				clusterImports = true
			case strings.HasPrefix(pkg, "cmd/"):
				t.Errorf("%s imports %s: commands reach a cluster through action.ClusterSource", p.ImportPath, d)
			case !strings.HasPrefix(pkg, "inventory/cluster/"):
				t.Errorf("%s imports %s: only inventory/cluster imports client-go", p.ImportPath, d)
			}
		}
		for _, rule := range layers {
			if pkg != rule.pkg && !strings.HasPrefix(pkg, rule.pkg+"/") || slices.Contains(rule.except, pkg) {
				continue
			}
			for _, d := range p.Imports {
				dep := strings.TrimPrefix(strings.TrimPrefix(d, mod), "/")
				if !strings.HasPrefix(d, mod+"/") {
					continue
				}
				for _, f := range rule.forbidden {
					if dep == f || strings.HasPrefix(dep, f+"/") {
						t.Errorf("%s imports %s: %s", p.ImportPath, d, rule.why)
					}
				}
			}
		}
		// The Helm SDK (a registry client, a kube client, ...) is read
		// only by inventory/chart; detection, rules and rewriting never
		// depend on it, not even transitively.
		for _, d := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			switch {
			case !strings.HasPrefix(d, "helm.sh/helm/"):
			case pkg == "inventory/chart":
				chartImports = true
			default:
				t.Errorf("%s imports %s: only inventory/chart imports the Helm SDK", p.ImportPath, d)
			}
		}
		helmFree := pkg == "inventory" || strings.HasPrefix(pkg, "inventory/detect") || strings.HasPrefix(pkg, "inventory/files") ||
			strings.HasPrefix(pkg, "rules") || strings.HasPrefix(pkg, "rewrite")
		if helmFree {
			for _, d := range p.Deps {
				if strings.HasPrefix(d, "helm.sh/helm/") {
					t.Errorf("%s depends on %s: detection, rules and rewriting must not need the Helm SDK", p.ImportPath, d)
					break
				}
			}
		}
		clientFree := pkg == "inventory" || strings.HasPrefix(pkg, "inventory/detect") || strings.HasPrefix(pkg, "inventory/files") ||
			strings.HasPrefix(pkg, "rules") || strings.HasPrefix(pkg, "rewrite") || strings.HasPrefix(pkg, "simulate") || pkg == "stream"
		if clientFree {
			for _, d := range p.Deps {
				if strings.HasPrefix(d, "k8s.io/client-go/") {
					t.Errorf("%s depends on %s: detection, rules and rewriting must not need a cluster client", p.ImportPath, d)
					break
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("go list returned only %d packages; the check would prove nothing", n)
	}
	if !chartImports {
		t.Fatal("inventory/chart does not import the Helm SDK: the Helm rule would prove nothing")
	}
	if !clusterImports {
		t.Fatal("inventory/cluster does not import client-go: the client-go rule would prove nothing")
	}
}

// layers are the import rules between kubedra's own packages: a package
// (and those below it, but for except) must not import the forbidden ones.
var layers = []struct {
	pkg       string
	except    []string
	forbidden []string
	why       string
}{
	{pkg: "inventory", except: []string{"inventory/cluster"}, forbidden: []string{"rules", "rewrite", "action", "audit", "bundle", "cmd"},
		why: "inventory reads what exists; detection reports facts, decisions come later (rules, plan)"},
	{pkg: "inventory/cluster", forbidden: []string{"rules", "rewrite", "action", "audit", "bundle", "cmd"},
		why: "a source only reads"},
	{pkg: "rules", forbidden: []string{"inventory/files", "inventory/cluster", "rewrite", "action", "audit", "bundle", "cmd"},
		why: "rules map resources; they never read manifests or clusters"},
	{pkg: "rewrite/plan", forbidden: []string{"inventory/files", "inventory/cluster", "rewrite/emit", "action", "audit", "bundle", "cmd"},
		why: "plan decides on findings; it does not read, edit or write files"},
	{pkg: "rewrite", except: []string{"rewrite/plan", "rewrite/plan/plantest", "rewrite/emit"},
		forbidden: []string{"inventory/files", "inventory/cluster", "rewrite/emit", "action", "audit", "bundle", "cmd"},
		why:       "rewrite edits documents it is given; reading and writing are the sources' and emit's"},
	{pkg: "rewrite/emit", forbidden: []string{"inventory/cluster", "rules", "action", "audit", "bundle", "cmd"},
		why: "emit writes what it is given"},
	{pkg: "audit", forbidden: []string{"inventory/files", "rewrite/emit", "action", "bundle", "cmd"},
		why: "audit judges cluster facts"},
	{pkg: "bundle", forbidden: []string{"inventory/files", "rewrite", "action", "audit", "cmd"},
		why: "bundle builds the cutover kit from cluster facts"},
	{pkg: "stream", forbidden: []string{"inventory/detect", "inventory/cluster", "rules", "rewrite", "action", "audit", "bundle", "cmd"},
		why: "stream orders the stages of a run; the stages are its callers'"},
	{pkg: "proof", forbidden: []string{"rules", "rewrite", "inventory/cluster", "inventory/files", "action", "audit", "bundle", "cmd"},
		why: "proof checks a migration by its renders: it must not share the planner's reasoning (rules, plan) it checks"},
	{pkg: "config", forbidden: []string{"action", "cmd", "audit", "bundle", "inventory/cluster", "rewrite/emit"},
		why: "config reads the repository's .kubedra.yaml; it decides nothing"},
	{pkg: "action", forbidden: []string{"cmd"},
		why: "actions never touch flags, streams or exit codes"},
}

// TestBinaryDependencies keeps out of the kubedra binary what it does not
// run, each of which once made it larger and slower to start (issue 22:
// 67 MB stripped and 95 MB with symbols before, 56 MB and 79 MB after):
// Helm's action package (it links the Kubernetes client, kubectl, release
// storage with SQL drivers and the OCI registry client; inventory/chart
// renders with the engine instead), Helm's getters (remote values files),
// and the whole typed clientset (a client for every API group; the
// cluster reader builds the three groups it lists).
func TestBinaryDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./cmd/kubedra").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	// Each with the packages below it; the clientset alone (its typed
	// group clients below it are what the reader uses).
	trees := []string{"helm.sh/helm/v3/pkg/action", "helm.sh/helm/v3/pkg/getter", "helm.sh/helm/v3/pkg/registry",
		"helm.sh/helm/v3/pkg/storage", "helm.sh/helm/v3/pkg/kube", "k8s.io/kubectl", "oras.land", "github.com/lib/pq"}
	for _, p := range strings.Fields(string(out)) {
		if p == "k8s.io/client-go/kubernetes" {
			t.Errorf("the kubedra binary links %s (the whole clientset must stay out)", p)
		}
		for _, f := range trees {
			if p == f || strings.HasPrefix(p, f+"/") {
				t.Errorf("the kubedra binary links %s (%s must stay out)", p, f)
			}
		}
	}
}
