// Package iostreams is what a kubedra command runs with besides its flags:
// the three streams, whether they are terminals, the environment and the
// working folder. It is injected (kind's IOStreams, gh's pkg/iostreams), so
// tests and benchmarks run commands in-process with their own, and no
// command reads os.Stdout, os.Getenv or os.Getwd itself.
package iostreams

import (
	"bytes"
	"io"
	"maps"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/kubedra/kubedra/inventory"
)

// IOStreams are the standard streams plus what kubedra needs to know about
// the terminal and environment.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// OutTTY and ErrTTY report whether Out and ErrOut are terminals.
	OutTTY bool
	ErrTTY bool
	// InTTY reports whether In is a terminal (no data piped in).
	InTTY bool

	// LookupEnv reads the environment (NO_COLOR, CLICOLOR_FORCE, KUBEDRA_*).
	LookupEnv func(string) (string, bool)
	// Getwd returns the working folder: relative paths the user types are
	// under it, and config discovery starts there.
	Getwd func() (string, error)
}

// System returns the process's real streams.
func System() IOStreams {
	return IOStreams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		OutTTY:    isTerminal(os.Stdout),
		ErrTTY:    isTerminal(os.Stderr),
		InTTY:     isTerminal(os.Stdin),
		LookupEnv: os.LookupEnv,
		Getwd:     os.Getwd,
	}
}

// Test returns streams over buffers, for tests and benchmarks (gh's
// iostreams.Test): In reads stdin; the environment is env and nothing else
// (nil is empty; KUBEDRA_CONFIG=none turns config discovery off); the
// working folder is wd, or the process's when wd is "". No stream is a
// terminal unless the caller sets OutTTY, ErrTTY or InTTY on the result.
// The buffers are stdout and stderr.
func Test(stdin string, env map[string]string, wd string) (IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	env = maps.Clone(env)
	getwd := os.Getwd
	if wd != "" {
		getwd = func() (string, error) { return wd, nil }
	}
	return IOStreams{
		In:        strings.NewReader(stdin),
		Out:       &out,
		ErrOut:    &errOut,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Getwd:     getwd,
	}, &out, &errOut
}

func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// Getenv returns the value of an environment variable, or "".
func (s IOStreams) Getenv(key string) string {
	if s.LookupEnv == nil {
		return ""
	}
	v, _ := s.LookupEnv(key)
	return v
}

// Dir is the working folder, or "" when it cannot be known.
func (s IOStreams) Dir() string {
	if s.Getwd == nil {
		return ""
	}
	wd, _ := s.Getwd()
	return wd
}

// Path is where a path the user typed is: a relative one is under the
// working folder, so that a test can inject it without changing the
// process's. "" and "-" (stdin) stay as they are.
func (s IOStreams) Path(p string) string { return inventory.Resolve(s.Dir(), p) }
