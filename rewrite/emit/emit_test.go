package emit_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/emit"
	"sigs.k8s.io/kustomize/kyaml/yaml"
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
	if os.Geteuid() == 0 {
		t.Skip("root can write into read-only folders")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if err := emit.WriteFile(p, []byte("new\n")); err == nil {
		t.Fatal("want an error")
	}
	if b, _ := os.ReadFile(p); string(b) != "old\n" {
		t.Errorf("original changed: %q", b)
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

func TestHelmValues(t *testing.T) {
	t.Parallel()
	src := "gpu:\n  enabled: true\nresources:\n  limits:\n    cpu: 1\n    nvidia.com/gpu: 2\nworker:\n  resources:\n    requests:\n      amd.com/gpu: 1\nresourceName: nvidia.com/gpu\n"
	n, err := yaml.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	ds := emit.HelmValues(&inventory.Document{Node: n, Origin: inventory.Origin{Path: "chart/values.yaml"}})
	var got []string
	for _, d := range ds {
		got = append(got, d.File+":"+strconv.Itoa(d.Line)+" "+d.Resource)
	}
	if diff := cmp.Diff([]string{"chart/values.yaml:6 nvidia.com/gpu", "chart/values.yaml:10 amd.com/gpu"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !emit.IsHelmValues("c/values-prod.yaml") || emit.IsHelmValues("c/templates/values.tpl") || emit.IsHelmValues("myvalues.yaml") {
		t.Errorf("IsHelmValues")
	}
}
