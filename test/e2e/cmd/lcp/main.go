// Command lcp builds and runs the e2e control plane outside of go test.
//
//	go run ./cmd/lcp build        # build (or find cached) binaries, with live progress; prints the bin dir
//	go run ./cmd/lcp up           # start a control plane, print its kubeconfig path, stop on Ctrl-C
//
// Both honour K8S_VERSION (default 1.37). make e2e runs `build` before the
// tests because go test shows a test binary's output only when it ends.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

func main() {
	if len(os.Args) != 2 || (os.Args[1] != "build" && os.Args[1] != "up") {
		fmt.Fprintln(os.Stderr, "usage: lcp build|up   (K8S_VERSION selects the release, default 1.37)")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	if err := run(ctx, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "lcp:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, verb string) error {
	v, err := harness.ResolveVersion("")
	if err != nil {
		return err
	}
	if verb == "build" {
		if err := harness.EnsureBuilt(ctx, v, os.Stderr); err != nil {
			return err
		}
		fmt.Println(v.BinDir)
		return nil
	}
	c, err := harness.Start(ctx, harness.Options{})
	if err != nil {
		return err
	}
	defer c.Stop()
	fmt.Fprintf(os.Stderr, "control plane %s is up; kubectl: %s; Ctrl-C stops it\n", v.Kubernetes, c.Kubectl)
	fmt.Println(c.Kubeconfig)
	<-ctx.Done()
	return nil
}
