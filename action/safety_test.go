package action_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// tree returns the files under dir (relative name -> content; a symlink
// as "-> target").
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			l, err := os.Readlink(p)
			out[rel] = "-> " + l
			return err
		}
		b, err := os.ReadFile(p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func migrateTo(t *testing.T, in action.Input, mode emit.Mode, outDir string) *action.MigrateResult {
	t.Helper()
	var out bytes.Buffer
	res, err := action.Migrate(context.Background(), in, action.MigrateOptions{Plan: plan.Options{Target: rules.DefaultTarget},
		Output: mode, Out: &out, OutDir: outDir})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func sameTree(t *testing.T, what string, a, b map[string]string) {
	t.Helper()
	for k, v := range a {
		if b[k] != v {
			t.Errorf("%s: %s differs:\n%s\n---\n%s", what, k, v, b[k])
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s: %s only in the second tree", what, k)
		}
	}
}

// TestMigrateOutNothingToChange (issue 14 item 1): --out on a tree without
// device requests, and on migrated output, copies the tree unchanged.
func TestMigrateOutNothingToChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "in", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	res := migrateTo(t, action.Input{Paths: []string{"in"}, Dir: dir}, emit.Tree, "o1")
	if res.Changed != 0 || tree(t, filepath.Join(dir, "o1"))["cm.yaml"] == "" {
		t.Fatalf("%+v %v", res, tree(t, filepath.Join(dir, "o1")))
	}
	testfs.WriteFile(t, filepath.Join(dir, "gpu", "pod.yaml"), fmt.Sprintf(gpuPod, "p"))
	if res = migrateTo(t, action.Input{Paths: []string{"gpu"}, Dir: dir}, emit.Tree, "o2"); res.Changed != 1 {
		t.Fatalf("first run: %+v", res)
	}
	if res = migrateTo(t, action.Input{Paths: []string{"o2"}, Dir: dir}, emit.Tree, "o3"); res.Changed != 0 || res.Migrated != 0 {
		t.Fatalf("second run: %+v", res)
	}
	sameTree(t, "second run", tree(t, filepath.Join(dir, "o2")), tree(t, filepath.Join(dir, "o3")))
}

// TestMigrateTopLevelSequence (item 1b): a document that is a sequence (a
// JSON6902 patch) is kept as it is; the file's other documents migrate.
func TestMigrateTopLevelSequence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	patch := "- op: add\n  path: /spec/x\n  value: 1\n"
	testfs.WriteFile(t, filepath.Join(dir, "patch.yaml"), patch)
	testfs.WriteFile(t, filepath.Join(dir, "mixed.yaml"), patch+"---\n"+fmt.Sprintf(gpuPod, "p"))
	res := migrateTo(t, action.Input{Paths: []string{"."}, Dir: dir}, emit.Write, "")
	if res.Failed != 0 || res.Migrated != 1 {
		t.Fatalf("%+v %v", res, res.Diagnostics)
	}
	got := tree(t, dir)
	if got["patch.yaml"] != patch || !strings.HasPrefix(got["mixed.yaml"], patch+"---\n") || strings.Contains(got["mixed.yaml"], "nvidia.com/gpu") {
		t.Errorf("%v", got)
	}
}

// TestMigrateOutSeveralInputs (item 2): --out keeps each input's place, so
// files of the same name under different inputs are both written.
func TestMigrateOutSeveralInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "in", "nvidia-dp", "gpu-test1.yaml"), fmt.Sprintf(gpuPod, "a"))
	testfs.WriteFile(t, filepath.Join(dir, "in", "repo", "apps", "gpu-test1.yaml"), fmt.Sprintf(gpuPod, "b"))
	testfs.WriteFile(t, filepath.Join(dir, "in", "repo", "apps", "README.md"), "readme\n")
	res := migrateTo(t, action.Input{Paths: []string{"in/nvidia-dp", "in/repo/apps"}, Dir: dir}, emit.Tree, "out")
	got := tree(t, filepath.Join(dir, "out"))
	if res.Changed != 2 || !strings.Contains(got["nvidia-dp/gpu-test1.yaml"], "name: a-gpu") ||
		!strings.Contains(got["repo/apps/gpu-test1.yaml"], "name: b-gpu") || got["repo/apps/README.md"] != "readme\n" || len(got) != 3 {
		t.Errorf("%+v %v", res, got)
	}
}

// collide is a folder whose three Deployments `llm` compete for one
// claim template name: the third gets a hashed name.
func collide(t *testing.T, dir string) {
	t.Helper()
	dep := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n"
	for _, f := range []string{"a.yaml", "b.yaml", "c.yaml"} {
		testfs.WriteFile(t, filepath.Join(dir, "apps", f), dep)
	}
}

// TestMigrateNamesIndependentOfPlace (item 3): the same tree in two
// folders, named by relative or absolute paths, migrated by -w or --out,
// gets the same names; folders that are not applied together do not
// compete for names.
func TestMigrateNamesIndependentOfPlace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	one, two := filepath.Join(base, "one", "repo"), filepath.Join(base, "elsewhere", "deep", "repo")
	collide(t, one)
	collide(t, two)
	migrateTo(t, action.Input{Paths: []string{"repo"}, Dir: filepath.Dir(one)}, emit.Tree, "out")
	migrateTo(t, action.Input{Paths: []string{two}}, emit.Write, "")
	a, b := tree(t, filepath.Join(filepath.Dir(one), "out")), tree(t, two)
	sameTree(t, "two folders, --out and -w", a, b)
	if !strings.Contains(a["apps/c.yaml"], "resourceClaimTemplateName: llm-gpu-") {
		t.Errorf("no hashed name made: %s", a["apps/c.yaml"])
	}

	envs := filepath.Join(base, "envs")
	for _, e := range []string{"staging", "prod"} {
		testfs.WriteFile(t, filepath.Join(envs, e, "llm.yaml"), "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: llm\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n")
	}
	migrateTo(t, action.Input{Paths: []string{envs}}, emit.Write, "")
	for _, e := range []string{"staging", "prod"} {
		if got := tree(t, envs)[e+"/llm.yaml"]; !strings.Contains(got, "resourceClaimTemplateName: llm-gpu\n") {
			t.Errorf("%s: %s", e, got)
		}
	}
}

// TestMigrateSameFileTwice (issue 13 item 2): a file reached twice, by a
// folder and its own name, by ./, or by a symlink, is migrated once; one
// reached by a hard link too is read once and refused (issue 29 item 9:
// TestMigrateRefusesHardLinkedFile).
func TestMigrateSameFileTwice(t *testing.T) {
	t.Parallel()
	for _, paths := range [][]string{{"m", "m/pod.yaml"}, {"m/pod.yaml", "./m/pod.yaml"}, {"m/pod.yaml", "hard.yaml"}, {"m", "m/link.yaml"}} {
		dir := t.TempDir()
		testfs.WriteFile(t, filepath.Join(dir, "m", "pod.yaml"), fmt.Sprintf(gpuPod, "p"))
		hard := paths[1] == "hard.yaml"
		if hard {
			if err := os.Link(filepath.Join(dir, "m", "pod.yaml"), filepath.Join(dir, "hard.yaml")); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("pod.yaml", filepath.Join(dir, "m", "link.yaml")); err != nil {
			t.Fatal(err)
		}
		res := migrateTo(t, action.Input{Paths: paths, Dir: dir}, emit.Write, "")
		b, _ := os.ReadFile(filepath.Join(dir, "m", "pod.yaml"))
		if hard {
			if res.Changed != 0 || res.Failed != 1 || string(b) != fmt.Sprintf(gpuPod, "p") {
				t.Errorf("%v: %+v\n%s", paths, res, b)
			}
			continue
		}
		if res.Migrated != 1 || res.Changed != 1 || strings.Count(string(b), "kind: ResourceClaimTemplate") != 1 || strings.Count(string(b), "resourceClaimTemplateName: p-gpu") != 1 || strings.Count(string(b), "claims:\n      - name: gpu\n") != 1 {
			t.Errorf("%v: %+v\n%s", paths, res, b)
		}
		if l, err := os.Readlink(filepath.Join(dir, "m", "link.yaml")); err != nil || l != "pod.yaml" {
			t.Errorf("%v: the symlink was replaced: %v", paths, err)
		}
	}
}

// TestMigrateSymlinks (item 6): a root that is a symlink to a folder is
// followed; -w writes through a link given as an argument and never
// replaces it; --out mirrors links as links.
func TestMigrateSymlinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "real", "pod.yaml"), fmt.Sprintf(gpuPod, "p"))
	if err := os.Symlink("real", filepath.Join(dir, "root")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pod.yaml", filepath.Join(dir, "real", "alias.yaml")); err != nil {
		t.Fatal(err)
	}
	res := migrateTo(t, action.Input{Paths: []string{"root"}, Dir: dir}, emit.Tree, "out")
	got := tree(t, filepath.Join(dir, "out"))
	if res.Migrated != 1 || !strings.Contains(got["pod.yaml"], "ResourceClaimTemplate") || got["alias.yaml"] != "-> pod.yaml" {
		t.Errorf("symlinked root: %+v %v", res, got)
	}
	res = migrateTo(t, action.Input{Paths: []string{"real/alias.yaml"}, Dir: dir}, emit.Write, "")
	got = tree(t, filepath.Join(dir, "real"))
	if res.Changed != 1 || got["alias.yaml"] != "-> pod.yaml" || !strings.Contains(got["pod.yaml"], "ResourceClaimTemplate") {
		t.Errorf("-w through a link: %+v %v", res, got)
	}
}

// TestMigrateKeepsModeAndOwner (item 7): -w keeps the setuid, setgid and
// sticky bits and the owner.
func TestMigrateKeepsModeAndOwner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "pod.yaml")
	testfs.WriteFile(t, p, fmt.Sprintf(gpuPod, "p"))
	mode := fs.ModePerm&0o750 | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	owner := os.Geteuid() == 0
	if owner {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // chown clears setuid
			t.Fatal(err)
		}
	}
	if res := migrateTo(t, action.Input{Paths: []string{p}}, emit.Write, ""); res.Changed != 1 {
		t.Fatalf("%+v", res)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != mode {
		t.Errorf("mode %v, want %v", fi.Mode(), mode)
	}
	if st := fi.Sys().(*syscall.Stat_t); owner && (st.Uid != 65534 || st.Gid != 65534) {
		t.Errorf("owner %d:%d, want 65534:65534", st.Uid, st.Gid)
	}
}

// TestMigrateRemovesStaleTemporaries (item 8): -w removes the temporary
// files an interrupted run left and says so; a diff only says so.
func TestMigrateRemovesStaleTemporaries(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "pod.yaml"), fmt.Sprintf(gpuPod, "p"))
	stale := filepath.Join(dir, ".pod.yaml.kubedra-123456")
	testfs.WriteFile(t, stale, "half")
	testfs.WriteFile(t, filepath.Join(dir, ".pod.yaml.kubedra-notmine"), "x")
	count := func(res *action.MigrateResult) int {
		n := 0
		for _, d := range res.Diagnostics {
			if d.Rule == emit.RuleStale && d.File == stale {
				n++
			}
		}
		return n
	}
	if res := migrateTo(t, action.Input{Paths: []string{dir}}, emit.Diff, ""); count(res) != 1 {
		t.Errorf("diff: %v", res.Diagnostics)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatal("a diff removed a file")
	}
	if res := migrateTo(t, action.Input{Paths: []string{dir}}, emit.Write, ""); count(res) != 1 {
		t.Errorf("-w: %v", res.Diagnostics)
	}
	got := tree(t, dir)
	if _, ok := got[".pod.yaml.kubedra-123456"]; ok || got[".pod.yaml.kubedra-notmine"] != "x" || len(got) != 2 {
		t.Errorf("%v", got)
	}
}

// TestMigrateDocumentErrors (item 10, issue 13 item 3): a document with a
// duplicate key, or an alias where the edit goes, is an error naming its
// file and line and keeps its bytes; the other documents of the file are
// migrated, exit 1. A file with a document that does not parse keeps all
// its bytes (issue 29 item 6).
func TestMigrateDocumentErrors(t *testing.T) {
	t.Parallel()
	dup := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: dup\nspec:\n  containers:\n  - name: c\n    resources:\n      limits: {nvidia.com/gpu: 1, nvidia.com/gpu: 2}\n"
	alias := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: alias\nx-res: &res\n  limits:\n    nvidia.com/gpu: 1\nspec:\n  containers:\n  - name: c\n    resources: *res\n"
	broken := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n"
	good := fmt.Sprintf(gpuPod, "good")
	src := dup + "---\n" + alias + "---\n" + good
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "pods.yaml"), src)
	testfs.WriteFile(t, filepath.Join(dir, "broken.yaml"), broken+"---\n"+good)
	res := migrateTo(t, action.Input{Paths: []string{"pods.yaml", "broken.yaml"}, Dir: dir}, emit.Write, "")
	if res.Migrated != 1 || res.Changed != 1 || res.Failed != 2 {
		t.Errorf("%+v", res)
	}
	want := map[string]bool{
		`pods.yaml:9 .*duplicate key "nvidia.com/gpu" \(first at line 9\)`: false,
		`pods.yaml:21 .*resources is the YAML alias \*res`:                 false,
		`broken.yaml:3 .*not valid YAML`:                                   false,
	}
	for _, d := range res.Diagnostics {
		line := fmt.Sprintf("%s:%d %s", d.File, d.Line, d.Message)
		for re := range want {
			if regexp.MustCompile(re).MatchString(line) {
				want[re] = true
			}
		}
	}
	for re, ok := range want {
		if !ok {
			t.Errorf("no diagnostic %s in %v", re, res.Diagnostics)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "pods.yaml"))
	if !strings.HasPrefix(string(b), dup+"---\n"+alias+"---\n") || !strings.Contains(string(b), "resourceClaimTemplateName: good-gpu") {
		t.Errorf("%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "broken.yaml")); string(b) != broken+"---\n"+good {
		t.Errorf("a file that does not parse was rewritten:\n%s", b)
	}
}

// TestMigrateDiffIsWhatWriteWritesWithLinks (item 9): on a tree with a
// symlink to a manifest and a name with a space, the diff is what -w
// writes, file by file.
func TestMigrateDiffIsWhatWriteWritesWithLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "apps", "with space.yaml"), fmt.Sprintf(gpuPod, "a"))
	if err := os.Symlink("with space.yaml", filepath.Join(dir, "apps", "a-link.yaml")); err != nil {
		t.Fatal(err)
	}
	before := tree(t, dir)
	var diff bytes.Buffer
	if _, err := action.Migrate(context.Background(), action.Input{Paths: []string{"apps"}, Dir: dir},
		action.MigrateOptions{Plan: plan.Options{Target: rules.DefaultTarget}, Output: emit.Diff, Out: &diff}); err != nil {
		t.Fatal(err)
	}
	migrateTo(t, action.Input{Paths: []string{"apps"}, Dir: dir}, emit.Write, "")
	after := tree(t, dir)
	var want bytes.Buffer
	for _, name := range []string{filepath.Join("apps", "a-link.yaml"), filepath.Join("apps", "with space.yaml")} {
		if before[name] != after[name] {
			want.Write((&emit.Emitter{}).Diff(emit.Change{Path: name, Old: []byte(before[name]), New: []byte(after[name])}))
		}
	}
	if diff.String() != want.String() {
		t.Errorf("diff:\n%s\nwhat -w wrote:\n%s", diff.String(), want.String())
	}
	if after[filepath.Join("apps", "a-link.yaml")] != "-> with space.yaml" || !strings.Contains(diff.String(), "--- a/apps/with space.yaml\t\n") {
		t.Errorf("%v\n%s", after, diff.String())
	}
}

// TestMigrateOutFileRoot: --out with a file as the input writes it, and
// the files migrate adds beside it (a claims file, the DeviceClasses),
// under DIR.
func TestMigrateOutFileRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Neuron: its driver's class declares no extendedResourceName, so
	// kubedra adds a DeviceClass.
	testfs.WriteFile(t, filepath.Join(dir, "in", "pod.yaml"), strings.ReplaceAll(fmt.Sprintf(gpuPod, "p"), "nvidia.com/gpu", "aws.amazon.com/neuron"))
	var out bytes.Buffer
	res, err := action.Migrate(context.Background(), action.Input{Paths: []string{"in/pod.yaml"}, Dir: dir},
		action.MigrateOptions{Plan: plan.Options{Target: rules.Version{Major: 1, Minor: 37}, Strategy: plan.ExtendedResource}, Output: emit.Tree, Out: &out, OutDir: "out"})
	if err != nil {
		t.Fatal(err)
	}
	got := tree(t, filepath.Join(dir, "out"))
	if res.Failed != 0 || !strings.Contains(got["kubedra-deviceclasses.yaml"], "kind: DeviceClass") || got["pod.yaml"] == "" || len(got) != 2 {
		t.Errorf("%+v %v", res, got)
	}
}
