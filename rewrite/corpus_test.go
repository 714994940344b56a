package rewrite_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

const corpus = "../../shared/corpus/dev"

// corpusRun migrates the tree at root with the real rules, the way
// `kubedra migrate --allow-lossy --out DIR root` does (action.Migrate), and
// returns the plan, a migrated copy of the tree, and the files that failed.
func corpusRun(t *testing.T, root string) (p *plan.Plan, out string, failed map[string]string) {
	t.Helper()
	popts := plan.Options{Strategy: plan.Claims, Target: rules.DefaultTarget, AllowLossy: true}
	in := action.Input{Paths: []string{root}}
	pr, err := action.Migrate(context.Background(), in, action.MigrateOptions{Plan: popts, PlanOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(t.TempDir(), "out")
	res, err := action.Migrate(context.Background(), in, action.MigrateOptions{Plan: popts, Output: emit.Tree, OutDir: out})
	if err != nil {
		t.Fatal(err)
	}
	failed = map[string]string{}
	for _, d := range res.Diagnostics {
		if d.Rule == action.RuleRewrite {
			failed[d.File] = d.Message
		}
	}
	return pr.Plan, out, failed
}

// TestCorpus migrates every file of the shared development corpus: files
// without a planned edit are not touched, documents without one keep their
// exact bytes, every output parses, and migrating the output again changes
// nothing.
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("shared corpus not present: %v", err)
	}
	if testing.Short() {
		t.Skip("corpus run in -short mode")
	}
	p, out, failed := corpusRun(t, corpus)
	if len(p.Files) < 50 {
		t.Fatalf("only %d files planned: the corpus or the rules changed", len(p.Files))
	}
	for path, err := range failed {
		t.Logf("left unchanged: %s: %v", path, err)
	}
	planned := map[string]*plan.FilePlan{}
	for _, fp := range p.Files {
		planned[fp.Path] = fp
	}
	changed := 0
	err := filepath.WalkDir(corpus, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(corpus, path)
		before, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		after, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			t.Errorf("%s: not in the migrated tree: %v", rel, err)
			return nil
		}
		fp := planned[path]
		if slices.Contains(kustomize.Names, d.Name()) && !bytes.Equal(before, after) {
			// A kustomization whose files were migrated gains list entries
			// (the claims file, the name-reference configurations), and
			// nothing else changes.
			if extra := addedOnly(before, after); extra != "" {
				t.Errorf("%s: the kustomization changed beyond added entries: %s", rel, extra)
			}
			return nil
		}
		if fp == nil || failed[path] != "" {
			if !bytes.Equal(before, after) {
				t.Errorf("%s: no edit was planned, but the file changed", rel)
			}
			return nil
		}
		if !bytes.Equal(before, after) {
			changed++
		}
		// Every document the plan does not touch is still there, byte for byte.
		touched := map[int]bool{}
		for _, dp := range fp.Docs {
			touched[dp.Line] = true
		}
		for _, g := range fp.Governance {
			touched[g.Line] = true // a quota, LimitRange or Kueue configuration
		}
		for _, seg := range docsOf(before) {
			if seg.hasLine(touched) {
				continue
			}
			if !bytes.Contains(after, seg.text) {
				t.Errorf("%s: untouched document at line %d changed", rel, seg.line)
			}
		}
		if err := reparseAll(after); err != nil {
			t.Errorf("%s: output does not parse: %v", rel, err)
			return nil
		}
		// New objects decode strictly into their types, and so do edited
		// built-in workloads whose input did.
		valid := map[string]bool{}
		if in, err := (&kioReader{data: before}).read(); err == nil {
			for _, n := range in {
				if strictOK(n) {
					valid[n.GetKind()+"/"+n.GetName()] = true
				}
			}
		}
		outNodes, _ := (&kioReader{data: after}).read()
		t.Run(rel, func(t *testing.T) {
			for _, n := range outNodes {
				switch k := n.GetKind(); {
				case k == "ResourceClaimTemplate" || k == "ResourceClaim" || k == "DeviceClass" || valid[k+"/"+n.GetName()]:
					checkObject(t, n)
				}
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files planned, %d changed, %d left unchanged on error", len(p.Files), changed, len(failed))
	if changed == 0 {
		t.Fatal("nothing changed")
	}

	// A second run over the migrated tree plans nothing, and fails only
	// where the first run did.
	p2, _, failed2 := corpusRun(t, out)
	for _, fp := range p2.Files {
		rel, _ := filepath.Rel(out, fp.Path)
		if failed[filepath.Join(corpus, rel)] != "" {
			continue // left as it was, with the reason (a duplicate key)
		}
		t.Errorf("second run plans edits to %s", fp.Path)
	}
	for path, err := range failed2 {
		rel, _ := filepath.Rel(out, path)
		if failed[filepath.Join(corpus, rel)] == "" {
			t.Errorf("second run failed on %s: %v", rel, err)
		}
	}
}

// strictOK reports whether a built-in object decodes strictly.
func strictOK(n *yaml.RNode) bool { return knownKind(n) && objectErr(n) == nil }

func knownKind(n *yaml.RNode) bool {
	switch n.GetApiVersion() {
	case "v1", "apps/v1", "batch/v1":
		return true
	}
	return false
}

type docText struct {
	line, last int
	text       []byte
}

func (d docText) hasLine(lines map[int]bool) bool {
	for l := range lines {
		if l >= d.line && l <= d.last {
			return true
		}
	}
	return false
}

// docsOf splits a file at "---" lines (test-side, independent of the
// package's own splitter).
func docsOf(b []byte) []docText {
	var out []docText
	lines := bytes.SplitAfter(b, []byte("\n"))
	cur := docText{line: 1}
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte("---")) && (len(l) == 3 || l[3] == '\n' || l[3] == ' ' || l[3] == '\r') {
			cur.last = i
			out = append(out, cur)
			cur = docText{line: i + 2}
			continue
		}
		cur.text = append(cur.text, l...)
	}
	cur.last = len(lines)
	return append(out, cur)
}

func reparseAll(b []byte) error {
	_, err := (&kioReader{data: b}).read()
	return err
}

// addedOnly returns "" when after is before with only the lines kubedra
// adds to a kustomization inserted, else the first other difference.
func addedOnly(before, after []byte) string {
	allowed := map[string]bool{"configurations:": true, "- " + plan.NameReferenceFile: true, "- " + plan.PatchClaimsFile: true}
	b := strings.Split(string(before), "\n")
	a := strings.Split(string(after), "\n")
	i := 0
	for _, l := range a {
		if i < len(b) && l == b[i] {
			i++
			continue
		}
		if !allowed[strings.TrimSpace(l)] {
			return "line " + strconv.Quote(l)
		}
	}
	if i < len(b) {
		return "lost line " + strconv.Quote(b[i])
	}
	return ""
}
