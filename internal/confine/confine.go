// Package confine is kubedra's one containment rule for the files it reads
// and writes: a path is used only when, symlinks resolved, it lies under
// one of the roots the user named (the PATH arguments of scan, migrate and
// check, --out, bundle's output folder); files the user names on the
// command line themselves (--rules, --config) are roots of their own.
// Repositories, dumps and clusters are not trusted: a symlink in a
// repository, a kustomization's "../../elsewhere", a name read from a dump
// all resolve to paths here, and any that leaves the roots is refused with
// an error naming it (*Error), whatever stage asked.
//
// Files read for their content (rules, .kubedra.yaml, functionConfigs) are
// read by ReadFile: regular files only (never a FIFO or a device: /dev/zero
// would read until memory runs out, a FIFO would hang), at most a bounded
// number of bytes.
//
// The check is made on the path as it is when kubedra opens it; a
// repository is content, not a concurrent process, so the window between
// the check and the open is not defended (os.Root would, at the cost of
// every write going through a handle per root; bundle's writes into its
// own fresh folder use one, see bundle.Write).
package confine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Error is a path refused because, symlinks resolved, it leaves the roots.
type Error struct {
	// Path is the path as it was asked for; Real where it leads.
	Path, Real string
}

func (e *Error) Error() string {
	if e.Real != "" && e.Real != e.Path {
		return fmt.Sprintf("%s leads to %s, outside the folders named on the command line: refused", e.Path, e.Real)
	}
	return fmt.Sprintf("%s is outside the folders named on the command line: refused", e.Path)
}

// ErrOutside matches every *Error (errors.Is).
var ErrOutside = errors.New("outside the roots")

// Is makes errors.Is(err, ErrOutside) true for an *Error.
func (e *Error) Is(target error) bool { return target == ErrOutside }

// Roots are the folders paths must stay under, as real absolute paths.
// A nil or empty Roots confines nothing (Within accepts every path): the
// callers that have no roots (stdin, a KRM function's items) read no file.
type Roots struct {
	dirs []string
}

// New makes the roots of paths (relative ones under dir): a folder is a
// root, and a file's folder is (migrate adds files beside its inputs).
// "-" (stdin) is no root. A path that does not exist yet (an --out
// folder) is a root where it would be made.
func New(dir string, paths ...string) *Roots {
	r := &Roots{}
	for _, p := range paths {
		if p == "-" || p == "" {
			continue
		}
		if dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		rp := Real(p)
		if fi, err := os.Stat(rp); err == nil && !fi.IsDir() {
			rp = filepath.Dir(rp)
		}
		r.dirs = append(r.dirs, rp)
	}
	return r
}

// Add adds roots as New makes them.
func (r *Roots) Add(dir string, paths ...string) {
	r.dirs = append(r.dirs, New(dir, paths...).dirs...)
}

// Empty reports whether r confines nothing.
func (r *Roots) Empty() bool { return r == nil || len(r.dirs) == 0 }

// Within returns where path leads (symlinks resolved, absolute) when that
// is under one of the roots, else an *Error naming it. A path that does
// not exist yet is judged by where it would be made.
func (r *Roots) Within(path string) (string, error) {
	rp := Real(path)
	if r.Empty() {
		return rp, nil
	}
	for _, d := range r.dirs {
		if Under(d, rp) {
			return rp, nil
		}
	}
	return rp, &Error{Path: path, Real: rp}
}

// Under reports whether path is dir or below it (both clean and
// absolute).
func Under(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Real is where path leads: absolute, with every symlink resolved. For a
// path that does not exist, its nearest existing folder is resolved and
// the rest joined to it; a dangling link leads where its target would be
// made.
func Real(path string) string { return resolve(path, 0) }

func resolve(path string, depth int) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs
	}
	if target, err := os.Readlink(abs); err == nil && depth < 40 {
		if !filepath.IsAbs(target) {
			target = filepath.Join(resolve(parent, depth+1), target)
		}
		return resolve(target, depth+1)
	}
	return filepath.Join(resolve(parent, depth+1), filepath.Base(abs))
}

// MaxRead is how much ReadFile reads at most by default: rules files,
// .kubedra.yaml and functionConfigs are small.
const MaxRead = 4 << 20

// ErrTooLarge is returned by ReadFile for a file above its bound.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads the regular file at path, at most max bytes (MaxRead when
// max is 0). A FIFO, a device, a socket or a folder is refused without
// being read (it is opened non-blocking, so a FIFO with no writer does not
// hang), and so is a file above the bound; errors name path.
func ReadFile(path string, max int64) ([]byte, error) {
	if max <= 0 {
		max = MaxRead
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file (%s)", kind(fi.Mode()))}
	}
	if fi.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: %d bytes, above the limit of %d", ErrTooLarge, fi.Size(), max)}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w: above the limit of %d bytes", ErrTooLarge, max)}
	}
	return data, nil
}

// ReadFile reads path as the package's ReadFile does, when it is within
// the roots.
func (r *Roots) ReadFile(path string, max int64) ([]byte, error) {
	if _, err := r.Within(path); err != nil {
		return nil, err
	}
	return ReadFile(path, max)
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
