//go:build unix

package app

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kubedra/kubedra/rewrite/emit"
)

// TestSignalRemovesTemporaryFiles (issue 14 item 8): a SIGTERM during -w
// removes the temporary file of the write in progress; the write then
// fails and the file stays as it was.
func TestSignalRemovesTemporaryFiles(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		dir := t.TempDir()
		p := filepath.Join(dir, "big.yaml")
		if err := os.WriteFile(p, []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := (&emit.Emitter{Mode: emit.Write}).Begin(p, false)
		if err != nil {
			t.Fatal(err)
		}
		// More than the spool keeps in memory: the rest goes to a
		// temporary file beside big.yaml.
		if err := f.Change([]byte("old\n"), bytes.Repeat([]byte("x: 1\n"), 2<<20)); err != nil {
			t.Fatal(err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Fatalf("no temporary file: %v", entries)
		}
		ctx, stop := interruptible()
		if err := syscall.Kill(os.Getpid(), sig); err != nil {
			t.Fatal(err)
		}
		<-ctx.Done()
		if !stop() {
			t.Errorf("%v: not reported as interrupted", sig)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("%v: temporary files left: %v", sig, entries)
		}
		if _, err := f.Commit(); err == nil {
			t.Errorf("%v: the interrupted write was committed", sig)
		}
		if b, _ := os.ReadFile(p); string(b) != "old\n" {
			t.Errorf("%v: the file changed", sig)
		}
	}
}

// TestSignalEndsARunThatIgnoresIt (issue 29 item 10): a run that never
// looks at its context (a chart template that loops) still ends on the
// first SIGTERM, by that signal, once its grace to unwind is over. The
// run is this test binary again, blocked for good after interruptible.
func TestSignalEndsARunThatIgnoresIt(t *testing.T) {
	if os.Getenv("KUBEDRA_SIGNAL_CHILD") == "1" {
		interruptible()
		os.Stdout.WriteString("ready\n")
		select {} // ignores the context
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignalEndsARunThatIgnoresIt$")
	cmd.Env = append(os.Environ(), "KUBEDRA_SIGNAL_CHILD=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("the run ended with %v, want by SIGTERM", err)
		}
	case <-time.After(time.Minute): // a guard, not a measure: the grace is seconds
		cmd.Process.Kill()
		t.Fatal("the run did not end on SIGTERM")
	}
}
