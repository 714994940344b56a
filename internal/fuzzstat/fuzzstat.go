// Package fuzzstat counts the executions of a fuzz target when
// KUBEDRA_FUZZ_STATS names a file: each fuzzing process writes its count
// there (a line "pid count seconds" a second), because go test's own
// figures stay at the seed count while a worker finds no new coverage.
package fuzzstat

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

var (
	n     atomic.Int64
	once  sync.Once
	start time.Time
)

// Count records one execution.
func Count() {
	once.Do(func() {
		path := os.Getenv("KUBEDRA_FUZZ_STATS")
		if path == "" {
			return
		}
		start = time.Now()
		go func() {
			for range time.Tick(time.Second) {
				if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintf(f, "%d %d %.0f\n", os.Getpid(), n.Load(), time.Since(start).Seconds())
					f.Close()
				}
			}
		}()
	})
	n.Add(1)
}
