package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const checkDeploymentTmpl = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: train
  namespace: ml%s
spec:
  template:
    spec:
      containers:
      - name: cuda
        image: cuda
        resources:
          limits:
            %s: 2
`

func checkDeployment(annotations, resource string) string {
	return strings.ReplaceAll(strings.Replace(checkDeploymentTmpl, "%s", annotations, 1), "%s", resource)
}

func TestCheckExitCodes(t *testing.T) {
	t.Parallel()
	dir := WriteFiles(t, t.TempDir(), map[string]string{
		"gpu.yaml":          checkDeployment("", "nvidia.com/gpu"),
		"fpga.yaml":         checkDeployment("", "example.com/fpga"),
		"ignored.yaml":      checkDeployment("\n  annotations:\n    kubedra.io/ignore: \"vendor has no DRA driver yet\"", "example.com/fpga"),
		"empty-reason.yaml": checkDeployment("\n  annotations:\n    kubedra.io/ignore: \"\"", "example.com/fpga"),
		"none.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
		"broken.yaml":       "a: [\n",
		"tpl.yaml":          "apiVersion: v1\nkind: Pod\nmetadata: {name: {{ .Values.name }}}\n",
	})

	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		wantCode   int
		wantStderr string
	}{
		{name: "nothing found", args: []string{"check", "none.yaml"}, wantCode: ExitOK, wantStderr: "passed"},
		{name: "mappable fails any", args: []string{"check", "gpu.yaml"}, wantCode: ExitFindings, wantStderr: "failed: 1 of 1 finding fails the gate (--fail-on any)"},
		{name: "mappable passes unmapped", args: []string{"check", "--fail-on", "unmapped", "gpu.yaml"}, wantCode: ExitOK},
		{name: "unmapped fails unmapped", args: []string{"check", "--fail-on=unmapped", "fpga.yaml"}, wantCode: ExitFindings},
		{name: "env sets the gate", args: []string{"check", "gpu.yaml"}, env: map[string]string{"KUBEDRA_FAIL_ON": "unmapped"}, wantCode: ExitOK},
		{name: "flag beats env", args: []string{"check", "--fail-on=any", "gpu.yaml"}, env: map[string]string{"KUBEDRA_FAIL_ON": "unmapped"}, wantCode: ExitFindings},
		{name: "ignored with reason", args: []string{"check", "ignored.yaml"}, wantCode: ExitOK, wantStderr: "1 ignored"},
		{name: "ignore without reason fails any gate", args: []string{"check", "--fail-on=unmapped", "empty-reason.yaml"}, wantCode: ExitFindings},
		{name: "unreadable input", args: []string{"check", "missing.yaml", "none.yaml"}, wantCode: ExitError, wantStderr: "skipped missing.yaml"},
		{name: "parse error beats findings", args: []string{"check", "broken.yaml", "gpu.yaml"}, wantCode: ExitError, wantStderr: "could not be checked"},
		{name: "bad gate", args: []string{"check", "--fail-on=some", "gpu.yaml"}, wantCode: ExitError, wantStderr: "--fail-on \"some\""},
		{name: "bad format", args: []string{"check", "-o", "pdf", "gpu.yaml"}, wantCode: ExitError, wantStderr: "unknown output format"},
		{name: "bad report flag", args: []string{"check", "--report", "sarif", "gpu.yaml"}, wantCode: ExitError, wantStderr: "want FORMAT=PATH"},
		{name: "no input", args: []string{"check"}, wantCode: ExitError, wantStderr: "no input"},
		{name: "quiet", args: []string{"check", "-q", "gpu.yaml"}, wantCode: ExitFindings},
		// -q: an input skipped by design (a template) does not make the
		// exit code, so it is not said; one not read is, and so is a
		// template under --strict, which fails the run.
		{name: "quiet with a template", args: []string{"check", "-q", "gpu.yaml", "tpl.yaml"}, wantCode: ExitFindings},
		{name: "quiet with an input not read", args: []string{"check", "-q", "gpu.yaml", "tpl.yaml", "broken.yaml"}, wantCode: ExitError, wantStderr: "skipped broken.yaml"},
		{name: "quiet strict with a template", args: []string{"check", "-q", "--strict", "gpu.yaml", "tpl.yaml"}, wantCode: ExitError, wantStderr: "skipped tpl.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := Invoke(t, Invocation{Args: tt.args, Env: tt.env, Dir: dir})
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tt.wantCode, stderr)
			}
			if tt.wantStderr != "" && !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, stderr)
			}
			if strings.Contains(tt.name, "quiet") {
				for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
					if l != "" && (tt.wantStderr == "" || !strings.Contains(l, tt.wantStderr)) {
						t.Errorf("-q printed %q", l)
					}
				}
			}
		})
	}
}

func TestCheckStdin(t *testing.T) {
	t.Parallel()
	code, out, _ := Invoke(t, Invocation{Args: []string{"check", "-o", "github", "-"}, Stdin: checkDeployment("", "nvidia.com/gpu"), Dir: t.TempDir()})
	if code != ExitFindings || !strings.HasPrefix(out, "::error title=kubedra mappable/nvidia.com::") {
		t.Errorf("exit %d, output:\n%s", code, out)
	}
}

func TestCheckReportsAreWrittenAtomically(t *testing.T) {
	t.Parallel()
	dir := WriteFiles(t, t.TempDir(), map[string]string{"gpu.yaml": checkDeployment("", "nvidia.com/gpu"), "file": ""})
	code, out, stderr := Invoke(t, Invocation{Args: []string{"check", "-o", "markdown",
		"--report", "sarif=file/kubedra.sarif", "--report", "json=out/report.json", "gpu.yaml"}, Dir: dir})
	// A report that cannot be written is kubedra's failure (exit 1); the
	// other reports and stdout are still written.
	if code != ExitError {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "### kubedra check") {
		t.Errorf("stdout is not the markdown report:\n%s", out)
	}
	if !strings.Contains(stderr, "writing sarif report file/kubedra.sarif") {
		t.Errorf("stderr lacks the report error:\n%s", stderr)
	}
	if err := os.Remove(filepath.Join(dir, "out", "report.json")); err != nil {
		t.Errorf("json report (in a folder check created) not written: %v", err)
	}
	code, _, stderr = Invoke(t, Invocation{Args: []string{"check", "--report", "sarif=out/kubedra.sarif", "--report", "junit=out/kubedra.xml", "gpu.yaml"},
		Env: map[string]string{"KUBEDRA_REPORT": "markdown=out/pr.md"}, Dir: dir})
	if code != ExitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// The flag replaces KUBEDRA_REPORT (flags win), and no temp files remain.
	if diff := cmp.Diff([]string{"kubedra.sarif", "kubedra.xml"}, names); diff != "" {
		t.Errorf("files in out/ (-want +got):\n%s", diff)
	}
	sarif, _ := os.ReadFile(filepath.Join(dir, "out", "kubedra.sarif"))
	if !bytes.Contains(sarif, []byte(`"ruleId": "mappable/nvidia.com"`)) || !bytes.Contains(sarif, []byte(`"uri": "gpu.yaml"`)) {
		t.Errorf("sarif report:\n%s", sarif)
	}
}

func TestCheckConfigFile(t *testing.T) {
	t.Parallel()
	dir := WriteFiles(t, t.TempDir(), map[string]string{
		".kubedra.yaml":        "failOn: unmapped\nignore:\n- path: legacy/**\n  reason: legacy cluster keeps the device plugin\n",
		"apps/gpu.yaml":        checkDeployment("", "nvidia.com/gpu"),
		"legacy/old/fpga.yaml": checkDeployment("", "example.com/fpga"),
	})
	sub := filepath.Join(dir, "apps")
	// Run from a subfolder: the config above applies, its paths relative to it.
	code, out, stderr := Invoke(t, Invocation{Args: []string{"check", "-o", "json", "gpu.yaml", "../legacy"}, Dir: sub})
	if code != ExitOK {
		t.Fatalf("exit %d, want 0 (failOn: unmapped, fpga ignored by path):\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, `"ignored": "legacy cluster keeps the device plugin (.kubedra.yaml)"`) {
		t.Errorf("ignore reason missing from the report:\n%s", out)
	}
	// The environment beats the file.
	code, _, _ = Invoke(t, Invocation{Args: []string{"check", "gpu.yaml"}, Env: map[string]string{"KUBEDRA_FAIL_ON": "any"}, Dir: sub})
	if code != ExitFindings {
		t.Errorf("KUBEDRA_FAIL_ON=any: exit %d, want 2", code)
	}
	// A broken config is kubedra's failure.
	WriteFiles(t, dir, map[string]string{"bad.yaml": "ignore:\n- kind: Job\n"})
	code, _, stderr = Invoke(t, Invocation{Args: []string{"check", "--config", "../bad.yaml", "gpu.yaml"}, Dir: sub})
	if code != ExitError || !strings.Contains(stderr, "reason is required") {
		t.Errorf("exit %d, stderr %s", code, stderr)
	}
}

// TestCheckBaselineCLI: check --baseline fails the gate (exit 2) when a
// unit's pods would get other devices than at the baseline, and says so
// on stderr even with -q; a relative --baseline is read from the working
// folder.
func TestCheckBaselineCLI(t *testing.T) {
	t.Parallel()
	gpu := checkDeployment("", "nvidia.com/gpu")
	dir := WriteFiles(t, t.TempDir(), map[string]string{
		"base/app/deploy.yaml": gpu,
		"head/app/deploy.yaml": strings.Replace(gpu, "nvidia.com/gpu", "example.com/other", 1),
	})
	code, _, stderr := Invoke(t, Invocation{Args: []string{"check", "-q", "--fail-on", "unmapped", "--baseline", "../base", "app"}, Dir: filepath.Join(dir, "head")})
	if code != ExitFindings || !strings.Contains(stderr, "Deployment/ml/train container cuda: unit app: against the baseline, what the pod gets changes: before: nvidia.com/gpu: 2; after: no device") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	code, _, stderr = Invoke(t, Invocation{Args: []string{"check", "--baseline", "../base", "app"}, Dir: filepath.Join(dir, "base")})
	if code != ExitFindings || !strings.Contains(stderr, "1 of 1 unit proved against the baseline") {
		t.Errorf("the baseline against itself: exit %d, stderr:\n%s", code, stderr)
	}
}

// TestCheckZeroRequest: a request of 0 for a mapped resource (and one of
// 0 in requests only, "0m" in another unit) asks for no device: every
// command and format reports it at info level and check passes (issue 28).
func TestCheckZeroRequest(t *testing.T) {
	t.Parallel()
	dir := WriteFiles(t, t.TempDir(), map[string]string{
		"zero.yaml":  checkDeployment("", "nvidia.com/gpu"),
		"mixed.yaml": strings.Replace(checkDeployment("", "amd.com/gpu"), ": 2\n", ": \"0\"\n", 1),
	})
	zero := filepath.Join(dir, "zero.yaml")
	b, err := os.ReadFile(zero)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zero, bytes.Replace(b, []byte("nvidia.com/gpu: 2"), []byte("nvidia.com/gpu: 0"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		format string
		want   []string // what says info in that format
		not    []string // what would say it fails or warns
	}{
		{"table", []string{"no-device"}, nil},
		{"json", []string{`"status": "no-device"`, `"noDevice": 2`}, []string{`"mappable": 1`}},
		{"sarif", []string{`"level": "note"`}, []string{`"level": "warning"`, `"level": "error"`}},
		{"junit", []string{`tests="1"`}, []string{"<failure"}},
		{"markdown", []string{"more findings that do not fail the gate"}, nil},
		{"github", []string{"::notice file=mixed.yaml", "::notice file=zero.yaml"}, []string{"::warning", "::error"}},
		{"krm", []string{"severity: info"}, []string{"severity: warning", "severity: error"}},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			code, stdout, stderr := Invoke(t, Invocation{Args: []string{"check", "-o", tt.format, "zero.yaml", "mixed.yaml"}, Dir: dir})
			if code != ExitOK {
				t.Errorf("exit %d, want 0; stderr:\n%s", code, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(stdout, w) {
					t.Errorf("stdout has %q:\n%s", w, stdout)
				}
			}
		})
	}
	for _, gate := range []string{"any", "lossy", "unmapped"} {
		if code, _, stderr := Invoke(t, Invocation{Args: []string{"check", "--fail-on", gate, "zero.yaml", "mixed.yaml"}, Dir: dir}); code != ExitOK {
			t.Errorf("--fail-on %s: exit %d, want 0; stderr:\n%s", gate, code, stderr)
		}
	}
	code, stdout, stderr := Invoke(t, Invocation{Args: []string{"scan", "-o", "json", "zero.yaml"}, Dir: dir})
	if code != ExitOK || !strings.Contains(stdout, `"noDevice": 1`) {
		t.Errorf("scan: exit %d; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}
