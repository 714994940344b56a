package app

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/kubedra/kubedra/rewrite/emit"
)

// interruptible returns a context that SIGINT, SIGTERM and SIGHUP cancel.
// On the first signal the temporary files of writes in progress are
// removed at once (the writes then fail, leaving their targets as they
// were) and the default handling comes back, so a second signal ends the
// process even if the run does not notice the first. stop releases the
// signals and reports whether one arrived.
func interruptible() (ctx context.Context, stop func() bool) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	got := make(chan bool, 1)
	go func() {
		select {
		case <-sigs:
			signal.Stop(sigs)
			cancel()
			emit.RemoveTemporary()
			got <- true
		case <-done:
			got <- false
		}
	}()
	return ctx, func() bool {
		close(done)
		interrupted := <-got
		signal.Stop(sigs)
		cancel()
		if interrupted {
			emit.RemoveTemporary() // anything made while the run unwound
		}
		return interrupted
	}
}
