package emit_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/diff"

	"github.com/kubedra/kubedra/rewrite/emit"
)

func TestWriteFileKeepsModeAndLeavesNoTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(p, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := emit.WriteFile(p, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(b) != "new\n" || fi.Mode().Perm() != 0o640 {
		t.Errorf("content %q mode %v", b, fi.Mode().Perm())
	}
	if err := emit.WriteFile(filepath.Join(dir, "new.yaml"), []byte("x\n")); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(filepath.Join(dir, "new.yaml"))
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("new file mode %v", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("temp files left: %v", entries)
	}
}

func TestWriteFileFailureLeavesOriginal(t *testing.T) {
	t.Parallel()
	// A name of 245 bytes is valid, but its temporary file
	// (".<name>.kubedra-<n>") is longer than a file name may be, so the
	// write fails even for root, who could write into a read-only folder.
	dir := t.TempDir()
	p := filepath.Join(dir, strings.Repeat("a", 240)+".yaml")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := emit.WriteFile(p, []byte("new\n")); err == nil {
		t.Fatal("want an error")
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("original changed: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
}

func TestDiff(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		c     emit.Change
		color bool
		want  string
	}{
		{"change", emit.Change{Path: "m/a.yaml", Old: []byte("a: 1\nb: 2\n"), New: []byte("a: 1\nb: 3\n")}, false,
			"--- a/m/a.yaml\n+++ b/m/a.yaml\n@@ -1,2 +1,2 @@\n a: 1\n-b: 2\n+b: 3\n"},
		{"new file", emit.Change{Path: "m/claims.yaml", New: []byte("x: 1\n"), IsNew: true}, false,
			"--- /dev/null\n+++ b/m/claims.yaml\n@@ -0,0 +1,1 @@\n+x: 1\n"},
		{"colour", emit.Change{Path: "a.yaml", Old: []byte("b: 2\n"), New: []byte("b: 3\n")}, true,
			"\x1b[1m--- a/a.yaml\x1b[0m\n\x1b[1m+++ b/a.yaml\x1b[0m\n\x1b[36m@@ -1,1 +1,1 @@\x1b[0m\n\x1b[31m-b: 2\x1b[0m\n\x1b[32m+b: 3\x1b[0m\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := &emit.Emitter{Color: tt.color}
			if diff := cmp.Diff(tt.want, string(e.Diff(tt.c))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestEmitModes(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, c := range map[string]string{"sub/a.yaml": "a: 1\n", "sub/b.yaml": "b: 1\n", "notes.txt": "hi\n"} {
		if err := os.WriteFile(filepath.Join(src, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	change := emit.Change{Path: filepath.Join(src, "sub/a.yaml"), Old: []byte("a: 1\n"), New: []byte("a: 2\n")}
	same := emit.Change{Path: filepath.Join(src, "sub/b.yaml"), Old: []byte("b: 1\n"), New: []byte("b: 1\n")}

	var out bytes.Buffer
	d := &emit.Emitter{Mode: emit.Diff, Out: &out}
	if err := d.Emit(same); err != nil || out.Len() != 0 {
		t.Errorf("unchanged file diffed: %q %v", out.String(), err)
	}

	dst := filepath.Join(t.TempDir(), "out")
	tr := &emit.Emitter{Mode: emit.Tree, Dir: dst, Roots: []string{src}}
	if err := tr.Emit(change); err != nil {
		t.Fatal(err)
	}
	if err := tr.CopyRest(); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"sub/a.yaml": "a: 2\n", "sub/b.yaml": "b: 1\n", "notes.txt": "hi\n"} {
		if b, err := os.ReadFile(filepath.Join(dst, p)); err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", p, b, err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(src, "sub/a.yaml")); string(b) != "a: 1\n" {
		t.Errorf("--out changed the input")
	}
}

// piece is one part of a file: equal text, or old text and what replaces it.
type piece struct{ old, new string }

// pieces builds a multi-document file and an edit of some of its
// documents, as migrate makes: lines removed, lines added, objects
// appended after a document.
func pieces(r *rand.Rand, docs int) []piece {
	var out []piece
	for d := range docs {
		if d > 0 || r.IntN(2) == 0 {
			out = append(out, piece{"---\n", "---\n"})
		}
		var b strings.Builder
		fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\nspec:\n  containers:\n", d)
		for c := range r.IntN(3) + 1 {
			fmt.Fprintf(&b, "  - name: c%d\n    image: img\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n        cpu: 1\n", c)
		}
		old := b.String()
		if r.IntN(3) == 0 {
			out = append(out, piece{old, old})
			continue
		}
		nw := strings.ReplaceAll(old, "        nvidia.com/gpu: 1\n", "")
		nw = strings.ReplaceAll(nw, "        cpu: 1\n", "        cpu: 1\n      claims:\n      - name: gpu\n")
		nw += "  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: p-gpu\n"
		if r.IntN(2) == 0 {
			nw += "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: p-gpu\n"
		}
		out = append(out, piece{old, nw})
	}
	if r.IntN(3) == 0 { // a last line without a newline
		last := &out[len(out)-1]
		last.old = strings.TrimSuffix(last.old, "\n")
		if r.IntN(2) == 0 {
			last.new = strings.TrimSuffix(last.new, "\n")
		}
	}
	return out
}

// apply applies a unified diff to old, checking every context and removed
// line against it.
func apply(t *testing.T, old string, d string) string {
	t.Helper()
	lines := strings.SplitAfter(old, "\n")
	var out []string
	pos := 0
	dl := strings.SplitAfter(d, "\n")
	for i := 2; i < len(dl); i++ {
		h := dl[i]
		if h == "" {
			continue
		}
		var ox, nx, oy, ny int
		if _, err := fmt.Sscanf(h, "@@ -%d,%d +%d,%d @@", &ox, &nx, &oy, &ny); err != nil {
			t.Fatalf("bad hunk header %q in\n%s", h, d)
		}
		start := ox - 1
		if nx == 0 {
			start = ox
		}
		out = append(out, lines[pos:start]...)
		pos = start
		for i+1 < len(dl) && dl[i+1] != "" && !strings.HasPrefix(dl[i+1], "@@") {
			i++
			l := dl[i]
			text := l[1:]
			if i+1 < len(dl) && strings.HasPrefix(dl[i+1], `\ No newline`) {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(lines) || lines[pos] != text {
					t.Fatalf("hunk line %q does not match old line %d %q", l, pos+1, lines[min(pos, len(lines)-1)])
				}
				pos++
				if l[0] == ' ' {
					out = append(out, text)
				}
			case '+':
				out = append(out, text)
			}
		}
	}
	out = append(out, lines[pos:]...)
	return strings.Join(out, "")
}

// TestStreamedDiff: a file diffed piece by piece gives a diff that turns
// the old file into the new one, and for a file of one document the
// hunks of a whole-file diff. (With several documents the hunks may
// differ: each document is diffed on its own, so a line only anchors the
// diff within its document.)
func TestStreamedDiff(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		docs := r.IntN(5) + 1
		ps := pieces(r, docs)
		var old, nw strings.Builder
		var out bytes.Buffer
		e := &emit.Emitter{Mode: emit.Diff, Out: &out}
		f, err := e.Begin("m.yaml", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			old.WriteString(p.old)
			nw.WriteString(p.new)
			if err := f.Change([]byte(p.old), []byte(p.new)); err != nil {
				t.Fatal(err)
			}
		}
		changed, err := f.Commit()
		if err != nil {
			t.Fatal(err)
		}
		if changed != (old.String() != nw.String()) {
			t.Fatalf("case %d: changed = %v", i, changed)
		}
		if !changed {
			if out.Len() != 0 {
				t.Fatalf("case %d: unchanged file diffed", i)
			}
			continue
		}
		if got := apply(t, old.String(), out.String()); got != nw.String() {
			t.Fatalf("case %d: the diff does not give the new file:\n%s\ngot:\n%s\nwant:\n%s", i, out.String(), got, nw.String())
		}
		whole := (&emit.Emitter{}).Diff(emit.Change{Path: "m.yaml", Old: []byte(old.String()), New: []byte(nw.String())})
		if diff := cmp.Diff(string(whole), out.String()); docs == 1 && diff != "" {
			t.Errorf("case %d: streamed diff differs from the whole-file diff (-whole +streamed):\n%s", i, diff)
		}
	}
}

// TestDiffIsDiffDiff: one piece gives exactly go-internal's diff.Diff.
func TestDiffIsDiffDiff(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"a\n", "b\n", "c\n", "}\n", "\n", "x: 1\n", "- y\n"}
	for i := range 2000 {
		gen := func() string {
			var b strings.Builder
			for range r.IntN(30) {
				b.WriteString(words[r.IntN(len(words))])
			}
			s := b.String()
			if r.IntN(4) == 0 {
				s = strings.TrimSuffix(s, "\n")
			}
			return s
		}
		old, nw := gen(), gen()
		want := diff.Diff("a/f", []byte(old), "b/f", []byte(nw))
		if i := bytes.IndexByte(want, '\n'); i >= 0 {
			want = want[i+1:]
		}
		got := (&emit.Emitter{}).Diff(emit.Change{Path: "f", Old: []byte(old), New: []byte(nw)})
		if !bytes.Equal(want, got) {
			t.Fatalf("case %d: %q -> %q\nwant:\n%s\ngot:\n%s", i, old, nw, want, got)
		}
	}
}

// TestDiffNameWithSpace (issue 14 item 9): a diff of a file whose name
// has a space applies with both GNU patch -p1 and git apply.
func TestDiffNameWithSpace(t *testing.T) {
	t.Parallel()
	for _, tool := range [][]string{{"patch", "-p1", "--batch", "-i"}, {"git", "apply"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s not installed", tool[0])
			continue
		}
		dir := t.TempDir()
		name := filepath.Join("with space", "a b.yaml")
		if err := os.MkdirAll(filepath.Join(dir, "with space"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte("a: 1\nb: 2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		d := (&emit.Emitter{}).Diff(emit.Change{Path: name, Old: []byte("a: 1\nb: 2\n"), New: []byte("a: 1\nb: 3\n")})
		if err := os.WriteFile(filepath.Join(dir, "x.patch"), d, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tool[0], append(tool[1:], "x.patch")...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s\n%s", tool[0], err, out, d)
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != "a: 1\nb: 3\n" {
			t.Errorf("%s applied %q", tool[0], b)
		}
	}
}
