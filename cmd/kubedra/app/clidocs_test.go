package app

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/spf13/cobra/doc"

	"github.com/kubedra/kubedra/internal/golden"
)

// TestCLIDocs keeps docs/cli, the command reference (one page per
// command, generated from the cobra tree as kubectl's is), in step with
// the commands and their flags: `make docs` regenerates it, and a flag
// added without regenerating fails here. The tree is built in an empty
// environment, so KUBEDRA_* variables and .kubedra.yaml do not leak into
// the documented defaults.
func TestCLIDocs(t *testing.T) {
	streams, _, _ := TestStreams("", nil, t.TempDir())
	root := NewCmdRoot("kubedra", streams)
	root.DisableAutoGenTag = true
	dir := t.TempDir()
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		t.Fatal(err)
	}
	got, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(got) < 8 {
		t.Fatalf("%d pages generated: %v", len(got), err)
	}
	want, _ := filepath.Glob("../../../docs/cli/*.md")
	var names []string
	for _, p := range got {
		name := filepath.Base(p)
		names = append(names, name)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		// Defaults under the home folder (kubectl's --cache-dir) are
		// written as $HOME, so the pages do not depend on who made them.
		if home, err := os.UserHomeDir(); err == nil && home != "" {
			data = bytes.ReplaceAll(data, []byte(home), []byte("$HOME"))
		}
		golden.Check(t, filepath.Join("../../../docs/cli", name), data)
	}
	for _, p := range want {
		if !slices.Contains(names, filepath.Base(p)) {
			if golden.Update() {
				_ = os.Remove(p)
				continue
			}
			t.Errorf("%s documents a command that no longer exists (make docs)", p)
		}
	}
}
