package kubedra_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencyDirection keeps data flowing one way (docs/design.md):
// only cmd/ may import cobra and lipgloss, only inventory/cluster may import
// client-go, and detection and rewriting never depend on a cluster client.
func TestDependencyDirection(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/kubedra/kubedra/"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := strings.TrimPrefix(fields[0], mod), fields[1:]
		for _, d := range deps {
			switch {
			case (strings.HasPrefix(d, "github.com/spf13/cobra") || strings.HasPrefix(d, "charm.land/lipgloss")) &&
				!strings.HasPrefix(pkg, "cmd/") && pkg != "github.com/kubedra/kubedra":
				t.Errorf("%s imports %s: only cmd/ may depend on cobra or lipgloss", pkg, d)
			case strings.HasPrefix(d, "k8s.io/client-go/") &&
				(strings.HasPrefix(pkg, "rewrite") || strings.HasPrefix(pkg, "inventory/detect") || pkg == "inventory" || strings.HasPrefix(pkg, "rules")):
				t.Errorf("%s imports %s: detection, rules and rewriting must not depend on client-go", pkg, d)
			}
		}
	}
}
