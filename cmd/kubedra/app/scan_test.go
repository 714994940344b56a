package app_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/internal/golden"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// noConfig keeps a .kubedra.yaml above the working folder out of the runs
// that give no folder of their own.
var noConfig = map[string]string{"KUBEDRA_CONFIG": "none"}

func TestScanFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		want    app.ScanOptions
		wantErr string
	}{
		{name: "defaults", args: []string{"dir"},
			want: app.ScanOptions{Inputs: flags.Inputs{Paths: []string{"dir"}, Color: "auto", Target: rules.DefaultTarget}, Output: "table"}},
		{name: "everything", args: []string{"-o", "json", "--strict", "--rules", "a.yaml", "--rules", "b.yaml",
			"--target-version", "v1.36", "--color", "never", "-q", "-", "x.yaml"},
			want: app.ScanOptions{Inputs: flags.Inputs{Paths: []string{"-", "x.yaml"}, Rules: []string{"a.yaml", "b.yaml"},
				Target: rules.Version{Major: 1, Minor: 36}, Color: "never", Quiet: true}, Output: "json", Strict: true}},
		{name: "example", args: []string{"--example", "-o", "wide"},
			want: app.ScanOptions{Inputs: flags.Inputs{Paths: []string{}, Example: true, Color: "auto", Target: rules.DefaultTarget}, Output: "wide"}},
		{name: "no input", args: nil, wantErr: "no input"},
		{name: "example with paths", args: []string{"--example", "x"}, wantErr: "--example takes no paths"},
		{name: "bad format", args: []string{"-o", "csv", "x"}, wantErr: `unknown output format "csv"`},
		{name: "bad color", args: []string{"--color", "yes", "x"}, wantErr: `unknown --color "yes"`},
		{name: "stdin twice", args: []string{"-", "-"}, wantErr: "only once"},
		{name: "bad target", args: []string{"--target-version", "1.99", "x"}, wantErr: "not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			streams, _, _ := app.TestStreams("", noConfig, "")
			var got *app.ScanOptions
			cmd := app.NewCmdScan(streams, func(o *app.ScanOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.IO, got.ProgressAfter = app.IOStreams{}, 0
			// The loaded config is unexported run state; flags are what count.
			if diff := cmp.Diff(&tt.want, got, cmpopts.IgnoreUnexported(app.ScanOptions{}, flags.Inputs{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScanManifests is the golden JSON of the fixture tree
// testdata/manifests: real files from the corpus and cases per kind family.
func TestScanManifests(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// Run from the repository's root, so that paths in the report are
	// testdata/manifests/...
	code, out, stderr := app.Invoke(t, app.Invocation{Args: []string{"scan", "-o", "json", "testdata/manifests"}, Env: noConfig, Dir: root})
	if code != app.ExitError {
		t.Errorf("exit code %d, want %d (testdata/manifests/own/broken.yaml)", code, app.ExitError)
	}
	if want := "kubedra: 1 input could not be read or parsed (listed under skipped)\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
	var r plan.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	golden.Check(t, "testdata/TestScanManifests.golden.json", []byte(out))
}

// TestScanColor checks the colour policy end to end: escapes only when
// allowed, never in machine formats.
func TestScanColor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		tty     bool
		wantESC bool
	}{
		{name: "tty", tty: true, env: map[string]string{"TERM": "xterm"}, wantESC: true},
		{name: "pipe", env: map[string]string{"TERM": "xterm"}},
		{name: "tty with NO_COLOR", tty: true, env: map[string]string{"TERM": "xterm", "NO_COLOR": "yes"}},
		{name: "pipe with CLICOLOR_FORCE", env: map[string]string{"CLICOLOR_FORCE": "1"}, wantESC: true},
		{name: "NO_COLOR beats CLICOLOR_FORCE", env: map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}},
		{name: "--color always beats NO_COLOR", args: []string{"--color", "always"}, env: map[string]string{"NO_COLOR": "1"}, wantESC: true},
		{name: "--color never on a tty", args: []string{"--color", "never"}, tty: true, env: map[string]string{"TERM": "xterm"}},
		{name: "json on a tty", args: []string{"-o", "json"}, tty: true, env: map[string]string{"TERM": "xterm"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := maps.Clone(noConfig)
			maps.Copy(env, tt.env)
			code, out, _ := app.Invoke(t, app.Invocation{Args: append([]string{"scan", "--example"}, tt.args...), Env: env, OutTTY: tt.tty})
			if code != 0 {
				t.Fatalf("exit code %d", code)
			}
			if got := strings.Contains(out, "\x1b["); got != tt.wantESC {
				t.Errorf("escape sequences = %v, want %v:\n%q", got, tt.wantESC, out)
			}
		})
	}
}

// TestScanPathsEndingInDash: only "-" itself is stdin, so paths whose
// names end in "-" are scanned like any other (issue 11), while "-" twice
// is still a usage error.
func TestScanPathsEndingInDash(t *testing.T) {
	t.Parallel()
	wd := app.WriteFiles(t, t.TempDir(), map[string]string{
		"dir-/gpu.yaml": gpuPod,
		"x-":            gpuPod,
	})
	code, out, stderr := app.Invoke(t, app.Invocation{Args: []string{"scan", "-o", "json", "dir-", "x-"}, Dir: wd})
	if code != app.ExitOK || stderr != "" {
		t.Fatalf("scan dir- x-: exit %d, stderr %q", code, stderr)
	}
	var r plan.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	var files []string
	for _, f := range r.Findings {
		files = append(files, f.File)
	}
	if diff := cmp.Diff([]string{"dir-/gpu.yaml", "x-"}, files); diff != "" {
		t.Errorf("files of the findings (-want +got):\n%s", diff)
	}
	code, _, stderr = app.Invoke(t, app.Invocation{Args: []string{"scan", "-", "-"}, Dir: wd})
	if code != app.ExitError || !strings.Contains(stderr, "- (stdin) can be given only once") {
		t.Errorf("scan - -: exit %d, stderr %q", code, stderr)
	}
}
