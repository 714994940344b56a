package app

import (
	"bytes"

	"github.com/kubedra/kubedra/cmd/kubedra/iostreams"
)

// IOStreams are what a command runs with (package iostreams).
type IOStreams = iostreams.IOStreams

// SystemStreams returns the process's real streams.
func SystemStreams() IOStreams { return iostreams.System() }

// TestStreams returns streams over buffers (iostreams.Test).
func TestStreams(stdin string, env map[string]string, wd string) (IOStreams, *bytes.Buffer, *bytes.Buffer) {
	return iostreams.Test(stdin, env, wd)
}
