package app

import (
	"os"
	"testing"
)

// TestExitCodes is exitcode.go's contract (docs/exit-codes.md), command by
// command, through Main: 0 when the job is done, 2 when a gate finds
// something, 1 when kubedra could not do its job, and 1 beats 2.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	const gpu = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - {name: c, image: cuda, resources: {limits: {nvidia.com/gpu: 1}}}\n"
	const plain = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
	// A request scan parses even without --strict, in a document that
	// does not parse.
	const broken = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: [1}\n"
	clean, err := os.ReadFile("../../../testdata/cluster/clean.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mixed, err := os.ReadFile("../../../testdata/cluster/mixed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"gpu.yaml": gpu, "plain.yaml": plain, "broken.yaml": broken,
		"clean.yaml": string(clean), "mixed.yaml": string(mixed)}
	tests := []struct {
		args []string
		want int
	}{
		{[]string{"scan", "gpu.yaml"}, ExitOK},
		{[]string{"scan", "broken.yaml", "gpu.yaml"}, ExitError},
		{[]string{"scan", "missing.yaml"}, ExitError},
		{[]string{"scan", "--bogus", "gpu.yaml"}, ExitError},
		{[]string{"check", "plain.yaml"}, ExitOK},
		{[]string{"check", "gpu.yaml"}, ExitFindings},
		{[]string{"check", "broken.yaml", "gpu.yaml"}, ExitError},
		{[]string{"check", "--fail-on", "sometimes", "gpu.yaml"}, ExitError},
		{[]string{"migrate", "gpu.yaml"}, ExitOK},
		{[]string{"migrate", "broken.yaml"}, ExitError},
		{[]string{"migrate", "--strategy", "sideways", "gpu.yaml"}, ExitError},
		{[]string{"audit", "--from-dump", "clean.yaml"}, ExitOK},
		{[]string{"audit", "--from-dump", "mixed.yaml"}, ExitFindings},
		{[]string{"audit", "--from-dump", "missing.yaml"}, ExitError},
		{[]string{"rules", "validate", "gpu.yaml"}, ExitError},
		{[]string{"version"}, ExitOK},
		{[]string{"nonsense"}, ExitError},
	}
	for _, tt := range tests {
		t.Run(tt.args[0]+" "+tt.args[len(tt.args)-1], func(t *testing.T) {
			t.Parallel()
			dir := WriteFiles(t, t.TempDir(), files)
			code, _, stderr := Invoke(t, Invocation{Args: tt.args, Dir: dir, Env: map[string]string{"KUBEDRA_CONFIG": "none"}})
			if code != tt.want {
				t.Errorf("kubedra %v: exit %d, want %d; stderr:\n%s", tt.args, code, tt.want, stderr)
			}
		})
	}
}
