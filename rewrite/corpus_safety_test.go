package rewrite_test

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// treeFiles returns the regular files under dir (relative name -> content).
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func corpusMigrate(t *testing.T, in action.Input, mode emit.Mode, out io.Writer, outDir string) *action.MigrateResult {
	t.Helper()
	popts := plan.Options{Strategy: plan.Claims, Target: rules.DefaultTarget, AllowLossy: true}
	res, err := action.Migrate(context.Background(), in, action.MigrateOptions{Plan: popts, Output: mode, Out: out, OutDir: outDir})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// comments returns the comment lines of the YAML documents in text, as
// the parser attaches them to nodes, with their counts.
func comments(text []byte) map[string]int {
	out := map[string]int{}
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var n yaml.Node
		if err := dec.Decode(&n); err != nil {
			if err == io.EOF {
				return out
			}
			// A document that does not parse: count its comment lines.
			for _, l := range strings.Split(string(text), "\n") {
				if t := strings.TrimSpace(l); strings.HasPrefix(t, "#") {
					out[t]++
				}
			}
			return out
		}
		var walk func(*yaml.Node)
		walk = func(n *yaml.Node) {
			for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
				for _, l := range strings.Split(c, "\n") {
					if l = strings.TrimSpace(l); l != "" {
						out[l]++
					}
				}
			}
			for _, c := range n.Content {
				walk(c)
			}
		}
		walk(&n)
	}
}

// TestCorpusSafety (issue 14's must-show) over ../shared/corpus/dev: the
// same tree copied to two folders and migrated with --out in one and -w in
// the other gives the same bytes; no comment line is lost; a second run
// is a no-op as a diff, with -w and with --out.
func TestCorpusSafety(t *testing.T) {
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("shared corpus not present: %v", err)
	}
	if testing.Short() {
		t.Skip("corpus run in -short mode")
	}
	base := t.TempDir()
	one := filepath.Join(base, "one", "corpus")
	two := filepath.Join(base, "elsewhere", "deeper", "corpus")
	testfs.Copy(t, corpus, one)
	testfs.Copy(t, corpus, two)

	outOne := filepath.Join(base, "out-one")
	res := corpusMigrate(t, action.Input{Paths: []string{"corpus"}, Dir: filepath.Dir(one)}, emit.Tree, nil, "../out-one")
	if res.Changed < 50 {
		t.Fatalf("only %d files changed: %+v", res.Changed, res)
	}
	var diffOut bytes.Buffer
	corpusMigrate(t, action.Input{Paths: []string{two}}, emit.Diff, &diffOut, "")
	corpusMigrate(t, action.Input{Paths: []string{two}}, emit.Write, nil, "")
	a, b := treeFiles(t, outOne), treeFiles(t, two)
	differ := 0
	for k, v := range a {
		if b[k] != v {
			differ++
			t.Errorf("%s: --out in one folder and -w in another differ", k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: written by -w, not by --out", k)
		}
	}
	t.Logf("%d files compared, %d differ", len(a), differ)

	// The diff is what -w wrote: applied to the first copy, it gives it.
	before := treeFiles(t, one)
	lost := 0
	for rel, old := range before {
		if !strings.HasSuffix(rel, ".yaml") && !strings.HasSuffix(rel, ".yml") {
			continue
		}
		got := comments([]byte(b[rel]))
		for c, n := range comments([]byte(old)) {
			if got[c] < n {
				lost++
				t.Errorf("%s: comment %q lost", rel, c)
			}
		}
	}
	t.Logf("%d comment lines lost", lost)
	if !strings.Contains(diffOut.String(), "\n+++ b/") {
		t.Error("no diff printed")
	}

	// A second run changes nothing: diff, -w and --out.
	var again bytes.Buffer
	if res := corpusMigrate(t, action.Input{Paths: []string{two}}, emit.Diff, &again, ""); again.Len() != 0 || res.Changed != 0 {
		t.Errorf("second run diffs %d bytes: %+v\n%.2000s", again.Len(), res, again.String())
	}
	if res := corpusMigrate(t, action.Input{Paths: []string{two}}, emit.Write, nil, ""); res.Changed != 0 {
		t.Errorf("second -w changed %d files", res.Changed)
	}
	outAgain := filepath.Join(base, "out-again")
	corpusMigrate(t, action.Input{Paths: []string{outOne}}, emit.Tree, nil, outAgain)
	c := treeFiles(t, outAgain)
	for k, v := range a {
		if c[k] != v {
			t.Errorf("%s: a second --out changed it", k)
		}
	}
}
