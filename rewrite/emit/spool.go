package emit

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// spool holds output until it is committed: in memory up to spillAbove
// bytes, then in a temporary file. With dir set, the temporary file is
// made in dir (".<name>.kubedra-*"), so that commit can rename it into
// place atomically.
type spool struct {
	dir  string
	name string // the base name of the target, for the temporary file's name
	buf  bytes.Buffer
	f    *os.File
	err  error
}

func (s *spool) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.f == nil && s.buf.Len()+len(p) <= spillAbove {
		return s.buf.Write(p)
	}
	if s.f == nil {
		dir := s.dir
		if dir == "" {
			dir = os.TempDir()
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			s.err = err
			return 0, err
		}
		f, err := createTemp(dir, cmpOr(s.name, "kubedra"))
		if err != nil {
			s.err = err
			return 0, err
		}
		s.f = f
		if _, err := f.Write(s.buf.Bytes()); err != nil {
			s.err = err
			return 0, err
		}
		s.buf = bytes.Buffer{}
	}
	n, err := s.f.Write(p)
	if err != nil {
		s.err = err
	}
	return n, err
}

// WriteTo copies what the spool holds to w.
func (s *spool) WriteTo(w io.Writer) (int64, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.f == nil {
		n, err := w.Write(s.buf.Bytes())
		return int64(n), err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, s.f)
}

// commit puts what the spool holds at path atomically: the temporary file
// (made in path's folder when the spool has none yet) is synced, given
// the owner and mode of like (when set; else mode) and renamed over path.
// An existing path must be a regular file; a symlink is written through.
func (s *spool) commit(path string, like fs.FileInfo, mode fs.FileMode) (err error) {
	wrap := func(err error) error { return fmt.Errorf("writing %s: %w", path, err) }
	if s.err != nil {
		return wrap(s.err)
	}
	path = resolve(path)
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if s.f == nil || filepath.Dir(s.f.Name()) != filepath.Dir(path) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return wrap(err)
		}
		f, err := createTemp(filepath.Dir(path), filepath.Base(path))
		if err != nil {
			return wrap(err)
		}
		if _, err := s.WriteTo(f); err != nil {
			removeTemp(f)
			return wrap(err)
		}
		s.discard()
		s.f = f
	}
	f := s.f
	defer func() {
		if err != nil {
			removeTemp(f)
		}
		s.f = nil
	}()
	if like != nil {
		if err = keepOwner(f, like); err != nil {
			return wrap(err)
		}
		mode = like.Mode() & keptBits
	}
	if err = f.Chmod(mode); err != nil {
		return wrap(err)
	}
	if err = f.Sync(); err != nil {
		return wrap(err)
	}
	if err = f.Close(); err != nil {
		return wrap(err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return wrap(err)
	}
	untrack(f.Name())
	return nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// discard drops what the spool holds and removes its temporary file.
func (s *spool) discard() {
	if s.f != nil {
		removeTemp(s.f)
		s.f = nil
	}
	s.buf = bytes.Buffer{}
}

// Spool holds output until it is copied out (WriteTo) or dropped
// (Discard): in memory up to 8 MiB, then in a temporary file (removed by
// Discard, or by RemoveTemporary on a signal). A KRM function's answer is
// spooled so that nothing reaches stdout before it is known to be whole.
type Spool struct{ s spool }

func (s *Spool) Write(p []byte) (int, error) { return s.s.Write(p) }

// WriteTo copies what the spool holds to w.
func (s *Spool) WriteTo(w io.Writer) (int64, error) { return s.s.WriteTo(w) }

// Discard drops what the spool holds and removes its temporary file.
func (s *Spool) Discard() { s.s.discard() }
