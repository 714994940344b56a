package emit

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/diff"
)

// Mode is where results go.
type Mode int

// Modes.
const (
	// Diff prints a unified diff of every change on Out.
	Diff Mode = iota
	// Write replaces changed files in place, atomically.
	Write
	// Tree writes a migrated copy of every input root under Dir.
	Tree
)

// Change is the new content of one file. Old is nil for a new file.
type Change struct {
	Path string
	Old  []byte
	New  []byte
	// IsNew is true for a file migrate creates (a claims file).
	IsNew bool
}

// Emitter writes changes. Its methods are called from one goroutine.
type Emitter struct {
	Mode Mode
	// Out receives diffs (Diff) and streams (Stream).
	Out io.Writer
	// Color adds ANSI colour to diffs; the caller decides (--color, NO_COLOR,
	// CLICOLOR_FORCE, TTY).
	Color bool
	// Dir is the output folder for Tree.
	Dir string
	// Roots are the input arguments, for Tree: a file found under root R at
	// R/x is written to Dir/x; a root that is a file goes to Dir/<base>.
	Roots []string

	written map[string]bool
}

// Emit writes one change according to the mode. An unchanged file is a
// no-op except in Tree mode, where it is copied.
func (e *Emitter) Emit(c Change) error {
	switch e.Mode {
	case Diff:
		if bytes.Equal(c.Old, c.New) && !c.IsNew {
			return nil
		}
		_, err := e.Out.Write(e.Diff(c))
		return err
	case Write:
		if bytes.Equal(c.Old, c.New) && !c.IsNew {
			return nil
		}
		return WriteFile(c.Path, c.New)
	case Tree:
		dst, err := e.outPath(c.Path)
		if err != nil {
			return err
		}
		if e.written == nil {
			e.written = map[string]bool{}
		}
		e.written[dst] = true
		mode := fs.FileMode(0o644)
		if fi, err := os.Stat(c.Path); err == nil && !c.IsNew {
			mode = fi.Mode().Perm()
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return writeAtomic(dst, c.New, mode)
	}
	return fmt.Errorf("unknown mode %d", e.Mode)
}

// Diff renders one change as a unified diff (a/ and b/ prefixes, as git
// does, so `git apply` and `patch -p1` take it).
func (e *Emitter) Diff(c Change) []byte {
	name := strings.TrimPrefix(filepath.ToSlash(c.Path), "/")
	d := diff.Diff("a/"+name, c.Old, "b/"+name, c.New)
	// go-internal starts with a "diff a b" line that neither patch nor git
	// needs; a new file is diffed against /dev/null.
	if i := bytes.IndexByte(d, '\n'); i >= 0 && bytes.HasPrefix(d, []byte("diff ")) {
		d = d[i+1:]
	}
	if c.IsNew {
		d = bytes.Replace(d, []byte("--- a/"+name+"\n"), []byte("--- /dev/null\n"), 1)
	}
	if !e.Color {
		return d
	}
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(d, []byte("\n")) {
		switch {
		case bytes.HasPrefix(l, []byte("+++")) || bytes.HasPrefix(l, []byte("---")):
			colour(&out, "1", l)
		case bytes.HasPrefix(l, []byte("@@")):
			colour(&out, "36", l)
		case bytes.HasPrefix(l, []byte("+")):
			colour(&out, "32", l)
		case bytes.HasPrefix(l, []byte("-")):
			colour(&out, "31", l)
		default:
			out.Write(l)
		}
	}
	return out.Bytes()
}

func colour(w *bytes.Buffer, code string, line []byte) {
	body := bytes.TrimSuffix(line, []byte("\n"))
	fmt.Fprintf(w, "\x1b[%sm%s\x1b[0m", code, body)
	if len(body) < len(line) {
		w.WriteByte('\n')
	}
}

// outPath maps an input path to its place under Dir.
func (e *Emitter) outPath(p string) (string, error) {
	clean := filepath.Clean(p)
	for _, r := range e.Roots {
		r = filepath.Clean(r)
		if clean == r {
			return filepath.Join(e.Dir, filepath.Base(clean)), nil
		}
		if rel, err := filepath.Rel(r, clean); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join(e.Dir, rel), nil
		}
	}
	return "", fmt.Errorf("%s is not under any input path", p)
}

// CopyRest completes a Tree: it copies every regular file under the input
// roots that Emit did not write (READMEs, charts, files without changes
// that were not manifests), so Dir holds the whole migrated tree.
func (e *Emitter) CopyRest() error {
	if e.Mode != Tree {
		return nil
	}
	absOut, _ := filepath.Abs(e.Dir)
	for _, r := range e.Roots {
		if r == "-" {
			continue
		}
		err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if abs, _ := filepath.Abs(p); abs == absOut || d.Name() == ".git" {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			dst, err := e.outPath(p)
			if err != nil || e.written[dst] {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			e.written[dst] = true
			return writeAtomic(dst, b, fi.Mode().Perm())
		})
		if err != nil {
			return fmt.Errorf("copying %s to %s: %w", r, e.Dir, err)
		}
	}
	return nil
}

// WriteFile replaces path with data atomically: a temporary file in the
// same folder, the original's mode, then a rename. A new file gets 0644.
func WriteFile(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode().Perm()
	}
	return writeAtomic(path, data, mode)
}

func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".kubedra-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Chmod(mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
