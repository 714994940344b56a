package action_test

import (
	"path/filepath"
	"testing"

	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/rewrite/emit"
)

// Issue 29 item 6: a file that fails to parse keeps its bytes
// (docs/exit-codes.md: "left untouched"), whether the rest of it would
// migrate or not: JSON objects on two lines, a YAML file with one broken
// document. The diff shows no change either.
func TestMigrateLeavesUnparsableFileUntouched(t *testing.T) {
	files := map[string]string{
		"t/two.json": `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x","resources":{"limits":{"nvidia.com/gpu":1}}}]}}` + "\n" +
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm"}}` + "\n",
		"t/broken.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: p2}\nspec:\n  containers:\n  - name: c\n    image: x\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n" +
			"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: [broken\n",
	}
	for _, mode := range []emit.Mode{emit.Write, emit.Diff} {
		dir := testfs.Tree(t, files)
		before := tree(t, dir)
		res, out := migrateConfined(t, dir, mode, "", "t")
		sameTree(t, "inputs", before, tree(t, dir))
		if out != "" {
			t.Errorf("mode %d: the diff shows changes to files left untouched:\n%s", mode, out)
		}
		if res.Failed != 2 {
			t.Errorf("mode %d: %d files failed, want 2: %v", mode, res.Failed, res.Diagnostics)
		}
		for _, f := range []string{"two.json", "broken.yaml"} {
			if !hasError(res.Diagnostics, filepath.Join("t", f)) {
				t.Errorf("mode %d: no error names %s: %v", mode, f, res.Diagnostics)
			}
		}
	}
}
