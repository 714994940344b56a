package kubedra_test

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyDirection keeps data flowing one way (docs/design.md):
//   - only cmd/ imports cobra and lipgloss (k8s.io/apiserver, which the CEL
//     compiler needs, pulls cobra in transitively, so this rule is about
//     direct imports);
//   - inventory, inventory/detect, rules and rewrite never depend on
//     client-go, not even transitively: detection, rules and rewriting work
//     without a cluster.
func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,Deps", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/kubedra/kubedra"
	dec := json.NewDecoder(strings.NewReader(string(out)))
	n := 0
	for dec.More() {
		var p struct {
			ImportPath    string
			Imports, Deps []string
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
		clientFree := pkg == "inventory" || strings.HasPrefix(pkg, "inventory/detect") ||
			strings.HasPrefix(pkg, "inventory/files") || strings.HasPrefix(pkg, "rules") || strings.HasPrefix(pkg, "rewrite")
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
}
