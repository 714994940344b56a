package action_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/rewrite/emit"
)

// Issue 29 item 7: a YAML merge key on the way to an edit (the GPU in the
// merged anchor) is refused as an alias is: Kubernetes' decoder still
// merges the GPU in, so a claim beside it would ask twice, and every
// further -w would add another (gpu-2, gpu-3...). The document keeps its
// bytes and an error names its line.
func TestMigrateRefusesMergeKeys(t *testing.T) {
	for name, src := range map[string]string{
		"resources": "apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nx-base: &b\n  limits:\n    nvidia.com/gpu: 1\nspec:\n  containers:\n  - name: c\n    image: x\n    resources: {<<: *b}\n",
		"limits":    "apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nx-base: &b\n  nvidia.com/gpu: 1\nspec:\n  containers:\n  - name: c\n    image: x\n    resources:\n      limits:\n        <<: *b\n",
		"container": "apiVersion: v1\nkind: Pod\nmetadata: {name: m}\nx-base: &b\n  resources:\n    limits:\n      nvidia.com/gpu: 1\nspec:\n  containers:\n  - <<: *b\n    name: c\n    image: x\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := testfs.Tree(t, map[string]string{"pod.yaml": src})
			for range 2 {
				res, _ := migrateConfined(t, dir, emit.Write, "", "pod.yaml")
				if !hasError(res.Diagnostics, "merge key") {
					t.Errorf("no error about the merge key: %v", res.Diagnostics)
				}
			}
			b, _ := os.ReadFile(filepath.Join(dir, "pod.yaml"))
			if string(b) != src {
				t.Errorf("the document was rewritten:\n%s", b)
			}
			if strings.Contains(string(b), "gpu-2") {
				t.Error("a second claim was added")
			}
		})
	}
}
