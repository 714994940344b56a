// Package fuzzstat counts the executions of a fuzz target when
// KUBEDRA_FUZZ_STATS names a file: each fuzzing process writes its count
// there (a line "pid count seconds cpu" a second: executions, wall seconds
// and the process's CPU seconds since its first execution), because go
// test's own figures stay at the seed count while a worker finds no new
// coverage. The CPU figure gives the rate a worker reaches on a core of
// its own when the machine is shared.
package fuzzstat

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
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
		cpu0 := cpu()
		go func() {
			for range time.Tick(time.Second) {
				if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					fmt.Fprintf(f, "%d %d %.0f %.2f\n", os.Getpid(), n.Load(), time.Since(start).Seconds(), (cpu() - cpu0).Seconds())
					f.Close()
				}
			}
		}()
	})
	n.Add(1)
}

// cpu is the process's user and system time.
func cpu() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
