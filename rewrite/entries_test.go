package rewrite_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/rewrite"
)

// TestEntrySpliceIsWholeDocument: the entry splice (which encodes only the
// entries an edit changed) writes the same bytes as the whole-document
// path it stands in for on every golden input, and on the shared corpus
// the same bytes or the same data with more of the original lines kept;
// it is taken for a good part of their edited documents.
func TestEntrySpliceIsWholeDocument(t *testing.T) {
	roots := []string{"testdata"}
	if _, err := os.Stat(corpus); err == nil && !testing.Short() {
		roots = append(roots, corpus)
	}
	for _, root := range roots {
		t.Run(root, func(t *testing.T) {
			defer rewrite.SetEntrySplice(true)
			rewrite.SetEntrySplice(false)
			_, whole, _ := corpusRun(t, root)
			n0 := rewrite.SetEntrySplice(true)
			_, spliced, _ := corpusRun(t, root)
			n := rewrite.SetEntrySplice(true) - n0
			compared, differ := 0, 0
			err := filepath.WalkDir(whole, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, _ := filepath.Rel(whole, path)
				want, _ := os.ReadFile(path)
				got, err := os.ReadFile(filepath.Join(spliced, rel))
				if err != nil {
					t.Errorf("%s: %v", rel, err)
					return nil
				}
				compared++
				if bytes.Equal(got, want) {
					return nil
				}
				// Where the whole-document path re-indents lines the edit
				// does not need (the encoder does not reproduce the
				// document: a 2-space file whose resources are indented
				// by 4), the entry splice keeps them: the same data, and
				// never fewer of the original lines.
				orig, _ := os.ReadFile(filepath.Join(root, rel))
				if cg, cw := commentTexts(got), commentTexts(want); !maps.Equal(cg, cw) {
					t.Errorf("%s: the entry splice writes comments %v, the whole-document path %v:\n%s", rel, cg, cw, lineDiff(want, got))
				} else if !sameData(t, got, want) {
					t.Errorf("%s: the entry splice and the whole-document path mean different things:\n%s", rel, lineDiff(want, got))
				} else if kg, kw := keptLines(orig, got), keptLines(orig, want); kg < kw {
					t.Errorf("%s: the entry splice keeps %d original lines, the whole-document path %d:\n%s", rel, kg, kw, lineDiff(want, got))
				} else {
					t.Logf("%s: the entry splice keeps %d original lines, the whole-document path %d:\n%s", rel, kg, kw, lineDiff(want, got))
					differ++
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d files compared (%d differ, keeping more of their lines), %d documents spliced by entry", compared, differ, n)
			if n < 10 {
				t.Errorf("the entry splice was taken for %d documents only", n)
			}
		})
	}
}

// lineDiff shows the lines of a and b from their first difference on (a
// few of each).
func lineDiff(a, b []byte) string {
	al, bl := bytes.SplitAfter(a, []byte("\n")), bytes.SplitAfter(b, []byte("\n"))
	i := 0
	for i < len(al) && i < len(bl) && bytes.Equal(al[i], bl[i]) {
		i++
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "from line %d:\n", i+1)
	for j := i; j < i+8 && j < len(al); j++ {
		fmt.Fprintf(&out, "- %q\n", al[j])
	}
	for j := i; j < i+8 && j < len(bl); j++ {
		fmt.Fprintf(&out, "+ %q\n", bl[j])
	}
	return out.String()
}

// sameData reports whether two texts hold the same documents as data.
func sameData(t *testing.T, a, b []byte) bool {
	t.Helper()
	decode := func(b []byte) []any {
		var out []any
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				return out
			}
			out = append(out, v)
		}
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

// keptLines counts the lines of orig that out still holds (as a multiset).
func keptLines(orig, out []byte) int {
	have := map[string]int{}
	for _, l := range bytes.SplitAfter(out, []byte("\n")) {
		have[string(l)]++
	}
	n := 0
	for _, l := range bytes.SplitAfter(orig, []byte("\n")) {
		if have[string(l)] > 0 {
			have[string(l)]--
			n++
		}
	}
	return n
}

// commentTexts counts the comments of a text, trailing ones too (each
// from its '#' to the end of its line, trimmed).
func commentTexts(b []byte) map[string]int {
	out := map[string]int{}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if i := bytes.Index(l, []byte("#")); i >= 0 {
			out[string(bytes.TrimSpace(l[i:]))]++
		}
	}
	return out
}
