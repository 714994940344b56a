package confine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWithin(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"root/sub", "outside"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "outside", "x"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "root", "f"), nil, 0o644)
	os.Symlink("../outside/x", filepath.Join(dir, "root", "out-file"))
	os.Symlink("../outside", filepath.Join(dir, "root", "out-dir"))
	os.Symlink("sub", filepath.Join(dir, "root", "in-dir"))
	os.Symlink("../outside/missing", filepath.Join(dir, "root", "dangling"))
	r := New(dir, "root")
	for name, ok := range map[string]bool{
		"root/f":               true,
		"root/new.yaml":        true,
		"root/sub/new/deep":    true,
		"root/in-dir/new":      true,
		"root/dangling":        false, // a write would create outside/missing
		"root/out-file":        false,
		"root/out-dir/new":     false,
		"root/../outside/x":    false,
		"outside/x":            false,
		"root/sub/../../other": false,
	} {
		_, err := r.Within(filepath.Join(dir, name))
		if (err == nil) != ok {
			t.Errorf("%s: within=%v, want %v (%v)", name, err == nil, ok, err)
		}
		if err != nil && (!errors.Is(err, ErrOutside) || !strings.Contains(err.Error(), name[strings.LastIndex(name, "/")+1:])) {
			t.Errorf("%s: error %v", name, err)
		}
	}
	if _, err := New(dir, "root/f").Within(filepath.Join(dir, "root", "kubedra-claims.yaml")); err != nil {
		t.Errorf("a file root's folder is a root: %v", err)
	}
	if _, err := (*Roots)(nil).Within("/etc/passwd"); err != nil {
		t.Errorf("no roots confine nothing: %v", err)
	}
}

func TestReadFileRefusesWhatIsNoRegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 101), 0o644)
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("rules: []\n"), 0o644)
	for _, c := range []struct {
		path, want string
	}{
		{fifo, "not a regular file (a named pipe)"},    // would hang
		{"/dev/zero", "not a regular file (a device)"}, // would read forever
		{dir, "not a regular file (a folder)"},
		{big, "too large"},
	} {
		if _, err := ReadFile(c.path, 100); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.path) {
			t.Errorf("%s: %v, want %q naming the file", c.path, err, c.want)
		}
	}
	if b, err := ReadFile(small, 100); err != nil || string(b) != "rules: []\n" {
		t.Errorf("regular file: %q %v", b, err)
	}
}
