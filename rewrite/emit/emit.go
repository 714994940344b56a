package emit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kubedra/kubedra/internal/confine"
	"github.com/kubedra/kubedra/inventory"
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
	// Stream prints the new text of each file on Out (stdin migrated to
	// stdout).
	Stream
)

// Change is the new content of one whole file. Old is nil for a new file.
type Change struct {
	Path string
	Old  []byte
	New  []byte
	// IsNew is true for a file migrate creates (a claims file).
	IsNew bool
}

// Emitter writes the migration of each file as it is made. Its methods
// are called from one goroutine.
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
	// WorkDir is the folder relative paths are under ("": the process's).
	WorkDir string
	// Hold, when set, holds back at Commit the files it is true for: their
	// old and new text are kept in memory (Held) and nothing reaches their
	// destination before Release, so that what they deploy can be proved
	// first (migrate's proof of kustomize units).
	Hold func(path string) bool
	// WriteReadOnly lets Write (and Diff, which shows what Write does)
	// rewrite files without write permission (--write-read-only); their
	// mode is kept.
	WriteReadOnly bool

	held      []Change
	releasing bool
	written   map[string]bool
	baseDir   string
	roots     *confine.Roots
}

// spillAbove is how much of a file's output is kept in memory before it
// goes to a temporary file (the size above which inventory/files streams).
const spillAbove = 8 << 20

// File is the output of one file in progress: its old and new text arrive
// piece by piece, in file order, and nothing reaches its destination
// before Commit. Abort leaves everything as if the file had not been read.
type File struct {
	e      *Emitter
	path   string
	isNew  bool
	out    *spool // new text (Write, Tree, Stream) or diff hunks (Diff)
	orig   *spool // old text (Stream: written on Abort)
	hunks  *hunks
	differ bool
	held   bool // Emitter.Hold: kept until Release
}

// Begin starts the output of the file at path; isNew marks a file migrate
// creates.
func (e *Emitter) Begin(path string, isNew bool) (*File, error) {
	f := &File{e: e, path: path, isNew: isNew}
	if e.Hold != nil && !e.releasing && e.Mode != Stream && e.Hold(path) {
		f.held = true
		f.out, f.orig = &spool{}, &spool{}
		return f, nil
	}
	if err := e.Writable(path, isNew); err != nil {
		return nil, err
	}
	switch e.Mode {
	case Diff:
		f.out = &spool{}
		f.hunks = &hunks{w: f.out}
	case Write:
		dst := resolve(e.open(path))
		f.out = &spool{dir: filepath.Dir(dst), name: filepath.Base(dst)}
	case Tree:
		dst, err := e.outPath(path)
		if err != nil {
			return nil, err
		}
		if _, err := confine.New("", e.open(e.Dir)).Within(dst); err != nil {
			return nil, err
		}
		f.out = &spool{dir: filepath.Dir(dst), name: filepath.Base(dst)}
	case Stream:
		f.out, f.orig = &spool{}, &spool{}
	default:
		return nil, fmt.Errorf("unknown mode %d", e.Mode)
	}
	return f, nil
}

// Change adds a piece of the old file and what replaces it.
func (f *File) Change(old, new []byte) error {
	if !bytes.Equal(old, new) {
		f.differ = true
	}
	if f.hunks != nil {
		f.hunks.change(old, new)
		return f.hunks.err
	}
	if f.orig != nil {
		if _, err := f.orig.Write(old); err != nil {
			return err
		}
	}
	_, err := f.out.Write(new)
	return err
}

// Commit writes the file's output where the mode sends it and reports
// whether the file changed. An unchanged file is left alone (Diff and
// Write), copied (Tree) or printed as it was (Stream).
func (f *File) Commit() (changed bool, err error) {
	defer f.release()
	e := f.e
	changed = f.differ || f.isNew
	if f.held {
		if changed {
			var old, nw bytes.Buffer
			if _, err := f.orig.WriteTo(&old); err != nil {
				return false, err
			}
			if _, err := f.out.WriteTo(&nw); err != nil {
				return false, err
			}
			e.held = append(e.held, Change{Path: f.path, Old: old.Bytes(), New: nw.Bytes(), IsNew: f.isNew})
		}
		return changed, nil
	}
	switch e.Mode {
	case Diff:
		if !changed {
			return false, nil
		}
		f.hunks.finish()
		if f.hunks.err != nil {
			return false, f.hunks.err
		}
		name := strings.TrimPrefix(filepath.ToSlash(f.path), "/")
		from := "a/" + name
		if f.isNew {
			from = "/dev/null"
		}
		var head bytes.Buffer
		// A name with a space ends with a tab, as git writes it: GNU patch
		// otherwise takes the name to end at the space.
		tab := ""
		if strings.ContainsAny(name, " \t") {
			tab = "\t"
		}
		fmt.Fprintf(&head, "--- %s%s\n+++ b/%s%s\n", from, tab, name, tab)
		return true, e.writeDiff(head.Bytes(), f.out)
	case Write:
		if !changed {
			return false, nil
		}
		return true, f.out.commit(e.open(f.path), original(e.open(f.path), f.isNew), 0o644)
	case Tree:
		dst, err := e.outPath(f.path)
		if err != nil {
			return false, err
		}
		if e.written == nil {
			e.written = map[string]bool{}
		}
		e.written[dst] = true
		return changed, f.out.commit(dst, nil, modeOf(e.open(f.path), f.isNew))
	default: // Stream
		_, err := f.out.WriteTo(e.Out)
		return changed, err
	}
}

// Abort discards the file's output. In Stream mode the old text is printed
// instead, so the stream is passed on as it came.
func (f *File) Abort() error {
	defer f.release()
	if f.e.Mode == Stream && !f.held {
		_, err := f.orig.WriteTo(f.e.Out)
		return err
	}
	return nil
}

func (f *File) release() {
	f.out.discard()
	if f.orig != nil {
		f.orig.discard()
	}
}

// Emit writes one whole-file change according to the mode (side files:
// claims files, kustomizations, DeviceClasses).
func (e *Emitter) Emit(c Change) error {
	f, err := e.Begin(c.Path, c.IsNew)
	if err != nil {
		return err
	}
	if err := f.Change(c.Old, c.New); err != nil {
		f.Abort()
		return err
	}
	_, err = f.Commit()
	return err
}

// Held are the files held back so far, in the order they were committed:
// what each was and what it becomes.
func (e *Emitter) Held() []Change { return e.held }

// Release writes the held files that keep says to, in order, as Emit
// would have; the others are dropped (left as they were). failed is told
// of each file that could not be written.
func (e *Emitter) Release(keep func(path string) bool, failed func(path string, err error)) {
	e.releasing = true
	defer func() { e.releasing = false }()
	for _, h := range e.held {
		if !keep(h.Path) {
			continue
		}
		if err := e.Emit(h); err != nil {
			failed(h.Path, err)
		}
	}
	e.held = nil
}

// Edit edits (or creates) the file at path, which the run did not read
// as an input (a claims file, a kustomization, the DeviceClass file): it
// reads the file as it is (nil when it does not exist), and writes what
// edit makes of it, when that differs. changed reports a write.
func (e *Emitter) Edit(path string, edit func(old []byte) ([]byte, error)) (changed bool, err error) {
	if err := e.Within(path); err != nil {
		return false, err
	}
	old, err := os.ReadFile(e.open(path))
	isNew := errors.Is(err, fs.ErrNotExist)
	if err != nil && !isNew {
		return false, err
	}
	nw, err := edit(old)
	if err != nil {
		return false, err
	}
	if !isNew && bytes.Equal(old, nw) {
		return false, nil
	}
	return true, e.Emit(Change{Path: path, Old: old, New: nw, IsNew: isNew})
}

// Diff renders one change as a unified diff (a/ and b/ prefixes, as git
// does, so `git apply` and `patch -p1` take it).
func (e *Emitter) Diff(c Change) []byte {
	var out bytes.Buffer
	d := &Emitter{Mode: Diff, Out: &out, Color: e.Color}
	_ = d.Emit(c)
	return out.Bytes()
}

// writeDiff writes a diff's header and hunks to Out, coloured when asked.
func (e *Emitter) writeDiff(head []byte, hunks *spool) error {
	if !e.Color {
		if _, err := e.Out.Write(head); err != nil {
			return err
		}
		_, err := hunks.WriteTo(e.Out)
		return err
	}
	var plain bytes.Buffer
	plain.Write(head)
	if _, err := hunks.WriteTo(&plain); err != nil {
		return err
	}
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(plain.Bytes(), []byte("\n")) {
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
	_, err := e.Out.Write(out.Bytes())
	return err
}

func colour(w *bytes.Buffer, code string, line []byte) {
	body := bytes.TrimSuffix(line, []byte("\n"))
	fmt.Fprintf(w, "\x1b[%sm%s\x1b[0m", code, body)
	if len(body) < len(line) {
		w.WriteByte('\n')
	}
}

// Writable returns why the file at path cannot be written where the mode
// sends it (nil when it can): it leads outside the roots (Within, every
// mode but Stream); in place (Write, and Diff, which shows what Write
// does), an existing file with more than one hard link (a write in place
// cannot be atomic and keep the inode, and a new file under one name would
// leave the others with the old text, so it is refused rather than
// split), or without write permission unless WriteReadOnly.
func (e *Emitter) Writable(path string, isNew bool) error {
	if e.Mode == Stream {
		return nil
	}
	if err := e.Within(path); err != nil {
		return err
	}
	if isNew || e.Mode == Tree {
		return nil
	}
	fi, err := os.Stat(e.open(path))
	if err != nil {
		return nil
	}
	if n := links(fi); n > 1 && fi.Mode().IsRegular() {
		return fmt.Errorf("%s has %d hard links: writing it in place would give this name a new file and leave the other names with the old text; refused (make the names one file, or migrate with --out)", path, n)
	}
	if fi.Mode().Perm()&0o222 == 0 && !e.WriteReadOnly {
		return fmt.Errorf("%s is read-only: refused (pass --write-read-only to rewrite it; its mode is kept)", path)
	}
	return nil
}

// Within returns an error (a *confine.Error) when the file at path leads,
// symlinks resolved, outside the input roots (Roots): such a file is
// neither read nor written, in any mode. Without Roots nothing is
// confined.
func (e *Emitter) Within(path string) error {
	if e.roots == nil {
		e.roots = confine.New(e.WorkDir, e.Roots...)
	}
	_, err := e.roots.Within(e.open(path))
	return err
}

// open is where a path as the user named it is on disk.
func (e *Emitter) open(p string) string { return inventory.Resolve(e.WorkDir, p) }

// modeOf is the mode a written copy gets: the original's permission,
// setuid, setgid and sticky bits, or 0644 for a new file.
func modeOf(path string, isNew bool) fs.FileMode {
	if fi, err := os.Stat(path); err == nil && !isNew {
		return fi.Mode() & keptBits
	}
	return 0o644
}

// original is the file a write in place replaces (its owner and mode are
// kept), or nil for a new file.
func original(path string, isNew bool) fs.FileInfo {
	if isNew {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return fi
}

// outPath maps an input path (or a file migrate adds beside one) to its
// place under Dir: its path below the base of the roots (see base), so
// that several inputs keep their structure and never overwrite each other.
func (e *Emitter) outPath(p string) (string, error) {
	abs, err := filepath.Abs(e.open(p))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(e.base(), abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not under any input path", p)
	}
	return e.open(filepath.Join(e.Dir, rel)), nil
}

func (e *Emitter) absRoots() []string {
	var out []string
	for _, r := range e.Roots {
		if r == "-" {
			continue
		}
		if abs, err := filepath.Abs(e.open(r)); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// base is the folder the output tree mirrors: a lone folder root itself
// (R/x goes to Dir/x), else the deepest folder holding every root (a file
// root counts as its folder): `--out o in/a in/repo/apps` writes o/a/...
// and o/repo/apps/....
func (e *Emitter) base() string {
	if e.baseDir != "" {
		return e.baseDir
	}
	var b string
	for i, r := range e.absRoots() {
		d := r
		if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
			d = filepath.Dir(r)
		}
		if i == 0 {
			b = d
			continue
		}
		for b != filepath.Dir(b) {
			if rel, err := filepath.Rel(b, d); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				break
			}
			b = filepath.Dir(b)
		}
	}
	e.baseDir = b
	return b
}

// CopyRest completes a Tree: it copies every regular file under the input
// roots that Emit did not write (READMEs, charts, files without changes
// that were not manifests), with its mode, and every symlink as a symlink,
// so Dir holds the whole migrated tree. A root that is a symlink to a
// folder is copied from its target.
func (e *Emitter) CopyRest() error {
	if e.Mode != Tree {
		return nil
	}
	if e.written == nil {
		e.written = map[string]bool{}
	}
	absOut, _ := filepath.Abs(e.open(e.Dir))
	for _, r := range e.Roots {
		if r == "-" {
			continue
		}
		walkRoot := e.open(r)
		if real, err := filepath.EvalSymlinks(walkRoot); err == nil {
			walkRoot = real
		}
		err := filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if abs, _ := filepath.Abs(p); abs == absOut || d.Name() == ".git" {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() && d.Type()&fs.ModeSymlink == 0 {
				return nil
			}
			name := r
			if rel, err := filepath.Rel(walkRoot, p); err == nil && rel != "." {
				name = filepath.Join(r, rel)
			}
			dst, err := e.outPath(name)
			if err != nil || e.written[dst] {
				return err
			}
			e.written[dst] = true
			if d.Type()&fs.ModeSymlink != 0 {
				return copyLink(p, dst)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			return WriteFileMode(dst, b, fi.Mode()&keptBits)
		})
		if err != nil {
			return fmt.Errorf("copying %s to %s: %w", r, e.Dir, err)
		}
	}
	return nil
}

// copyLink makes dst a symlink with the same target as the link at src.
func copyLink(src, dst string) error {
	target, err := os.Readlink(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if cur, err := os.Readlink(dst); err == nil && cur == target {
		return nil
	}
	os.Remove(dst)
	return os.Symlink(target, dst)
}

// WriteFile replaces path with data atomically, keeping the original's
// mode (0644 for a new file); see WriteFileMode.
func WriteFile(path string, data []byte) error {
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
		mode = fi.Mode() & keptBits
	}
	return WriteFileMode(path, data, mode)
}

// WriteFileMode is kubedra's one atomic write: a temporary file in the
// same folder (made when missing), synced to disk, given mode, then
// renamed over path. A failure leaves path as it was and no temporary file.
func WriteFileMode(path string, data []byte, mode fs.FileMode) error {
	s := &spool{dir: filepath.Dir(path), name: filepath.Base(path)}
	defer s.discard()
	if _, err := s.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return s.commit(path, nil, mode)
}
