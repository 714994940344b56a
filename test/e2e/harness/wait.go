package harness

import (
	"context"
	"fmt"
	"time"
)

// Poll calls cond every 200 ms until it reports done, returns an error, or
// timeout passes. cond also returns a short description of what it saw, so
// that the timeout error says what was awaited and what was last observed:
//
//	timed out after 1m0s waiting for pod ns/p to be scheduled; last seen: phase=Pending, no nodeName
//
// There is no fixed sleep anywhere in the harness: every wait is a Poll on a
// condition with a bound.
func Poll(ctx context.Context, timeout time.Duration, what string, cond func(ctx context.Context) (done bool, seen string, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	seen := "nothing yet"
	for {
		done, s, err := cond(ctx)
		if ctx.Err() != nil {
			// The deadline hit during cond: what it saw is the deadline, not the object.
			return fmt.Errorf("timed out after %s waiting for %s; last seen: %s", timeout, what, seen)
		}
		if s != "" {
			seen = s
		}
		if err != nil {
			return fmt.Errorf("waiting for %s: %w (last seen: %s)", what, err, seen)
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s; last seen: %s", timeout, what, seen)
		case <-tick.C:
		}
	}
}
