package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
)

// fnPods is how many GPU pods BenchmarkFnPods's ResourceList holds (issue
// 29: <= 500 MB peak RSS, the same bytes out).
const fnPods = 100_000

// kyamlFnChild, set in the environment, makes the test binary kyamlFn.
const kyamlFnChild = "KUBEDRA_BENCH_KYAML_FN"

// kyamlFn is the baseline KRM function: kyaml's ResourceList reader and
// writer (what fn/framework does around a function), stdin to stdout,
// doing nothing in between.
func kyamlFn() int {
	rw := &kio.ByteReadWriter{Reader: os.Stdin, Writer: os.Stdout, KeepReaderAnnotations: true}
	nodes, err := rw.Read()
	if err == nil {
		err = rw.Write(nodes)
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}

// BenchmarkFnPods runs `kubedra fn` on a ResourceList of 100,000 small GPU
// pods (bench.GenerateResourceList) in check and in migrate mode, each
// answered a batch of items at a time and, for the same list with its
// items key quoted (which the splitter leaves to the whole parse: the
// parse and the answer are the same), whole. It reports each run's
// peak RSS and CPU time, and their ratios against the whole answer and
// against the baseline measured in the same run: kyaml reading and
// writing the list (kyamlFn, its own process). The batches' answer must be
// the whole answer's bytes and exit code.
func BenchmarkFnPods(b *testing.B) {
	dir := b.TempDir()
	lists := map[string][2]string{}
	for _, mode := range []string{"check", "migrate"} {
		path := filepath.Join(dir, mode+".yaml")
		st, err := GenerateResourceList(path, fnPods, mode)
		if err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		whole := filepath.Join(dir, mode+"-whole.yaml")
		if err := os.WriteFile(whole, bytes.Replace(data, []byte("\nitems:\n"), []byte("\n\"items\":\n"), 1), 0o644); err != nil {
			b.Fatal(err)
		}
		lists[mode] = [2]string{path, whole}
		b.Logf("%s list: %.1f MB, %d pods", mode, float64(st.Bytes)/(1<<20), st.Documents)
	}
	bin := kubedraBinary(b)
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		base := exec.Command(self)
		base.Env = append(os.Environ(), kyamlFnChild+"=1")
		k := measure(b, base, lists["check"][0])
		if k.code != 0 {
			b.Fatalf("the kyaml baseline exited %d", k.code)
		}
		b.ReportMetric(k.rss, "kyaml-peak-RSS-MB")
		b.ReportMetric(k.cpu.Seconds(), "kyaml-CPU-s")
		for _, mode := range []string{"check", "migrate"} {
			env := append(os.Environ(), "KUBEDRA_CONFIG=none")
			streamed := exec.Command(bin, "fn")
			streamed.Env = env
			s := measure(b, streamed, lists[mode][0])
			whole := exec.Command(bin, "fn")
			whole.Env = env
			w := measure(b, whole, lists[mode][1])
			if !bytes.Equal(s.out, w.out) || s.code != w.code || len(s.out) == 0 {
				b.Fatalf("%s: the batches' answer (%d bytes, exit %d) is not the whole list's (%d bytes, exit %d)", mode, len(s.out), s.code, len(w.out), w.code)
			}
			b.ReportMetric(s.rss, mode+"-peak-RSS-MB")
			b.ReportMetric(s.cpu.Seconds(), mode+"-CPU-s")
			b.ReportMetric(s.rss/w.rss, mode+"-RSS/whole")
			b.ReportMetric(s.cpu.Seconds()/w.cpu.Seconds(), mode+"-CPU/whole")
			b.ReportMetric(s.rss/k.rss, mode+"-RSS/kyaml")
			b.ReportMetric(s.cpu.Seconds()/k.cpu.Seconds(), mode+"-CPU/kyaml")
			b.Logf("%s: batches %.0f MB peak RSS, %.1f s CPU (%.1f s wall); whole %.0f MB, %.1f s CPU (%.1f s wall); kyaml read+write %.0f MB, %.1f s CPU; %d bytes out, exit %d",
				mode, s.rss, s.cpu.Seconds(), s.wall.Seconds(), w.rss, w.cpu.Seconds(), w.wall.Seconds(), k.rss, k.cpu.Seconds(), len(s.out), s.code)
		}
	}
}
