package action_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

const confineDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: c
        image: x
`

const confinePatch = `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers:
      - name: c
        resources:
          limits:
            nvidia.com/gpu: 1
`

func migrateConfined(t *testing.T, dir string, mode emit.Mode, outDir string, paths ...string) (*action.MigrateResult, string) {
	t.Helper()
	var out bytes.Buffer
	res, err := action.Migrate(context.Background(), action.Input{Paths: paths, Dir: dir},
		action.MigrateOptions{Plan: plan.Options{Target: rules.DefaultTarget}, Output: mode, Out: &out, OutDir: outDir})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

func hasError(ds inventory.Diagnostics, substr string) bool {
	for _, d := range ds {
		if d.Severity == inventory.Error && strings.Contains(d.Message+" "+d.File, substr) {
			return true
		}
	}
	return false
}

// Issue 29 item 2: a side file of the tree (the claims file beside a
// kustomization) that is a symlink leaving the tree is never written
// through, in any mode, and the diff says what -w does.
func TestMigrateNeverWritesThroughSymlinkOut(t *testing.T) {
	for _, mode := range []emit.Mode{emit.Write, emit.Diff, emit.Tree} {
		t.Run(map[emit.Mode]string{emit.Write: "write", emit.Diff: "diff", emit.Tree: "out"}[mode], func(t *testing.T) {
			dir := t.TempDir()
			testfs.Write(t, dir, map[string]string{
				"outside/x.yaml":          "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
				"tree/dep.yaml":           confineDeployment,
				"tree/patch.yaml":         confinePatch,
				"tree/kustomization.yaml": "resources:\n- dep.yaml\npatches:\n- path: patch.yaml\n",
			})
			if err := os.Symlink("../outside/x.yaml", filepath.Join(dir, "tree", "kubedra-claims.yaml")); err != nil {
				t.Fatal(err)
			}
			before := tree(t, dir)
			res, out := migrateConfined(t, dir, mode, "o", "tree")
			if got := tree(t, filepath.Join(dir, "outside")); got["x.yaml"] != before["outside/x.yaml"] {
				t.Errorf("the file outside the tree was written:\n%s", got["x.yaml"])
			}
			if !hasError(res.Diagnostics, "outside") {
				t.Errorf("no error says why: %v", res.Diagnostics)
			}
			if mode == emit.Diff && strings.Contains(out, "ResourceClaimTemplate") {
				t.Errorf("the diff shows a write -w refuses:\n%s", out)
			}
			if mode == emit.Write {
				after := tree(t, dir)
				sameTree(t, "tree", before, after)
			}
			if mode == emit.Tree {
				o := tree(t, filepath.Join(dir, "o"))
				if strings.Contains(o["kubedra-claims.yaml"], "ConfigMap") {
					t.Errorf("--out copied the outside file's content into the output: %q", o["kubedra-claims.yaml"])
				}
				if !strings.Contains(o["patch.yaml"], "nvidia.com/gpu") {
					t.Errorf("--out wrote a patch that lost its GPU without its claim template:\n%s", o["patch.yaml"])
				}
			}
		})
	}
}

// Issue 29 item 3: a kustomization of the tree reaching a folder outside
// it (../../outside/ov) would get side files written there: the unit is
// refused whole, every file keeps its bytes, and the error names the path.
func TestMigrateRefusesUnitWritingOutside(t *testing.T) {
	for _, mode := range []emit.Mode{emit.Write, emit.Diff, emit.Tree} {
		t.Run(map[emit.Mode]string{emit.Write: "write", emit.Diff: "diff", emit.Tree: "out"}[mode], func(t *testing.T) {
			dir := t.TempDir()
			testfs.Write(t, dir, map[string]string{
				"outside/ov/kustomization.yaml": "resources:\n- dep.yaml\npatches:\n- path: ../../repo/app/patch.yaml\n",
				"outside/ov/dep.yaml":           confineDeployment,
				"repo/app/kustomization.yaml":   "resources:\n- ../../outside/ov\n",
				"repo/app/patch.yaml":           confinePatch,
			})
			before := tree(t, dir)
			res, out := migrateConfined(t, dir, mode, "o", "repo")
			after := tree(t, dir)
			delete(after, "o")
			for k := range after {
				if strings.HasPrefix(k, "o/") {
					delete(after, k)
				}
			}
			sameTree(t, "inputs", before, after)
			if !hasError(res.Diagnostics, filepath.Join("outside", "ov")) {
				t.Errorf("no error names the path outside: %v", res.Diagnostics)
			}
			if mode == emit.Diff && strings.Contains(out, "outside") {
				t.Errorf("the diff shows writes outside:\n%s", out)
			}
			if mode == emit.Tree {
				o := tree(t, filepath.Join(dir, "o"))
				for k, v := range o {
					if strings.Contains(v, "ResourceClaimTemplate") || strings.Contains(v, "resourceClaims") {
						t.Errorf("--out migrated %s of a refused unit:\n%s", k, v)
					}
				}
			}
		})
	}
}
