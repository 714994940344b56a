package proof

import (
	"bytes"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Overlay is a file system that reads the disk, except for the files it
// holds: a migration's new text, seen before anything is written. Paths
// are absolute and clean. Only reads are overlaid; kustomize only reads.
type Overlay struct {
	filesys.FileSystem
	files map[string][]byte
}

// NewOverlay returns the disk with files (absolute path -> new text) laid
// over it.
func NewOverlay(files map[string][]byte) *Overlay {
	clean := make(map[string][]byte, len(files))
	for p, b := range files {
		clean[filepath.Clean(p)] = b
		// kustomize may resolve the folder's symlinks (CleanedAbs).
		if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			clean[filepath.Join(dir, filepath.Base(p))] = b
		}
	}
	return &Overlay{FileSystem: filesys.MakeFsOnDisk(), files: clean}
}

func (o *Overlay) abs(path string) string {
	if a, err := filepath.Abs(path); err == nil {
		return a
	}
	return filepath.Clean(path)
}

// has reports whether the absolute path is overlaid.
func (o *Overlay) has(abs string) bool {
	_, ok := o.files[abs]
	return ok
}

// ReadFile reads the overlaid text, else the disk's.
func (o *Overlay) ReadFile(path string) ([]byte, error) {
	if b, ok := o.files[o.abs(path)]; ok {
		return append([]byte(nil), b...), nil
	}
	return o.FileSystem.ReadFile(path)
}

// Exists reports an overlaid file, else asks the disk.
func (o *Overlay) Exists(path string) bool {
	return o.has(o.abs(path)) || o.FileSystem.Exists(path)
}

// CleanedAbs confirms an overlaid file's folder (the disk has no such
// file yet: a claims file migrate adds), else asks the disk.
func (o *Overlay) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if a := o.abs(path); o.has(a) {
		d, _, err := o.FileSystem.CleanedAbs(filepath.Dir(a))
		return d, filepath.Base(a), err
	}
	return o.FileSystem.CleanedAbs(path)
}

// IsDir is false for an overlaid file.
func (o *Overlay) IsDir(path string) bool {
	return !o.has(o.abs(path)) && o.FileSystem.IsDir(path)
}

// Open opens the overlaid text for reading, else the disk's file.
func (o *Overlay) Open(path string) (filesys.File, error) {
	if b, ok := o.files[o.abs(path)]; ok {
		return &memFile{Reader: bytes.NewReader(b), name: path}, nil
	}
	return o.FileSystem.Open(path)
}

// memFile is an overlaid file opened for reading.
type memFile struct {
	*bytes.Reader
	name string
}

func (f *memFile) Close() error               { return nil }
func (f *memFile) Write([]byte) (int, error)  { return 0, os.ErrPermission }
func (f *memFile) Stat() (os.FileInfo, error) { return nil, os.ErrInvalid }
