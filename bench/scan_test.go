package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// Sizes of the benchmark corpora (issue 2).
const (
	corpusFiles = 10_000
	bigFileSize = 50 << 20
	rounds      = 3
)

var (
	binOnce  sync.Once
	binPath  string
	binBuilt bool // built here (not KUBEDRA_TEST_BIN): TestMain removes it
	binErr   error
)

// kubedraBinary is the binary, to measure peak RSS in a process of its
// own: KUBEDRA_TEST_BIN (make bench builds bin/kubedra first), else built
// once.
func kubedraBinary(b *testing.B) string {
	b.Helper()
	binOnce.Do(func() {
		if binPath = os.Getenv("KUBEDRA_TEST_BIN"); binPath != "" {
			return
		}
		dir, err := os.MkdirTemp("", "kubedra-bench-")
		if err != nil {
			binErr = err
			return
		}
		binPath, binBuilt = filepath.Join(dir, "kubedra"), true
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/kubedra/kubedra/cmd/kubedra").CombinedOutput()
		if err != nil {
			binErr = &exec.ExitError{Stderr: out}
		}
	})
	if binErr != nil {
		b.Fatalf("building kubedra: %v", binErr)
	}
	return binPath
}

// run runs the binary and returns its wall time, peak RSS in MB, stdout
// and exit code.
func run(b *testing.B, args ...string) (time.Duration, float64, []byte, int) {
	b.Helper()
	p := measure(b, exec.Command(kubedraBinary(b), args...), "")
	return p.wall, p.rss, p.out, p.code
}

// process is what measure saw of one process: its wall time, CPU time
// (user and system), peak RSS in MB, stdout and exit code.
type process struct {
	wall, cpu time.Duration
	rss       float64
	out       []byte
	code      int
}

// measure runs cmd, its stdin the file stdin when it is not "", stderr
// discarded.
//
// The peak is VmHWM from /proc/<pid>/status, polled while the child runs:
// the child's rusage Maxrss cannot be used, because Go starts children with
// vfork semantics and Linux folds the parent's (this benchmark's, hundreds
// of MB) high-water mark into the child's at exec. Its CPU times are its
// own.
func measure(b *testing.B, cmd *exec.Cmd, stdin string) process {
	b.Helper()
	if stdin != "" {
		f, err := os.Open(stdin)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	var hwm atomic.Int64
	done := make(chan struct{})
	go func() {
		status := fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)
		for {
			if data, err := os.ReadFile(status); err == nil {
				for l := range strings.SplitSeq(string(data), "\n") {
					if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
						if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > hwm.Load() {
							hwm.Store(kb)
						}
					}
				}
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	if err != nil && cmd.ProcessState == nil {
		b.Fatal(err)
	}
	ps := cmd.ProcessState
	return process{wall: wall, cpu: ps.UserTime() + ps.SystemTime(), rss: float64(hwm.Load()) / 1024, out: out.Bytes(), code: ps.ExitCode()}
}

// baseline reads and parses every file with kyaml on one goroutine: what a
// straightforward tool does, and the yardstick of the issue.
func baseline(b *testing.B, paths []string) time.Duration {
	b.Helper()
	start := time.Now()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := (&kio.ByteReader{Reader: bytes.NewReader(data)}).Read(); err != nil {
			b.Fatalf("%s: %v", p, err)
		}
	}
	return time.Since(start)
}

// scanInProcess runs `kubedra scan -o json dir` through app.Main.
func scanInProcess(b *testing.B, dir string) (time.Duration, plan.Report) {
	b.Helper()
	streams, out, errOut := app.TestStreams("", map[string]string{"KUBEDRA_CONFIG": "none"}, "")
	start := time.Now()
	code := app.Main([]string{"kubedra", "scan", "-o", "json", dir}, streams)
	wall := time.Since(start)
	if code != 0 {
		b.Fatalf("scan exited %d: %s", code, errOut)
	}
	var r plan.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		b.Fatal(err)
	}
	return wall, r
}

// BenchmarkScanCorpus scans 10,000 generated files and reports scan time
// as a ratio of the single-goroutine kyaml parse of the same files, the
// median over several alternating rounds, plus the peak RSS of the binary.
// Targets (issue 2): ratio <= 0.75, peak RSS <= 250 MB.
func BenchmarkScanCorpus(b *testing.B) {
	dir, paths, st := corpus(b)

	b.ResetTimer()
	for range b.N {
		var ratios []float64
		var base, scan time.Duration
		for range rounds {
			base = baseline(b, paths)
			var r plan.Report
			scan, r = scanInProcess(b, dir)
			if r.Summary.Findings != st.Requests || r.Summary.Files != st.Files {
				b.Fatalf("scan found %d requests in %d files, want %d in %d", r.Summary.Findings, r.Summary.Files, st.Requests, st.Files)
			}
			ratios = append(ratios, scan.Seconds()/base.Seconds())
		}
		slices.Sort(ratios)
		_, rss, _, _ := run(b, "scan", "-o", "json", dir)
		b.ReportMetric(ratios[len(ratios)/2], "scan/baseline")
		b.ReportMetric(base.Seconds(), "baseline-s")
		b.ReportMetric(scan.Seconds(), "scan-s")
		b.ReportMetric(rss, "peak-RSS-MB")
		b.Logf("ratios %v; last round baseline %v, scan %v; binary peak RSS %.0f MB", ratios, base, scan, rss)
	}
}

// BenchmarkScanLargeFile scans one 50 MB multi-document file with the
// binary and reports its peak RSS (target <= 150 MB: the file is streamed
// document by document) and its time against the kyaml baseline.
func BenchmarkScanLargeFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "platform.yaml")
	st, err := GenerateFile(path, bigFileSize, 2)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("file: %.1f MB, %d documents, %d device requests", float64(st.Bytes)/(1<<20), st.Documents, st.Requests)
	kubedraBinary(b)
	b.ResetTimer()
	for range b.N {
		wall, rss, out, _ := run(b, "scan", "-o", "json", path)
		var r plan.Report
		if err := json.Unmarshal(out, &r); err != nil {
			b.Fatal(err)
		}
		if r.Summary.Findings != st.Requests {
			b.Fatalf("scan found %d requests, want %d", r.Summary.Findings, st.Requests)
		}
		b.ReportMetric(rss, "peak-RSS-MB")
		b.ReportMetric(wall.Seconds(), "scan-s")
		b.Logf("scan %v, peak RSS %.0f MB", wall, rss)
	}
}
