package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBadGateNamesItsSource (issue 14 item 11): a bad --fail-on from
// KUBEDRA_FAIL_ON names the variable; from .kubedra.yaml, the file and
// line; keys of the file match exactly.
func TestBadGateNamesItsSource(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gpu.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := Invoke(t, Invocation{Args: []string{"check", "gpu.yaml"}, Dir: dir, Env: map[string]string{"KUBEDRA_FAIL_ON": "bogus"}})
	if code != ExitError || !strings.Contains(stderr, `KUBEDRA_FAIL_ON="bogus"`) || strings.Contains(stderr, "--fail-on \"") {
		t.Errorf("env: %d %s", code, stderr)
	}
	for _, tt := range []struct{ config, want string }{
		{"apiVersion: kubedra.dev/v1alpha1\nfailOn: sometimes\n", ".kubedra.yaml:2: failOn \"sometimes\": use any, unmapped or lossy"},
		{"FAILON: any\n", `.kubedra.yaml:1: unknown key "FAILON" (keys are case-sensitive: failOn)`},
		{"ignore:\n- Reason: x\n  kind: Job\n", `.kubedra.yaml:2: unknown key "Reason" in ignore[0] (keys are case-sensitive: reason)`},
	} {
		if err := os.WriteFile(filepath.Join(dir, ".kubedra.yaml"), []byte(tt.config), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := Invoke(t, Invocation{Args: []string{"check", "."}, Dir: dir})
		if code != ExitError || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: %d %s", tt.config, code, stderr)
		}
	}
	// The config file is not a manifest: a folder holding only it is empty.
	if err := os.WriteFile(filepath.Join(dir, ".kubedra.yaml"), []byte("failOn: any\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := Invoke(t, Invocation{Args: []string{"scan", "-o", "json", "."}, Dir: dir})
	if !strings.Contains(stdout, `"files": 1,`) {
		t.Errorf("scan: %s", stdout)
	}
}
