package app

import (
	"path/filepath"
	"testing"

	"github.com/kubedra/kubedra/internal/testfs"
)

// This file is the package's one harness for running the CLI in-process
// (STYLE.md §2a). It is in package app, so the app_test files use it too.

// Invocation is one run of kubedra: what the user types and the world it
// runs in.
type Invocation struct {
	// Args follow the program name: {"scan", "-o", "json", "dir"}.
	Args  []string
	Stdin string
	// Env is the whole environment; nil is an empty one.
	Env map[string]string
	// Dir is the working folder relative paths resolve against; "" is the
	// process's. The process's own working folder is never changed.
	Dir string
	// OutTTY makes stdout a terminal.
	OutTTY bool
}

// Invoke runs `kubedra inv.Args...` through Main and returns the exit
// code, stdout and stderr.
func Invoke(t testing.TB, inv Invocation) (code int, stdout, stderr string) {
	t.Helper()
	if inv.Dir != "" && !filepath.IsAbs(inv.Dir) {
		t.Fatalf("Invocation.Dir %q must be absolute", inv.Dir)
	}
	streams, out, errOut := TestStreams(inv.Stdin, inv.Env, inv.Dir)
	streams.OutTTY = inv.OutTTY
	code = Main(append([]string{"kubedra"}, inv.Args...), streams)
	return code, out.String(), errOut.String()
}

// WriteFiles writes files (slash path -> content) under dir, making
// folders as needed, and returns dir.
func WriteFiles(t testing.TB, dir string, files map[string]string) string {
	t.Helper()
	testfs.Write(t, dir, files)
	return dir
}
