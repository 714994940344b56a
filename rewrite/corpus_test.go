package rewrite_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

const corpus = "../../shared/corpus/dev"

// corpusRun migrates the whole corpus with the real rules and returns, per
// file, the input and output bytes.
func corpusRun(t *testing.T, root string, paths []string, data map[string][]byte) (map[string][]byte, *plan.Plan, map[string]error) {
	t.Helper()
	set := rules.Default()
	var mu sync.Mutex
	var findings []inventory.Finding
	skipped := map[string]bool{}
	read := func(f *files.File) error {
		fs := detect.Documents(f.Docs, detect.Options{TemplatePaths: set.TemplatePaths()})
		mu.Lock()
		defer mu.Unlock()
		if len(f.Skips) > 0 || f.Err != nil {
			skipped[f.Path] = true
			return nil
		}
		findings = append(findings, fs...)
		if data[f.Path] == nil {
			data[f.Path] = f.Data
		}
		return nil
	}
	if err := files.Read(context.Background(), paths, nil, files.Options{KeepData: true}, read); err != nil {
		t.Fatal(err)
	}
	p, err := plan.Build(findings, set, plan.Options{Strategy: plan.Claims, Target: rules.DefaultTarget, AllowLossy: true, Encoder: set})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	errs := map[string]error{}
	for _, fp := range p.Files {
		res, err := rewrite.File(data[fp.Path], fp)
		if err != nil {
			errs[fp.Path] = err
			continue
		}
		out[fp.Path] = res.Content
	}
	return out, p, errs
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
	data := map[string][]byte{}
	out, p, errs := corpusRun(t, corpus, []string{corpus}, data)
	if len(p.Files) < 50 {
		t.Fatalf("only %d files planned: the corpus or the rules changed", len(p.Files))
	}
	for path, err := range errs {
		t.Logf("left unchanged: %s: %v", path, err)
	}
	changed := 0
	for _, fp := range p.Files {
		after, ok := out[fp.Path]
		if !ok {
			continue
		}
		before := data[fp.Path]
		if !bytes.Equal(before, after) {
			changed++
		}
		// Every document the plan does not touch is still there, byte for byte.
		touched := map[int]bool{}
		for _, dp := range fp.Docs {
			touched[dp.Line] = true
		}
		for _, seg := range docsOf(before) {
			if seg.hasLine(touched) {
				continue
			}
			if !bytes.Contains(after, seg.text) {
				t.Errorf("%s: untouched document at line %d changed", fp.Path, seg.line)
			}
		}
		if err := reparseAll(after); err != nil {
			t.Errorf("%s: output does not parse: %v", fp.Path, err)
			continue
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
		t.Run(fp.Path, func(t *testing.T) {
			for _, n := range outNodes {
				switch k := n.GetKind(); {
				case k == "ResourceClaimTemplate" || k == "ResourceClaim" || k == "DeviceClass" || valid[k+"/"+n.GetName()]:
					checkObject(t, n)
				}
			}
		})
	}
	t.Logf("%d files planned, %d changed, %d left unchanged on error", len(p.Files), changed, len(errs))

	// Second run over the migrated files: nothing changes.
	dir := t.TempDir()
	var paths []string
	for path, b := range out {
		dst := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(path, corpus+"/"), "/", "__"))
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, dst)
	}
	data2 := map[string][]byte{}
	out2, _, errs2 := corpusRun(t, dir, []string{dir}, data2)
	for path, b := range out2 {
		if !bytes.Equal(b, data2[path]) {
			t.Errorf("second run changed %s", path)
		}
	}
	for path, err := range errs2 {
		t.Errorf("second run failed on %s: %v", path, err)
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
