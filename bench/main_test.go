package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the kubedra binary the benchmarks build (about 100 MB in
// a temporary folder) once they are done.
func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
