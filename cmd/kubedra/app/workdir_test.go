package app

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRelativePathsUseTheWorkingFolder: every path a user types is
// relative to the working folder kubedra is given (IOStreams.Getwd), not
// to the process's, which never gets a file.
func TestRelativePathsUseTheWorkingFolder(t *testing.T) {
	t.Parallel()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	before := entries(t, cwd)
	t.Cleanup(func() {
		if diff := cmp.Diff(before, entries(t, cwd)); diff != "" {
			t.Errorf("the process's working folder changed (-before +after):\n%s", diff)
		}
	})
	dump, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "cluster", "clean.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	exampleDump, err := os.ReadFile(filepath.Join("..", "..", "..", "bundle", "testdata", "example-cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	gpu := map[string]string{"manifests/gpu.yaml": gpuDeployment}
	tests := []struct {
		name  string
		files map[string]string
		env   map[string]string
		args  []string
		want  int
		// check looks at what the run left in the working folder wd.
		check func(t *testing.T, wd, stdout string)
	}{
		{name: "scan DIR", files: gpu, args: []string{"scan", "-o", "json", "manifests"}, want: ExitOK,
			check: func(t *testing.T, _, stdout string) { wantIn(t, "stdout", stdout, `"file": "manifests/gpu.yaml"`) }},
		{name: "check --report", files: gpu, args: []string{"check", "manifests", "--report", "sarif=out/r.sarif"}, want: ExitFindings,
			check: func(t *testing.T, wd, _ string) {
				wantIn(t, "out/r.sarif", readFile(t, wd, "out/r.sarif"), `"uri": "manifests/gpu.yaml"`)
			}},
		{name: "KUBEDRA_CONFIG", files: map[string]string{"manifests/gpu.yaml": gpuDeployment, "conf/kubedra.yaml": "failOn: unmapped\n"},
			env: map[string]string{"KUBEDRA_CONFIG": "conf/kubedra.yaml"}, args: []string{"check", "manifests"}, want: ExitOK},
		{name: "migrate -w DIR", files: gpu, env: migrateEnv, args: []string{"migrate", "-w", "manifests"}, want: ExitOK,
			check: func(t *testing.T, wd, _ string) {
				wantIn(t, "manifests/gpu.yaml", readFile(t, wd, "manifests/gpu.yaml"), "resourceClaimTemplateName: trainer-gpu")
			}},
		{name: "migrate --out OUT DIR", files: gpu, env: migrateEnv, args: []string{"migrate", "--out", "migrated", "manifests"}, want: ExitOK,
			check: func(t *testing.T, wd, _ string) {
				wantIn(t, "migrated/gpu.yaml", readFile(t, wd, "migrated/gpu.yaml"), "resourceClaimTemplateName: trainer-gpu")
				if got := readFile(t, wd, "manifests/gpu.yaml"); got != gpuDeployment {
					t.Errorf("--out changed the input:\n%s", got)
				}
			}},
		{name: "scan --rules", files: map[string]string{"manifests/fpga.yaml": checkDeployment("", "acme.com/fpga"), "r.yaml": goodRules},
			args: []string{"scan", "-o", "json", "--rules", "r.yaml", "manifests"}, want: ExitOK,
			check: func(t *testing.T, _, stdout string) {
				wantIn(t, "stdout", stdout, `"id": "acme-fpga"`)
				wantIn(t, "stdout", stdout, `"status": "mappable"`)
			}},
		{name: "rules list --rules", files: map[string]string{"r.yaml": goodRules}, args: []string{"rules", "list", "--rules", "r.yaml"}, want: ExitOK,
			check: func(t *testing.T, _, stdout string) { wantIn(t, "stdout", stdout, "r.yaml:4") }},
		{name: "rules show --rules", files: map[string]string{"r.yaml": goodRules}, args: []string{"rules", "show", "--rules", "r.yaml", "acme.com/fpga"}, want: ExitOK,
			check: func(t *testing.T, _, stdout string) {
				wantIn(t, "stdout", stdout, "deviceClassName: fpga.acme.example")
			}},
		{name: "rules validate", files: map[string]string{"r.yaml": goodRules}, args: []string{"rules", "validate", "r.yaml"}, want: ExitOK,
			check: func(t *testing.T, _, stdout string) { wantIn(t, "stdout", stdout, "r.yaml: valid") }},
		{name: "audit --from-dump", files: map[string]string{"dump.yaml": string(dump)}, args: []string{"audit", "--from-dump", "dump.yaml", "-o", "yaml"}, want: ExitOK,
			check: func(t *testing.T, _, stdout string) { wantIn(t, "stdout", stdout, "kind: AuditReport") }},
		{name: "bundle --out", args: []string{"bundle", "--driver", "nvidia", "--out", "cutover"}, want: ExitOK,
			check: func(t *testing.T, wd, _ string) {
				wantIn(t, "cutover/PLAN.md", readFile(t, wd, "cutover/PLAN.md"), "-k cutover/phase-2")
			}},
		{name: "bundle --from-dump and verify", files: map[string]string{"dump.yaml": string(exampleDump)},
			args: []string{"bundle", "--driver", "example", "--from-dump", "dump.yaml", "--out", "cutover"}, want: ExitOK,
			check: func(t *testing.T, wd, _ string) {
				readFile(t, wd, "cutover/PLAN.md")
				// As in TestBundleMain: the dump's unpatched plugin conflicts.
				code, stdout, stderr := Invoke(t, Invocation{Args: []string{"bundle", "verify", "--from-dump", "dump.yaml", "cutover"}, Dir: wd})
				if code != ExitFindings || !strings.Contains(stdout, "gpu-a-1  labelled") {
					t.Errorf("verify: exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitFindings, stdout, stderr)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wd := WriteFiles(t, t.TempDir(), tt.files)
			if rel, err := filepath.Rel(cwd, wd); err == nil && !strings.HasPrefix(rel, "..") {
				t.Fatalf("the working folder %s is inside the process's %s", wd, cwd)
			}
			code, stdout, stderr := Invoke(t, Invocation{Args: tt.args, Env: tt.env, Dir: wd})
			if code != tt.want {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.want, stdout, stderr)
			}
			if tt.check != nil {
				tt.check(t, wd, stdout)
			}
		})
	}
}

// entries lists every file and folder below root.
func entries(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantIn(t *testing.T, what, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%s lacks %q:\n%s", what, want, got)
	}
}

// TestKubeconfigUsesTheWorkingFolder: --kubeconfig is a path the user
// types too. The kubeconfig points at a closed local port, so a run that
// found it fails to connect; one that looked in the process's working
// folder fails to find it.
func TestKubeconfigUsesTheWorkingFolder(t *testing.T) {
	t.Parallel()
	wd := WriteFiles(t, t.TempDir(), map[string]string{"kc.yaml": `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: x}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`})
	code, _, stderr := Invoke(t, Invocation{Args: []string{"audit", "--kubeconfig", "kc.yaml", "--request-timeout", "2s"}, Dir: wd})
	if code != ExitError || !strings.Contains(stderr, "127.0.0.1:1") {
		t.Errorf("exit %d, want %d and a connection error; stderr:\n%s", code, ExitError, stderr)
	}
}
