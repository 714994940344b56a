package bundle

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/rules"
)

// Names read from a dump or a cluster become file names of the bundle
// (phase-1/<ns>.<name>.yaml, quota/<ns>.<name>.yaml): a name that is no
// Kubernetes name (a path) is refused, nothing is generated.
func TestHostileNamesRefused(t *testing.T) {
	for _, tc := range []struct{ file, from, to string }{
		{"nvidia-cluster.yaml", "name: nvdp-nvidia-device-plugin\n", "name: /../../../../escaped\n"},
		{"nvidia-cluster.yaml", "namespace: nvidia-device-plugin\n", "namespace: ../../../escaped\n"},
		{"example-cluster.yaml", "name: gpu-quota\n", "name: ../../../../escaped\n"},
	} {
		t.Run(tc.to, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tc.from) {
				t.Fatalf("%s has no %q", tc.file, tc.from)
			}
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "dump.yaml"), []byte(strings.Replace(string(b), tc.from, tc.to, 1)), 0o644)
			facts := readFactsAt(t, filepath.Join(dir, "dump.yaml"))
			driver := "nvidia"
			if tc.file == "example-cluster.yaml" {
				driver = "example"
			}
			res, err := Generate(Options{Driver: mustDriver(t, driver), Target: rules.Version{Major: 1, Minor: 34}, Facts: facts})
			if err == nil {
				for p := range res.Tree {
					if strings.Contains(p, "..") {
						t.Errorf("tree path %q leaves the bundle", p)
					}
				}
				t.Fatal("a name that is a path was accepted")
			}
			if !strings.Contains(err.Error(), "escaped") || !strings.Contains(err.Error(), "not a valid") {
				t.Errorf("error does not name the object and why: %v", err)
			}
		})
	}
}

// Write never writes outside its folder, whatever the tree's paths say.
func TestWriteConfined(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "out", "bundle")
	for _, p := range []string{"../../escaped.yaml", "/abs/escaped.yaml", "a/../../escaped.yaml"} {
		if err := Write(dir, Tree{p: []byte("x")}, false); err == nil {
			t.Errorf("%s: written", p)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "escaped.yaml")); err == nil {
		t.Error("a file was written outside the bundle folder")
	}
}
