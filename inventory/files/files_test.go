package files_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/files"
)

// doc summarises a Document for comparison.
type doc struct {
	Kind      string
	Name      string
	Index     int
	Line      int
	ListIndex int
	Span      string // the span's text
}

type result struct {
	Docs        []doc
	Skips       []inventory.Diagnostic
	ParseErrors int
	Documents   int
	// Text is the files' batches' Data laid end to end.
	Text string
}

func collect(t *testing.T, paths []string, stdin string, opts files.Options) map[string]*result {
	t.Helper()
	var mu sync.Mutex
	got := map[string]*result{}
	opts.KeepData = true
	err := files.Read(context.Background(), paths, strings.NewReader(stdin), opts, func(f *files.File) error {
		mu.Lock()
		defer mu.Unlock()
		r := got[f.Path]
		if r == nil {
			r = &result{}
			got[f.Path] = r
		}
		if f.Offset != len(r.Text) {
			t.Errorf("%s batch %d: Offset %d, but the batches before it hold %d bytes", f.Path, f.Batch, f.Offset, len(r.Text))
		}
		r.Text += string(f.Data)
		for _, d := range f.Docs {
			r.Docs = append(r.Docs, doc{Kind: d.Node.GetKind(), Name: d.Node.GetName(), Index: d.Origin.Index,
				Line: d.Origin.Line, ListIndex: d.Origin.ListIndex, Span: string(f.Text(d.Span))})
		}
		r.Skips = append(r.Skips, f.Diagnostics...)
		r.ParseErrors += f.ParseErrors
		r.Documents += f.Documents
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

const multi = `# leading comment
apiVersion: v1
kind: Pod
metadata:
  name: a
---
# only a comment
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: b}
- apiVersion: v1
  kind: Pod
  metadata: {name: c}
--- {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"}}
---
apiVersion: v1
kind: Pod
metadata:
  name: e
`

func TestReadDocuments(t *testing.T) {
	t.Parallel()
	want := &result{
		Docs: []doc{
			{Kind: "Pod", Name: "a", Index: 0, Line: 2, ListIndex: -1, Span: "# leading comment\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n"},
			{Kind: "Pod", Name: "b", Index: 1, Line: 12, ListIndex: 0, Span: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: c}\n"},
			{Kind: "Pod", Name: "c", Index: 2, Line: 15, ListIndex: 1, Span: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: b}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: c}\n"},
			{Kind: "Pod", Name: "d", Index: 3, Line: 18, ListIndex: -1, Span: `--- {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"}}` + "\n"},
			{Kind: "Pod", Name: "e", Index: 4, Line: 20, ListIndex: -1, Span: "apiVersion: v1\nkind: Pod\nmetadata:\n  name: e\n"},
		},
		Documents: 4,
		Text:      multi,
	}
	dir := t.TempDir()
	testfs.Write(t, dir, map[string]string{"m.yaml": multi})
	p := filepath.Join(dir, "m.yaml")
	for name, opts := range map[string]files.Options{
		"whole":    {},
		"streamed": {StreamAbove: 1},
		"batched":  {StreamAbove: 1, Batch: 1, Ordered: true},
	} {
		t.Run(name, func(t *testing.T) {
			got := collect(t, []string{p}, "", opts)
			if diff := cmp.Diff(want, got[p]); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("stdin", func(t *testing.T) {
		got := collect(t, []string{"-"}, multi, files.Options{})
		if diff := cmp.Diff(want, got["-"]); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestReadSkips(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.Write(t, dir, map[string]string{
		"chart/templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"x\" . }}\n",
		"chart/templates/if.yaml":     "{{- if .Values.gpu }}\napiVersion: v1\nkind: Pod\n{{- end }}\n",
		"argo.yaml": "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  templates:\n  - name: t\n" +
			"    container:\n      args: [\"{{inputs.parameters.x}}\"]\n      command:\n      - sh\n      - -c\n      - echo {{inputs.parameters.y}}\n",
		"broken.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: ok\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: after\n",
		"notes.txt":   "not a manifest",
		".git/x.yaml": "apiVersion: v1\nkind: Pod\n",
	})
	outside := t.TempDir()
	testfs.Write(t, outside, map[string]string{"secret.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: outside}\n"})
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	if err := os.Symlink("argo.yaml", filepath.Join(dir, "inside.yaml")); err != nil {
		t.Fatal(err)
	}
	// inside.yaml leads to a file the walk reads under its own name: it is
	// not read again (TestReadOnce).
	got := collect(t, []string{dir, filepath.Join(dir, "missing.yaml")}, "", files.Options{})

	var paths []string
	for p := range got {
		rel, _ := filepath.Rel(dir, p)
		paths = append(paths, rel)
	}
	slices.Sort(paths)
	wantPaths := []string{"argo.yaml", "broken.yaml", "chart/templates/deploy.yaml", "chart/templates/if.yaml", "link.yaml", "missing.yaml"}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	tests := []struct {
		file       string
		docs       []string
		skipLine   int
		skipReason string
		severity   inventory.Severity
		rule       string
		parseErrs  int
	}{
		{file: "argo.yaml", docs: []string{"w"}},
		{file: "broken.yaml", docs: []string{"ok", "after"}, skipLine: 8, skipReason: "not valid YAML", severity: inventory.Error, rule: files.RuleNotYAML, parseErrs: 1},
		{file: "chart/templates/deploy.yaml", skipLine: 4, skipReason: "Go template syntax", severity: inventory.Warning, rule: files.RuleTemplate},
		{file: "chart/templates/if.yaml", skipLine: 1, skipReason: "Go template syntax", severity: inventory.Warning, rule: files.RuleTemplate},
		{file: "link.yaml", skipReason: "leaves the scanned root", severity: inventory.Warning, rule: files.RuleSymlink},
		{file: "missing.yaml", skipReason: "cannot read: no such file or directory", severity: inventory.Error, rule: files.RuleUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			r := got[filepath.Join(dir, tt.file)]
			var names []string
			for _, d := range r.Docs {
				names = append(names, d.Name)
			}
			if diff := cmp.Diff(tt.docs, names); diff != "" {
				t.Errorf("docs (-want +got):\n%s", diff)
			}
			if tt.skipReason == "" {
				if len(r.Skips) != 0 {
					t.Errorf("unexpected skips %+v", r.Skips)
				}
				return
			}
			if len(r.Skips) != 1 || !strings.Contains(r.Skips[0].Message, tt.skipReason) || r.Skips[0].Line != tt.skipLine {
				t.Errorf("skips = %+v, want one at line %d containing %q", r.Skips, tt.skipLine, tt.skipReason)
			}
			if d := r.Skips[0]; d.Severity != tt.severity || d.Rule != tt.rule || d.File != filepath.Join(dir, tt.file) {
				t.Errorf("diagnostic = %+v, want severity %s, rule %s, file %s", d, tt.severity, tt.rule, filepath.Join(dir, tt.file))
			}
			if r.ParseErrors != tt.parseErrs {
				t.Errorf("ParseErrors = %d, want %d", r.ParseErrors, tt.parseErrs)
			}
		})
	}
}

func TestReadFilterAndOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var want []string
	for i := range 40 {
		name := filepath.Join(dir, strings.Repeat("a", i%3+1)+string(rune('a'+i%26))+strings.Repeat("z", i/26)+".yaml")
		testfs.Write(t, dir, map[string]string{filepath.Base(name): "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n---\nkind: Secret\n"})
		want = append(want, name)
	}
	slices.Sort(want)
	var order []string
	var filtered int
	err := files.Read(context.Background(), []string{dir}, nil, files.Options{Workers: 4, Ordered: true,
		Filter: func(doc []byte) bool { return strings.Contains(string(doc), "Pod") }}, func(f *files.File) error {
		order = append(order, f.Path)
		if f.Documents != 2 || len(f.Docs) != 1 {
			t.Errorf("%s: Documents=%d Docs=%d, want 2 and 1", f.Path, f.Documents, len(f.Docs))
		}
		filtered++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

// TestReadDocumentEnd: a `...` line ends a document like `---` does, so
// every Document has a span of its own.
func TestReadDocumentEnd(t *testing.T) {
	t.Parallel()
	in := "kind: A\nmetadata: {name: a}\n...\n---\nkind: B\nmetadata: {name: b}\n...\nkind: C\nmetadata: {name: c}\n... # done\n"
	got := collect(t, []string{"-"}, in, files.Options{})["-"]
	want := []doc{
		{Kind: "A", Name: "a", Line: 1, ListIndex: -1, Span: "kind: A\nmetadata: {name: a}\n"},
		{Kind: "B", Name: "b", Index: 1, Line: 5, ListIndex: -1, Span: "kind: B\nmetadata: {name: b}\n"},
		{Kind: "C", Name: "c", Index: 2, Line: 8, ListIndex: -1, Span: "kind: C\nmetadata: {name: c}\n"},
	}
	if diff := cmp.Diff(want, got.Docs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got.Text != in || len(got.Skips) != 0 {
		t.Errorf("text %q, skips %v", got.Text, got.Skips)
	}
}

// TestReadDir: relative paths are read from Options.Dir and reported as
// given, so a caller never needs to change the process's working folder.
func TestReadDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.Write(t, dir, map[string]string{"m/a.yaml": "kind: A\n", "m/sub/b.yaml": "kind: B\n", "c.yaml": "kind: C\n"})
	var paths []string
	err := files.Read(context.Background(), []string{"m", "./c.yaml", "missing.yaml"}, nil, files.Options{Dir: dir, Ordered: true},
		func(f *files.File) error {
			paths = append(paths, f.Path)
			if f.Path == "missing.yaml" && f.Err == nil {
				t.Errorf("missing.yaml: no error")
			}
			if f.Path != "missing.yaml" && (f.Err != nil || len(f.Docs) != 1) {
				t.Errorf("%s: err %v, %d docs", f.Path, f.Err, len(f.Docs))
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"m/a.yaml", "m/sub/b.yaml", "./c.yaml", "missing.yaml"}, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}

// TestReadPrepare: Prepare sees every batch before fn, on the reading
// goroutine, even when fn is ordered.
func TestReadPrepare(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 20 {
		testfs.Write(t, dir, map[string]string{fmt.Sprintf("f%02d.yaml", i): "kind: A\n---\nkind: B\n"})
	}
	var prepared sync.Map
	n := 0
	err := files.Read(context.Background(), []string{dir}, nil, files.Options{Ordered: true, Batch: 1,
		Prepare: func(f *files.File) { prepared.Store(fmt.Sprint(f.Path, f.Batch), true) }},
		func(f *files.File) error {
			if _, ok := prepared.Load(fmt.Sprint(f.Path, f.Batch)); !ok {
				t.Errorf("%s batch %d reached fn unprepared", f.Path, f.Batch)
			}
			n += len(f.Docs)
			return nil
		})
	if err != nil || n != 40 {
		t.Fatalf("err %v, %d documents", err, n)
	}
}

// TestParse reads bytes as Read reads a file.
func TestParse(t *testing.T) {
	t.Parallel()
	f := files.Parse("m.yaml", []byte(multi))
	if len(f.Docs) != 5 || string(f.Text(f.Docs[4].Span)) != "apiVersion: v1\nkind: Pod\nmetadata:\n  name: e\n" || !f.Last {
		t.Errorf("Parse: %d docs, last span %q", len(f.Docs), f.Text(f.Docs[4].Span))
	}
}

// TestReadOnce: a file reached by several names (a folder and the file,
// ./, a hard link, a symlink inside the tree) is read once, under its first
// name; a root that is a symlink to a folder is walked; kubedra's config
// and temporary files are never manifests, and temporary files are
// reported.
func TestReadOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.Write(t, dir, map[string]string{
		"m/pod.yaml":               "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
		"m/.kubedra.yaml":          "failOn: any\n",
		"m/.pod.yaml.kubedra-1234": "apiVersion: v1\nkind: Pod\nmetadata: {name: half}\n",
		"m/patch.yaml":             "- op: add\n  path: /x\n  value: 1\n",
		"m/sub/bad.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: \"\xff\"\n",
	})
	if err := os.Link(filepath.Join(dir, "m/pod.yaml"), filepath.Join(dir, "hard.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pod.yaml", filepath.Join(dir, "m/a-link.yaml")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	if err := os.Symlink("m", filepath.Join(dir, "root")); err != nil {
		t.Fatal(err)
	}
	var temps []string
	opts := files.Options{Dir: dir, Temporary: func(p string) { temps = append(temps, p) }}
	got := collect(t, []string{"m", "m/pod.yaml", "./m/pod.yaml", "hard.yaml", "root"}, "", opts)
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if diff := cmp.Diff([]string{"m/patch.yaml", "m/pod.yaml", "m/sub/bad.yaml"}, paths); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if r := got["m/patch.yaml"]; r == nil || len(r.Docs) != 0 || r.Documents != 1 || r.ParseErrors != 0 {
		t.Errorf("a top-level sequence is counted, not a Document: %+v", r)
	}
	if r := got["m/sub/bad.yaml"]; r == nil || len(r.Skips) != 1 || r.Skips[0].Line != 6 || !strings.Contains(r.Skips[0].Message, "UTF-8") {
		t.Errorf("invalid UTF-8 is reported at its line: %+v", r)
	}
	if len(temps) != 1 || filepath.Base(temps[0]) != ".pod.yaml.kubedra-1234" {
		t.Errorf("temporary files: %v", temps)
	}
	got = collect(t, []string{"root"}, "", files.Options{Dir: dir})
	if r := got[filepath.Join("root", "pod.yaml")]; r == nil || len(r.Docs) != 1 {
		t.Errorf("a symlinked root is walked: %v", got)
	}
}

// TestReadSkip: Options.Skip leaves out what it names below a folder
// argument (a file, or a whole folder), never an argument itself.
func TestReadSkip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.Write(t, dir, map[string]string{"c/Chart.yaml": "name: c\n", "c/templates/a.yaml": "kind: {{ .X }}\n", "c/values.yaml": "x: 1\n",
		"c/ci/v.yaml": "x: 2\n"})
	skip := func(p string) bool {
		rel, _ := filepath.Rel(filepath.Join(dir, "c"), p)
		return rel == "templates" || rel == "values.yaml"
	}
	var paths []string
	err := files.Read(context.Background(), []string{"c", "c/values.yaml"}, nil, files.Options{Dir: dir, Ordered: true, Skip: skip},
		func(f *files.File) error {
			paths = append(paths, f.Path)
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"c/Chart.yaml", "c/ci/v.yaml", "c/values.yaml"}, paths); diff != "" {
		t.Errorf("paths (-want +got):\n%s", diff)
	}
}
