// Package stream runs a command over its inputs as one ordered stream of
// batches: the runner of scan and migrate. inventory/files reads the files
// on several goroutines (a large file, or stdin, in batches); each batch is
// prepared on the goroutine that read it (detection: work that needs no
// order), then stepped in input order (planning, counting: work that
// does), and the output work its step returns (a rewrite) runs on a
// bounded number of goroutines while later batches are stepped, each
// finished (written) in input order.
//
// It is a package of its own because it is neither a source nor a stage:
// it only orders the stages of a run, so that reading stays with
// inventory/files, planning with rewrite/plan, editing with rewrite and
// writing with rewrite/emit, and every streaming command runs them the
// same way.
package stream

import (
	"context"
	"io"
	"runtime"
	"sync"

	"github.com/kubedra/kubedra/inventory/files"
)

// Stages are what a run does with each batch.
type Stages[P any] struct {
	// Prepare runs on the goroutine that read the batch, concurrently
	// with other batches; its result is handed to Step.
	Prepare func(*files.File) P
	// Step runs for each batch in input order, one at a time. The Job it
	// returns is the batch's output work (a zero Job: none).
	Step func(*files.File, P) (Job, error)
	// Workers bounds the Jobs' Work running at once (0: the cores, at
	// most 4). At most twice as many finished Jobs wait for their turn,
	// so that memory stays bounded.
	Workers int
}

// Job is a batch's output work.
type Job struct {
	// Work runs on a worker goroutine, in parallel with later batches'
	// steps and work; nil when there is none.
	Work func()
	// Finish runs in input order, after Work; nil when there is none.
	Finish func()
}

// Run reads paths as files.Read does (opts.Ordered and opts.Prepare are
// set here) and runs the stages over every batch. Every Job stepped is
// finished, even when reading stops early; Run returns the first error of
// a step or of reading (ctx's when interrupted).
func Run[P any](ctx context.Context, paths []string, stdin io.Reader, opts files.Options, s Stages[P]) error {
	workers := s.Workers
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	r := &runner[P]{s: s, prepared: map[*files.File]P{}, sem: make(chan struct{}, workers)}
	opts.Ordered = true
	opts.Prepare = r.prepare
	err := files.Read(ctx, paths, stdin, opts, r.step)
	r.drain(true)
	return err
}

// runner is one Run.
type runner[P any] struct {
	s        Stages[P]
	mu       sync.Mutex
	prepared map[*files.File]P
	sem      chan struct{}
	queue    []*queued
}

// queued is a stepped batch's Job on its way to being finished.
type queued struct {
	job  Job
	done chan struct{} // closed when Work returned; nil: no Work
}

func (r *runner[P]) prepare(f *files.File) {
	if r.s.Prepare == nil {
		return
	}
	p := r.s.Prepare(f)
	r.mu.Lock()
	r.prepared[f] = p
	r.mu.Unlock()
}

func (r *runner[P]) step(f *files.File) error {
	r.mu.Lock()
	p := r.prepared[f]
	delete(r.prepared, f)
	r.mu.Unlock()
	job, err := r.s.Step(f, p)
	if err != nil {
		return err
	}
	q := &queued{job: job}
	if job.Work != nil {
		q.done = make(chan struct{})
		r.sem <- struct{}{}
		go func() {
			defer func() { <-r.sem; close(q.done) }()
			job.Work()
		}()
	}
	r.queue = append(r.queue, q)
	r.drain(false)
	return nil
}

// drain finishes queued Jobs in order: those whose Work is done, and, to
// keep the queue short (or with all at the end), the ones it waits for.
func (r *runner[P]) drain(all bool) {
	for len(r.queue) > 0 {
		q := r.queue[0]
		if q.done != nil {
			if all || len(r.queue) > 2*cap(r.sem) {
				<-q.done
			} else {
				select {
				case <-q.done:
				default:
					return
				}
			}
		}
		r.queue[0] = nil
		r.queue = r.queue[1:]
		if q.job.Finish != nil {
			q.job.Finish()
		}
	}
}

// One runs the stages over one batch that was not read from a file
// (documents in memory: a KRM function's items, a chart's render), as Run
// would: prepare, step, work, finish.
func One[P any](f *files.File, s Stages[P]) error {
	var p P
	if s.Prepare != nil {
		p = s.Prepare(f)
	}
	job, err := s.Step(f, p)
	if err != nil {
		return err
	}
	if job.Work != nil {
		job.Work()
	}
	if job.Finish != nil {
		job.Finish()
	}
	return nil
}
