package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/kubedra/kubedra/inventory"
)

// DefaultStreamAbove is the default for Options.StreamAbove.
const DefaultStreamAbove = 8 << 20

// File is one input file, or one batch of its documents (see Options.Batch).
type File struct {
	// Path is the file as found: the argument itself, or the argument
	// joined with the path below it for files found in a directory; "-" for
	// stdin. Relative paths stay relative (to Options.Dir).
	Path string
	// Root is the input argument the file was found under ("-" for
	// stdin): Path itself, or a folder above it.
	Root string
	// Order is the file's position among all inputs (arguments in the order
	// given, directory entries in lexical order). It is the same for every
	// batch of a file.
	Order int
	// Data is the text this File covers, starting at byte Offset of the
	// file: the whole file, or for one batch the bytes from the end of the
	// previous batch to the end of its last document (the last batch runs
	// to the end of the file), so that the batches' Data laid end to end is
	// the file. Data is nil for a streamed file unless Options.KeepData is
	// set (see Options.StreamAbove).
	Data   []byte
	Offset int
	// Docs are the documents of the file (of this batch), in file order;
	// each Document's Span is relative to the file, not to Data.
	Docs []*inventory.Document
	// Diagnostics are the parts of the file that were not read, with
	// reasons: errors for text that does not parse or cannot be read,
	// warnings for what is skipped by design (templates, symlinks).
	Diagnostics inventory.Diagnostics
	// ParseErrors counts the Diagnostics that are syntax errors (as opposed
	// to unrendered templates or symlinks, which are skipped by design).
	ParseErrors int
	// Documents counts the non-empty documents of the file (of this batch)
	// before List flattening, including those Options.Filter let go
	// unparsed and those that failed to parse.
	Documents int
	// Batch is the batch number (0-based) and Last tells whether this is the
	// file's last batch. Without Options.Batch, Batch is 0 and Last true.
	Batch int
	Last  bool
	// Err is set when the file could not be read at all (it is also listed
	// in Diagnostics).
	Err error
	// NotFollowed is set for a symlink that was not followed (listed in
	// Diagnostics): nothing was read.
	NotFollowed bool
}

// Text returns the bytes of span, which must lie in this File's Data.
func (f *File) Text(span inventory.Span) []byte {
	return f.Data[span.Start-f.Offset : span.End-f.Offset]
}

// Diagnostic rule ids of what Read could not read.
const (
	RuleUnreadable = "input/unreadable"
	RuleNotYAML    = "input/not-yaml"
	RuleTemplate   = "input/template"
	RuleSymlink    = "input/symlink"
)

// Options steer Read.
type Options struct {
	// Dir is the folder relative paths are read from ("": the process's
	// working folder). Paths are reported as given, not joined with Dir.
	Dir string
	// Workers bounds the files read at once; 0 means GOMAXPROCS.
	Workers int
	// Ordered makes Read call fn from one goroutine at a time, in input
	// order. Without it fn is called concurrently and must be safe for that.
	Ordered bool
	// Prepare, when set, is called for each File on the goroutine that read
	// it, before fn, concurrently with other files (even when Ordered):
	// per-file work that needs no order, such as detection, goes there.
	Prepare func(*File)
	// Batch, when > 0, delivers the documents of a file in calls of at most
	// Batch documents, so that a huge file never holds all its nodes at once.
	Batch int
	// StreamAbove is the size above which a file is streamed instead of read
	// whole; 0 means DefaultStreamAbove.
	StreamAbove int64
	// KeepData makes streamed files carry their text in File.Data too
	// (batch by batch); files read whole always do.
	KeepData bool
	// Filter, when set, sees each document's bytes before parsing; when it
	// returns false the document is counted but not parsed. It must be safe
	// for concurrent use.
	Filter func(doc []byte) bool
	// Temporary, when set, is called (from one goroutine) with the path,
	// as opened, of each kubedra temporary file found while walking a
	// folder (see Temporary): what an interrupted run left behind.
	Temporary func(path string)
	// Skip, when set, is asked about each file and folder found below a
	// folder argument (the path as opened): true leaves it unread and
	// unlisted, because another source reads it (the templates of a Helm
	// chart that renders). Paths given as arguments are always read.
	Skip func(path string) bool
}

// Read reads paths ("-" is stdin, read from stdin) and calls fn for each
// file, as described in the package documentation. Inputs that cannot be
// read are reported to fn as a File with Err set (and a Skip), and reading
// continues; a path that does not exist is such an input. Read returns the
// first error fn returns (after which it stops) or ctx's error.
func Read(ctx context.Context, paths []string, stdin io.Reader, opts Options, fn func(*File) error) error {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.StreamAbove <= 0 {
		opts.StreamAbove = DefaultStreamAbove
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	jobs := make(chan job)
	var (
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	seq := newSequencer(opts.Ordered)

	var wg sync.WaitGroup
	for range opts.Workers {
		wg.Go(func() {
			for j := range jobs {
				err := seq.run(ctx, j.order, func(emit func(*File) error) error {
					if opts.Prepare != nil {
						next := emit
						emit = func(f *File) error {
							opts.Prepare(f)
							return next(f)
						}
					}
					return readJob(ctx, j, stdin, opts, emit)
				}, fn)
				if err != nil {
					fail(err)
				}
			}
		})
	}

	order := 0
	send := func(j job) bool {
		j.order = order
		order++
		select {
		case jobs <- j:
			return true
		case <-ctx.Done():
			return false
		}
	}
	// A file reached twice (an argument and the folder holding it, a
	// symlink or a hard link to it) is read once, under its first name.
	seen := map[any]bool{}
	temporary := opts.Temporary
	if temporary != nil {
		temporary = func(p string) {
			if id, ok := fileID(p); ok && !seen[id] {
				seen[id] = true
				opts.Temporary(p)
			}
		}
	}
walk:
	for _, p := range paths {
		if p == "-" {
			if !send(job{path: "-", root: "-"}) {
				break
			}
			continue
		}
		for j := range enumerate(p, opts.Dir, temporary, opts.Skip) {
			if j.err == nil && j.skip == nil {
				if id, ok := fileID(j.open); ok {
					if seen[id] {
						continue
					}
					seen[id] = true
				}
			}
			j.root = p
			if !send(j) {
				break walk
			}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// job is one input: a file to read, or a problem found while walking.
type job struct {
	root  string // the argument it was found under
	path  string // as reported
	open  string // as opened: path, under Options.Dir when relative
	order int
	skip  *inventory.Diagnostic // a symlink not followed
	err   error                 // the path could not be walked or stat'ed
}

// enumerate lists the files under root in lexical order. Symlinks are
// followed only when their target stays under root; symlinked directories
// under root are not walked again (their target is walked on its own).
// Paths are reported under root as given; dir resolves a relative root.
// temporary, when set, is told of kubedra temporary files found (opened
// paths); skip, when set, leaves out the files and folders below root it
// names (opened paths).
func enumerate(root, dir string, temporary func(string), skip func(string) bool) func(yield func(job) bool) {
	return func(yield func(job) bool) {
		open := inventory.Resolve(dir, root)
		info, err := os.Stat(open)
		if err != nil {
			yield(job{path: root, open: open, err: err})
			return
		}
		if !info.IsDir() {
			yield(job{path: root, open: open})
			return
		}
		realRoot, err := filepath.EvalSymlinks(open)
		if err != nil {
			yield(job{path: root, open: open, err: err})
			return
		}
		realRoot, _ = filepath.Abs(realRoot)
		w := &walker{root: root, walkRoot: walkRoot(open, realRoot), realRoot: realRoot, temporary: temporary, skip: skip, yield: yield}
		if err := filepath.WalkDir(w.walkRoot, w.visit); err != nil && !w.stop {
			yield(job{path: root, open: open, err: err})
		}
	}
}

// walkRoot is where the folder opened at open is walked: a root that is a
// symlink to a folder is walked at its target, realRoot (WalkDir does not
// follow a root link); paths are still reported under the root as given.
func walkRoot(open, realRoot string) string {
	if fi, err := os.Lstat(open); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return realRoot
	}
	return open
}

// walker walks one folder argument for enumerate.
type walker struct {
	root     string // the argument, as given
	walkRoot string // where it is walked (see walkRoot)
	realRoot string // its absolute path, symlinks resolved
	// temporary and skip are enumerate's.
	temporary func(string)
	skip      func(string) bool
	yield     func(job) bool
	// stop is set once yield asks for no more jobs.
	stop bool
}

// report is the reported path of a walked file: root joined with its path
// below walkRoot, as filepath.WalkDir(root) would give it.
func (w *walker) report(p string) string {
	if p == w.walkRoot {
		return w.root
	}
	rel, err := filepath.Rel(w.walkRoot, p)
	if err != nil {
		return p
	}
	return filepath.Join(w.root, rel)
}

// visit is the filepath.WalkDir callback: it reports walk errors, leaves
// out skipped and hidden folders and hands other entries to file.
func (w *walker) visit(p string, d fs.DirEntry, err error) error {
	if w.stop {
		return fs.SkipAll
	}
	if err != nil {
		w.stop = !w.yield(job{path: w.report(p), open: p, err: err})
		if d != nil && d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if p != w.walkRoot && w.skip != nil && w.skip(p) {
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	}
	if d.IsDir() {
		if p != w.walkRoot && strings.HasPrefix(d.Name(), ".") && d.Name() != "." && d.Name() != ".." {
			return fs.SkipDir // .git and friends
		}
		return nil
	}
	w.file(p, d)
	return nil
}

// file decides what a walked entry that is not a folder is: a symlink to
// read or list as skipped, a kubedra temporary file (told to temporary),
// a manifest to read, or nothing.
func (w *walker) file(p string, d fs.DirEntry) {
	if d.Type()&fs.ModeSymlink != 0 {
		if j, ok := symlink(p, w.report(p), w.realRoot); ok && !walkedTarget(p, w.realRoot) {
			w.stop = !w.yield(j)
		}
		return
	}
	if Temporary(d.Name()) && w.temporary != nil && d.Type().IsRegular() {
		w.temporary(p)
		return
	}
	if !d.Type().IsRegular() || !manifestExt(p) || d.Name() == ConfigFileName {
		return
	}
	w.stop = !w.yield(job{path: w.report(p), open: p})
}

// symlink decides what to do with a symlink found while walking (opened
// at p, reported as name): read it (a manifest file under the root), list
// it as skipped (dangling, or leaving the root), or ignore it (a directory
// under the root, or not a manifest).
func symlink(p, name, realRoot string) (job, bool) {
	skip := func(reason string) *inventory.Diagnostic {
		return &inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleSymlink, File: name, Message: reason}
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		if !manifestExt(p) {
			return job{}, false
		}
		return job{path: name, open: p, skip: skip("dangling symlink: not followed")}, true
	}
	abs, _ := filepath.Abs(target)
	if rel, err := filepath.Rel(realRoot, abs); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		link, err := os.Readlink(p)
		if err != nil {
			link = target
		}
		return job{path: name, open: p, skip: skip(fmt.Sprintf("symlink to %s leaves the scanned root: not followed", link))}, true
	}
	info, err := os.Stat(p)
	if err != nil || info.IsDir() || !manifestExt(p) {
		return job{}, false
	}
	return job{path: name, open: p}, true
}

// walkedTarget reports whether the symlink at p leads to a manifest file
// that the walk of realRoot reads under its own name (not in a hidden
// folder): the link is then not read at all, so the file is migrated
// once, and written in place, never through the link.
func walkedTarget(p, realRoot string) bool {
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	abs, _ := filepath.Abs(target)
	rel, err := filepath.Rel(realRoot, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false
	}
	fi, err := os.Stat(abs)
	if err != nil || !fi.Mode().IsRegular() || !manifestExt(abs) || filepath.Base(abs) == ConfigFileName {
		return false
	}
	for _, part := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
		if strings.HasPrefix(part, ".") && part != "." && part != ".." {
			return false
		}
	}
	return true
}

// realPath is path with every symlink resolved, made absolute.
func realPath(path string) (any, bool) {
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, false
	}
	abs, err := filepath.Abs(r)
	return abs, err == nil
}

// ConfigFileName is kubedra's own config file (config.FileName): a
// folder walk never reads it as a manifest.
const ConfigFileName = ".kubedra.yaml"

// Temporary reports whether a file name is one of kubedra's temporary
// files (".NAME.kubedra-NNNN", ".kubedra-NNNN", see rewrite/emit), which
// an interrupted run can leave behind.
func Temporary(name string) bool {
	i := strings.LastIndex(name, ".kubedra-")
	if !strings.HasPrefix(name, ".") || i < 0 {
		return false
	}
	digits := name[i+len(".kubedra-"):]
	if digits == "" {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func manifestExt(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

// readJob reads one input and emits its File (or batches).
func readJob(ctx context.Context, j job, stdin io.Reader, opts Options, emit func(*File) error) error {
	f := &File{Path: j.path, Root: j.root, Order: j.order, Last: true}
	switch {
	case j.skip != nil:
		f.NotFollowed = true
		f.Diagnostics = append(f.Diagnostics, *j.skip)
		return emit(f)
	case j.err != nil:
		return emitReadErr(f, j.err, emit)
	}
	if j.path == "-" {
		if stdin == nil {
			stdin = strings.NewReader("")
		}
		return stream(ctx, f, stdin, opts, emit)
	}
	file, err := os.Open(j.open)
	if err != nil {
		return emitReadErr(f, err, emit)
	}
	defer file.Close()
	info, err := file.Stat()
	if err != nil {
		return emitReadErr(f, err, emit)
	}
	if info.IsDir() {
		return emitReadErr(f, errors.New("is a directory"), emit)
	}
	if info.Size() > opts.StreamAbove {
		return stream(ctx, f, file, opts, emit)
	}
	data := make([]byte, 0, info.Size()+1)
	for {
		n, err := file.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return emitReadErr(f, err, emit)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // the file grew: make room
		}
	}
	f.Data = data
	return split(ctx, f, opts, emit)
}

func emitReadErr(f *File, err error, emit func(*File) error) error {
	f.Err = err
	f.Diagnostics = append(f.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleUnreadable, File: f.Path, Message: readReason(err)})
	return emit(f)
}

// sequencer runs jobs; when ordered, it serializes their emits in order.
type sequencer struct {
	ordered bool
	mu      sync.Mutex
	cond    *sync.Cond
	next    int
}

func newSequencer(ordered bool) *sequencer {
	s := &sequencer{ordered: ordered}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// run calls work with an emit function that forwards to fn. When ordered,
// the first emit waits for the job's turn (jobs are handed out in order, so
// every earlier job is running or done and the wait ends), and the turn
// passes on when work returns.
func (s *sequencer) run(ctx context.Context, order int, work func(emit func(*File) error) error, fn func(*File) error) error {
	if !s.ordered {
		return work(func(f *File) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return fn(f)
		})
	}
	waited := false
	wait := func() {
		if waited {
			return
		}
		waited = true
		s.mu.Lock()
		for s.next != order {
			s.cond.Wait()
		}
		s.mu.Unlock()
	}
	defer func() {
		wait()
		s.mu.Lock()
		s.next++
		s.mu.Unlock()
		s.cond.Broadcast()
	}()
	return work(func(f *File) error {
		wait()
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(f)
	})
}

func readReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return "cannot read: " + err.Error()
}
