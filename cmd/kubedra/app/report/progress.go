package report

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// Progress keeps one status line on a terminal's stderr once a run has
// taken longer than a moment, and clears it when the run ends. Callers
// start it only when stderr is a terminal and -q is not given (kind's
// logger shows its spinner only on a smart terminal, pkg/cmd/logger.go).
type Progress struct {
	w    io.Writer
	line func() string
	done chan struct{}
	wg   sync.WaitGroup
}

// StartProgress redraws line() on w every 200ms, starting after the given
// delay. line is called from another goroutine: it must be safe for that.
// A nil *Progress is valid and does nothing.
func StartProgress(w io.Writer, after time.Duration, line func() string) *Progress {
	p := &Progress{w: w, line: line, done: make(chan struct{})}
	p.wg.Go(func() {
		select {
		case <-p.done:
			return
		case <-time.After(after):
		}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			fmt.Fprintf(p.w, "\r\x1b[K%s", p.line())
			select {
			case <-p.done:
				fmt.Fprint(p.w, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	})
	return p
}

// Stop clears the line (when one was drawn) and waits for the redraws to end.
func (p *Progress) Stop() {
	if p == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
}

// StartScanProgress starts a Progress line, after the given delay, that
// counts the files a scan has read and the requests it found; onFile is
// the scan's callback (action.ScanOptions.OnFile).
func StartScanProgress(w io.Writer, after time.Duration) (p *Progress, onFile func(findings int)) {
	var files, findings atomic.Int64
	p = StartProgress(w, after, func() string { return fmt.Sprintf("scanning: %d files, %d requests", files.Load(), findings.Load()) })
	return p, func(n int) { files.Add(1); findings.Add(int64(n)) }
}
