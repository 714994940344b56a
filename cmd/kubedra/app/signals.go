package app

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kubedra/kubedra/rewrite/emit"
)

// unwindGrace is how long a run may take to end after the first signal.
const unwindGrace = 2 * time.Second

// interruptible returns a context that SIGINT, SIGTERM and SIGHUP cancel.
// On the first signal the temporary files of writes in progress are
// removed at once (the writes then fail, leaving their targets as they
// were) and the default handling comes back, so a second signal ends the
// process even if the run does not notice the first; a run that has not
// ended unwindGrace after the first (a chart template that loops, a walk
// that does not look at the context) is ended by that signal again, with
// its default action, as the sender asked. stop releases the signals and
// reports whether one arrived.
func interruptible() (ctx context.Context, stop func() bool) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	got := make(chan bool, 1)
	go func() {
		select {
		case sig := <-sigs:
			signal.Stop(sigs)
			cancel()
			emit.RemoveTemporary()
			got <- true
			select {
			case <-done:
			case <-time.After(unwindGrace):
				emit.RemoveTemporary()
				if p, err := os.FindProcess(os.Getpid()); err == nil {
					_ = p.Signal(sig)
				}
			}
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
