// Package golden compares test output with files under testdata and
// rewrites them when asked: `go test ./pkg -update` or, for a whole tree
// (packages without the flag would reject -update), KUBEDRA_UPDATE_GOLDEN=1
// (`make update-golden`). Updated files must be reviewed before commit.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files with the current output")

// Update reports whether golden files should be rewritten.
func Update() bool {
	return *update || os.Getenv("KUBEDRA_UPDATE_GOLDEN") == "1"
}

// Check compares got with the file at path (relative to the test's
// package). In update mode it writes got there, then reads it back and
// requires it to match, so a second update changes nothing.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if Update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with KUBEDRA_UPDATE_GOLDEN=1 to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); review, then update with KUBEDRA_UPDATE_GOLDEN=1:\n%s", path, diff)
	}
}
