package bench

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
)

// baselineRW reads, parses and serializes every file with kyaml on one
// goroutine: the cost of a naive tool that round-trips every file, and the
// yardstick of issue 4.
func baselineRW(b *testing.B, paths []string) time.Duration {
	b.Helper()
	start := time.Now()
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data)}).Read()
		if err != nil {
			b.Fatalf("%s: %v", p, err)
		}
		if err := (kio.ByteWriter{Writer: io.Discard}).Write(nodes); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// migrateInProcess runs `kubedra migrate -q dir` (the diff mode: every file
// read and parsed, the migrated ones rewritten and diffed) through app.Main.
func migrateInProcess(b *testing.B, args ...string) (time.Duration, int) {
	b.Helper()
	var out bytes.Buffer
	streams := app.IOStreams{In: bytes.NewReader(nil), Out: &out, ErrOut: io.Discard,
		LookupEnv: func(k string) (string, bool) {
			if k == "KUBEDRA_CONFIG" {
				return "none", true
			}
			return "", false
		}, Getwd: os.Getwd}
	start := time.Now()
	code := app.Main(append([]string{"kubedra", "migrate", "-q"}, args...), streams)
	wall := time.Since(start)
	if code != 0 {
		b.Fatalf("migrate exited %d", code)
	}
	return wall, out.Len()
}

// runMigrate runs the binary with the config file turned off and returns
// its wall time, peak RSS in MB, stdout and exit code.
func runMigrate(b *testing.B, args ...string) (time.Duration, float64, []byte, int) {
	b.Helper()
	cmd := exec.Command(kubedraBinary(b), append([]string{"migrate", "-q"}, args...)...)
	cmd.Env = append(os.Environ(), "KUBEDRA_CONFIG=none", "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.Discard
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil && cmd.ProcessState == nil {
		b.Fatal(err)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return wall, float64(ru.Maxrss) / 1024, out.Bytes(), cmd.ProcessState.ExitCode()
}

type fileID struct {
	ino   uint64
	mtime time.Time
	data  string
}

func identities(b *testing.B, paths []string) map[string]fileID {
	b.Helper()
	out := make(map[string]fileID, len(paths))
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		out[p] = fileID{ino: fi.Sys().(*syscall.Stat_t).Ino, mtime: fi.ModTime(), data: string(data)}
	}
	return out
}

// BenchmarkMigrateCorpus migrates 10,000 generated files and reports the
// time as a ratio of a single-goroutine kyaml read+parse+serialize of the
// same files (median of alternating rounds), the peak RSS of the binary
// doing the same, and checks that -w never rewrites a file it does not
// change. Targets (issue 4): ratio <= 1.25, peak RSS <= 300 MB.
func BenchmarkMigrateCorpus(b *testing.B) {
	dir, paths, _ := corpus(b)

	b.ResetTimer()
	for range b.N {
		var ratios []float64
		var base, mig time.Duration
		var diffBytes int
		for range rounds {
			base = baselineRW(b, paths)
			mig, diffBytes = migrateInProcess(b, dir)
			ratios = append(ratios, mig.Seconds()/base.Seconds())
		}
		slices.Sort(ratios)
		_, rss, _, code := runMigrate(b, dir)
		if code != 0 {
			b.Fatalf("kubedra migrate exited %d", code)
		}
		b.ReportMetric(ratios[len(ratios)/2], "migrate/baseline")
		b.ReportMetric(base.Seconds(), "baseline-s")
		b.ReportMetric(mig.Seconds(), "migrate-s")
		b.ReportMetric(rss, "peak-RSS-MB")
		b.Logf("ratios %v; last round baseline %v, migrate %v (diff %d KB); binary peak RSS %.0f MB",
			ratios, base, mig, diffBytes>>10, rss)
	}
	b.StopTimer()

	// -w rewrites only the files it changes: every other file keeps its
	// inode and mtime (an atomic rename would give it a new inode).
	before := identities(b, paths)
	if _, _, out, code := runMigrate(b, "-w", dir); len(out) != 0 || code != 0 {
		b.Fatalf("-w exited %d and printed %d bytes on stdout", code, len(out))
	}
	after := identities(b, paths)
	changed, rewritten := 0, 0
	for p, a := range after {
		bf := before[p]
		if a.data != bf.data {
			changed++
			continue
		}
		if a.ino != bf.ino || !a.mtime.Equal(bf.mtime) {
			rewritten++
			b.Errorf("%s was rewritten without a change", p)
		}
	}
	b.Logf("-w changed %d files; %d unchanged files rewritten", changed, rewritten)
	if changed == 0 {
		b.Fatalf("-w changed nothing")
	}
	// And a second -w finds nothing more to do.
	if _, _, out, _ := runMigrate(b, dir); len(out) != 0 {
		b.Errorf("second run still has a diff (%d bytes)", len(out))
	}
}
