package harness

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"
)

// Main is a TestMain body: it starts one control plane for the whole test
// binary, stores it in *c, runs the tests, and stops the control plane again:
// after the tests, on a start-up failure, and on SIGINT/SIGTERM/SIGHUP. (If
// the binary dies some other way, e.g. go test -timeout, the components get
// SIGKILL from the kernel: see Start.) It returns the exit code for os.Exit.
//
//	var cluster *harness.Cluster
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }
//
// With -short it runs nothing and returns 0, so `go test -short ./...` in
// test/e2e does not build a control plane.
func Main(m *testing.M, opts Options, c **Cluster) int {
	flag.Parse()
	if testing.Short() {
		fmt.Fprintln(os.Stderr, "e2e: skipping the control-plane tests in -short mode")
		return 0
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	started := make(chan *Cluster, 1)
	go func() {
		sig, ok := <-sigs
		if !ok {
			return
		}
		fmt.Fprintf(os.Stderr, "e2e: got %v; stopping the control plane\n", sig)
		cancel()
		select {
		case cl := <-started:
			if cl != nil {
				_ = cl.Stop()
			}
		default:
		}
		os.Exit(130)
	}()

	cl, err := Start(ctx, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the control plane: %v\n", err)
		return 1
	}
	*c = cl
	started <- cl
	code := m.Run()
	if code != 0 {
		cl.keepLogs = true
		fmt.Fprintf(os.Stderr, "e2e: tests failed; component logs are kept: %s\n", cl.LogFile("*"))
	}
	if err := cl.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: stopping the control plane: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
