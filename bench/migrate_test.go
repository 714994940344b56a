package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
)

// migrateInProcess runs `kubedra migrate -q dir` (the diff mode: every file
// read and parsed, the migrated ones rewritten and diffed) through app.Main.
func migrateInProcess(b *testing.B, args ...string) (time.Duration, int) {
	b.Helper()
	streams, out, errOut := app.TestStreams("", map[string]string{"KUBEDRA_CONFIG": "none"}, "")
	start := time.Now()
	code := app.Main(append([]string{"kubedra", "migrate", "-q"}, args...), streams)
	wall := time.Since(start)
	if code != 0 {
		b.Fatalf("migrate exited %d: %s", code, errOut)
	}
	return wall, out.Len()
}

// runMigrate runs `kubedra migrate -q args` as its own process with the
// config file turned off and returns its wall time, peak RSS in MB,
// stdout and exit code.
func runMigrate(b *testing.B, args ...string) (time.Duration, float64, []byte, int) {
	b.Helper()
	b.Setenv("KUBEDRA_CONFIG", "none")
	b.Setenv("NO_COLOR", "1")
	return run(b, append([]string{"migrate", "-q"}, args...)...)
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
// time as a ratio of a single-goroutine kyaml read+parse of the same files
// (no serialisation; median of alternating rounds), the peak RSS of the
// binary doing the same, and checks that -w never rewrites a file it does
// not change. Targets (issue 11): ratio <= 1.0 (it was 1.76), and the
// binary's peak RSS <= 300 MB (issue 4); CPU (issue 27): <= 1.0x the
// floor's (migrate runs on every core, the floor on one).
func BenchmarkMigrateCorpus(b *testing.B) {
	dir, paths, _ := corpus(b)

	b.ResetTimer()
	for range b.N {
		var ratios, cpuRatios []float64
		var base, mig time.Duration
		var diffBytes int
		for range rounds {
			var c0, c1 cost
			c0 = inProcess(func() { base = baseline(b, paths) })
			c1 = inProcess(func() { mig, diffBytes = migrateInProcess(b, dir) })
			ratios = append(ratios, mig.Seconds()/base.Seconds())
			cpuRatios = append(cpuRatios, c1.cpu.Seconds()/c0.cpu.Seconds())
		}
		slices.Sort(ratios)
		b.ReportMetric(median(cpuRatios), "migrate-cpu/baseline")
		_, rss, _, code := runMigrate(b, dir)
		if code != 0 {
			b.Fatalf("kubedra migrate exited %d", code)
		}
		b.ReportMetric(ratios[len(ratios)/2], "migrate/baseline")
		b.ReportMetric(base.Seconds(), "baseline-s")
		b.ReportMetric(mig.Seconds(), "migrate-s")
		b.ReportMetric(rss, "peak-RSS-MB")
		b.Logf("wall ratios %v, CPU ratios %v; last round baseline %v, migrate %v (diff %d KB); binary peak RSS %.0f MB",
			ratios, cpuRatios, base, mig, diffBytes>>10, rss)
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

// BenchmarkMigrateLargeFile migrates one 50 MB multi-document file (about
// 30% GPU workloads) with the binary, as a diff and in place, and reports
// the peak RSS of each (target, issue 11: <= 250 MB: the file is migrated
// document by document).
func BenchmarkMigrateLargeFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "platform.yaml")
	st, err := GenerateFile(path, bigFileSize, 2)
	if err != nil {
		b.Fatal(err)
	}
	benchMigrateFile(b, path, st)
}

// BenchmarkMigratePods is BenchmarkMigrateLargeFile for 50 MB of small GPU
// pods: every document is migrated and gains a ResourceClaimTemplate.
// Targets (issue 27): <= 240 s of CPU and <= 250 MB peak RSS; both
// benchmarks also report the CPU against the kyaml floor on the file.
func BenchmarkMigratePods(b *testing.B) {
	path := filepath.Join(b.TempDir(), "pods.yaml")
	st, err := GeneratePods(path, bigFileSize)
	if err != nil {
		b.Fatal(err)
	}
	benchMigrateFile(b, path, st)
}

func benchMigrateFile(b *testing.B, path string, st Stats) {
	b.Logf("file: %.1f MB, %d documents, %d device requests", float64(st.Bytes)/(1<<20), st.Documents, st.Requests)
	kubedraBinary(b)
	b.ResetTimer()
	for range b.N {
		b.Setenv("KUBEDRA_CONFIG", "none")
		b.Setenv("NO_COLOR", "1")
		floor := inProcess(func() { baseline(b, []string{path}) })
		r := measure(b, exec.Command(kubedraBinary(b), "migrate", "-q", path), "")
		wall, rss, diff, code := r.wall, r.rss, r.out, r.code
		if code != 0 || len(diff) == 0 {
			b.Fatalf("migrate exited %d with a %d-byte diff", code, len(diff))
		}
		added := bytes.Count(diff, []byte("\n+kind: ResourceClaimTemplate\n"))
		b.ReportMetric(rss, "diff-peak-RSS-MB")
		b.ReportMetric(wall.Seconds(), "diff-s")
		b.ReportMetric(r.cpu.Seconds(), "diff-cpu-s")
		b.ReportMetric(r.cpu.Seconds()/floor.cpu.Seconds(), "diff-cpu/floor")
		before, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		wWall, wRSS, _, code := runMigrate(b, "-w", path)
		if code != 0 {
			b.Fatalf("migrate -w exited %d", code)
		}
		after, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if bytes.Equal(before, after) {
			b.Fatal("-w changed nothing")
		}
		if got := bytes.Count(after, []byte("\nkind: ResourceClaimTemplate\n")); got != added {
			b.Fatalf("-w wrote %d claim templates, the diff shows %d", got, added)
		}
		if err := os.WriteFile(path, before, 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		b.ReportMetric(wRSS, "write-peak-RSS-MB")
		b.ReportMetric(wWall.Seconds(), "write-s")
		b.Logf("diff: %v wall, %v CPU (%.2fx the floor's %v CPU), peak RSS %.0f MB (%d MB of diff, %d claim templates); -w: %v, peak RSS %.0f MB",
			wall, r.cpu, r.cpu.Seconds()/floor.cpu.Seconds(), floor.cpu, rss, len(diff)>>20, added, wWall, wRSS)
	}
}
