package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// corpus generates the 10,000-file corpus the scan and migrate benchmarks
// share, lists its files, and builds the kubedra binary before timing.
func corpus(b *testing.B) (dir string, paths []string, st Stats) {
	b.Helper()
	dir = b.TempDir()
	st, err := Generate(dir, corpusFiles, 1)
	if err != nil {
		b.Fatal(err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			paths = append(paths, p)
		}
		return nil
	})
	b.Logf("corpus: %d files, %d documents, %.1f MB, %d files with %d device requests",
		st.Files, st.Documents, float64(st.Bytes)/(1<<20), st.DeviceFiles, st.Requests)
	kubedraBinary(b)
	return dir, paths, st
}

// TestMain removes the kubedra binary the benchmarks build (about 100 MB in
// a temporary folder) once they are done; a binary given in
// KUBEDRA_TEST_BIN (make bench's bin/kubedra) is the caller's, and stays.
// Started with kyamlFnChild set, the test binary is the baseline KRM
// function of BenchmarkFnPods instead.
func TestMain(m *testing.M) {
	if os.Getenv(kyamlFnChild) != "" {
		os.Exit(kyamlFn())
	}
	code := m.Run()
	if binPath != "" && binBuilt {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
