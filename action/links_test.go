package action_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Issue 29 item 9, issue 28 item 2: -w on a file with hard links would
// write a new file under one name and leave the others with the old text
// (a write in place cannot be atomic and keep the inode). It is refused,
// the file and its links keep their bytes, an error names it; the diff
// shows no change either.
func TestMigrateRefusesHardLinkedFile(t *testing.T) {
	for _, mode := range []emit.Mode{emit.Write, emit.Diff} {
		dir := testfs.Tree(t, map[string]string{"t/pod.yaml": fmt.Sprintf(gpuPod, "gpu-pod-hard"), "t/other.yaml": fmt.Sprintf(gpuPod, "other")})
		if err := os.MkdirAll(filepath.Join(dir, "t", "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(filepath.Join(dir, "t", "pod.yaml"), filepath.Join(dir, "t", "sub", "pod.yaml")); err != nil {
			t.Skip(err)
		}
		before := tree(t, dir)
		res, out := migrateConfined(t, dir, mode, "", "t")
		after := tree(t, dir)
		if after["t/pod.yaml"] != before["t/pod.yaml"] || after["t/sub/pod.yaml"] != before["t/sub/pod.yaml"] {
			t.Errorf("mode %d: a hard-linked file was rewritten", mode)
		}
		if strings.Contains(out, "pod.yaml\n") && strings.Contains(out, "gpu-pod-hard-gpu") {
			t.Errorf("mode %d: the diff shows what -w refuses:\n%s", mode, out)
		}
		if !hasError(res.Diagnostics, "hard link") {
			t.Errorf("mode %d: no error says why: %v", mode, res.Diagnostics)
		}
		if mode == emit.Write && !strings.Contains(after["t/other.yaml"], "ResourceClaimTemplate") {
			t.Errorf("the other file was not migrated")
		}
		a, _ := os.Stat(filepath.Join(dir, "t", "pod.yaml"))
		b, _ := os.Stat(filepath.Join(dir, "t", "sub", "pod.yaml"))
		if !os.SameFile(a, b) {
			t.Errorf("mode %d: the link was split", mode)
		}
	}
}

// A read-only file is not rewritten by -w unless the user says so
// (WriteReadOnly, --write-read-only).
func TestMigrateRefusesReadOnlyFile(t *testing.T) {
	dir := testfs.Tree(t, map[string]string{"t/pod.yaml": fmt.Sprintf(gpuPod, "ro")})
	p := filepath.Join(dir, "t", "pod.yaml")
	os.Chmod(p, 0o444)
	res, _ := migrateConfined(t, dir, emit.Write, "", "t")
	if b, _ := os.ReadFile(p); strings.Contains(string(b), "ResourceClaimTemplate") {
		t.Error("a read-only file was rewritten")
	}
	if !hasError(res.Diagnostics, "read-only") {
		t.Errorf("no error says why: %v", res.Diagnostics)
	}
	var out bytes.Buffer
	if _, err := action.Migrate(context.Background(), action.Input{Paths: []string{"t"}, Dir: dir},
		action.MigrateOptions{Plan: plan.Options{Target: rules.DefaultTarget}, Output: emit.Write, Out: &out, WriteReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), "ResourceClaimTemplate") {
		t.Error("WriteReadOnly did not write")
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o444 {
		t.Errorf("mode %v, want 0444 kept", fi.Mode().Perm())
	}
}

// --out equal to or inside an input is refused (it would rewrite the input
// in place, or copy the output into itself); a non-empty --out is refused
// unless MergeOut (--out-merge) says to write into it.
func TestMigrateOutRefusals(t *testing.T) {
	dir := testfs.Tree(t, map[string]string{"t/pod.yaml": fmt.Sprintf(gpuPod, "o"), "full/keep.txt": "x"})
	run := func(out string, merge bool) error {
		var b bytes.Buffer
		_, err := action.Migrate(context.Background(), action.Input{Paths: []string{"t"}, Dir: dir},
			action.MigrateOptions{Plan: plan.Options{Target: rules.DefaultTarget}, Output: emit.Tree, Out: &b, OutDir: out, MergeOut: merge})
		return err
	}
	before := tree(t, dir)
	for _, out := range []string{"t", "t/sub", "./t/"} {
		if err := run(out, true); err == nil || !strings.Contains(err.Error(), "input") {
			t.Errorf("--out %s: %v", out, err)
		}
	}
	if err := run("full", false); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty --out: %v", err)
	}
	sameTree(t, "refused runs", before, tree(t, dir))
	if err := run("full", true); err != nil {
		t.Errorf("--out-merge: %v", err)
	}
	if got := tree(t, dir); got["full/keep.txt"] != "x" || !strings.Contains(got["full/pod.yaml"], "ResourceClaimTemplate") {
		t.Errorf("merge: %v", got)
	}
	if err := run("fresh", false); err != nil {
		t.Errorf("a new --out: %v", err)
	}
}
