//go:build unix

package app

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

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
