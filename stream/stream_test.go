package stream_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/stream"
)

// tree writes n one-document files and returns the folder.
func tree(t *testing.T, n int) string {
	dir := t.TempDir()
	for i := range n {
		data := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%03d}\n", i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.yaml", i)), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRunOrders: whatever order the batches are read and their work done
// in, each is stepped and finished in input order, with each batch's own
// prepared value, and no more work runs at once than the bound.
func TestRunOrders(t *testing.T) {
	t.Parallel()
	const n, workers = 60, 3
	dir := tree(t, n)
	var running, most atomic.Int32
	var stepped, finished []string
	s := stream.Stages[string]{
		Workers: workers,
		Prepare: func(f *files.File) string { return f.Docs[0].Node.GetName() },
		Step: func(f *files.File, name string) (stream.Job, error) {
			stepped = append(stepped, name)
			return stream.Job{
				Work: func() {
					now := running.Add(1)
					for {
						m := most.Load()
						if now <= m || most.CompareAndSwap(m, now) {
							break
						}
					}
					time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
					running.Add(-1)
				},
				Finish: func() { finished = append(finished, name) },
			}, nil
		},
	}
	if err := stream.Run(context.Background(), []string{dir}, nil, files.Options{Workers: 8}, s); err != nil {
		t.Fatal(err)
	}
	if len(stepped) != n || len(finished) != n {
		t.Fatalf("stepped %d, finished %d; want %d each", len(stepped), len(finished), n)
	}
	for i := range n {
		want := fmt.Sprintf("c%03d", i)
		if stepped[i] != want || finished[i] != want {
			t.Fatalf("batch %d: stepped %s, finished %s; want %s", i, stepped[i], finished[i], want)
		}
	}
	if m := most.Load(); m > workers || m < 1 {
		t.Errorf("%d jobs worked at once; the bound is %d", m, workers)
	}
}

// TestRunFinishesWhatWasStepped: when a step fails, Run returns its error,
// and every job stepped before it is still finished (migrate commits the
// files that were whole, and aborts the rest itself).
func TestRunFinishesWhatWasStepped(t *testing.T) {
	t.Parallel()
	dir := tree(t, 20)
	boom := errors.New("boom")
	var stepped, finished int
	s := stream.Stages[struct{}]{
		Step: func(f *files.File, _ struct{}) (stream.Job, error) {
			if stepped == 10 {
				return stream.Job{}, boom
			}
			stepped++
			return stream.Job{Work: func() { time.Sleep(time.Millisecond) }, Finish: func() { finished++ }}, nil
		},
	}
	err := stream.Run(context.Background(), []string{dir}, nil, files.Options{}, s)
	if !errors.Is(err, boom) {
		t.Fatalf("Run: %v, want the step's error", err)
	}
	if stepped != 10 || finished != 10 {
		t.Errorf("stepped %d, finished %d; want 10 each", stepped, finished)
	}
}
