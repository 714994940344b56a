package app

import (
	"bytes"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/kubedra/kubedra/rules"
)

// IOStreams are the three standard streams plus what kubedra needs to know
// about the terminal and environment. Tests build one with TestStreams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// OutTTY and ErrTTY report whether Out and ErrOut are terminals.
	OutTTY bool
	ErrTTY bool
	// InTTY reports whether In is a terminal (no data piped in).
	InTTY bool

	// LookupEnv reads the environment; injected so tests control NO_COLOR,
	// CLICOLOR_FORCE and KUBEDRA_* variables.
	LookupEnv func(string) (string, bool)
	// Getwd returns the working folder (config discovery starts there).
	Getwd func() (string, error)
}

// SystemStreams returns the process's real streams.
func SystemStreams() IOStreams {
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

// TestStreams returns streams over buffers, for tests and benchmarks (gh's
// iostreams.Test): In reads stdin; the environment is env and nothing else
// (nil is empty; KUBEDRA_CONFIG=none turns config discovery off); the
// working folder is wd, or the process's when wd is "". No stream is a
// terminal unless the caller sets OutTTY, ErrTTY or InTTY on the result.
// The buffers are stdout and stderr.
func TestStreams(stdin string, env map[string]string, wd string) (IOStreams, *bytes.Buffer, *bytes.Buffer) {
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

// Path is where a path the user typed is: relative paths are under the
// working folder (Getwd), so that a test can inject it without changing
// the process's.
func (s IOStreams) Path(p string) string {
	if p == "" || p == "-" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(workdir(s), p)
}

// loadRules loads the built-in rules and the user's files, relative to the
// working folder.
func loadRules(s IOStreams, files []string) (*rules.Set, error) {
	return rules.LoadFrom(workdir(s), files...)
}
