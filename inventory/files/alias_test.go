package files

import (
	"fmt"
	"strings"
	"testing"
)

// aliasBomb is a 10-level, 10-wide alias bomb (under 1 KB; 10^10 nodes
// expanded) in a GPU Pod.
func aliasBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\nx:\n  a0: &a0 [g, g, g, g, g, g, g, g, g, g]\n")
	for i := 1; i < 10; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "  a%d: &a%d [%s]\n", i, i, refs)
	}
	b.WriteString("spec:\n  containers:\n  - name: c\n    image: x\n    env: *a9\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n")
	return b.String()
}

// Issue 29 item 10: a document whose aliases expand beyond what
// Kubernetes' decoder accepts (sigs.k8s.io/yaml: "excessive aliasing", as
// audit's dump reader refuses it) is not a Document: a parse error at its
// line, so scan, check and migrate never walk the expansion.
func TestAliasBombRefused(t *testing.T) {
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\nx: &a [1]\ny: *a\n---\n" + aliasBomb()
	f := Parse("bomb.yaml", []byte(src))
	if len(f.Docs) != 1 || f.ParseErrors != 1 {
		t.Fatalf("%d documents, %d parse errors: %v", len(f.Docs), f.ParseErrors, f.Diagnostics)
	}
	if d := f.Diagnostics[0]; d.Line != 7 || !strings.Contains(d.Message, "aliasing") {
		t.Errorf("diagnostic %v", d)
	}
}
