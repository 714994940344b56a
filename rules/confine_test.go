package rules

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 29 item 4: rules files are read only when they are regular files
// of a bounded size: /dev/zero would be read until memory runs out, a FIFO
// would hang.
func TestLoadRefusesWhatIsNoRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	big := filepath.Join(dir, "big.yaml")
	os.WriteFile(big, []byte("rules: []\n"+strings.Repeat("#", 5<<20)+"\n"), 0o644)
	for path, want := range map[string]string{fifo: "not a regular file", "/dev/zero": "not a regular file", big: "too large"} {
		_, err := LoadFrom("", path)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
