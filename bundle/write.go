package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrNotEmpty is returned by Write when the folder exists, is not empty and
// force is false.
var ErrNotEmpty = errors.New("not empty")

// Write stores t under dir atomically: the files are written to a sibling
// temporary folder which then replaces dir, so a failed write leaves dir as it
// was. A non-empty dir is only replaced when force is true.
func Write(dir string, t Tree, force bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case err == nil && len(entries) > 0 && !force:
		return fmt.Errorf("%s is %w; pass --force to replace it", dir, ErrNotEmpty)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".kubedra-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The tree's paths hold names read from a dump or a cluster
	// (objectFile checks them): every file is written through an os.Root
	// of the new folder, so that none can land outside it.
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, rel := range t.Paths() {
		p := filepath.FromSlash(rel)
		if !filepath.IsLocal(p) {
			return fmt.Errorf("bundle file %q is outside %s: refused, nothing written", rel, dir)
		}
		if err := root.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := root.WriteFile(p, t[rel], 0o644); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if _, statErr := os.Stat(dir); statErr == nil {
		// Replace: move the old folder aside, move the new one in, then
		// drop the old one (or put it back if the second rename fails).
		old := tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return err
		}
		if err := os.Rename(tmp, dir); err != nil {
			_ = os.Rename(old, dir)
			return err
		}
		return os.RemoveAll(old)
	}
	return os.Rename(tmp, dir)
}
