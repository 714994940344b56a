package app

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/rewrite/emit"
)

// migrateEnv turns config discovery and colour off for migrate's runs.
var migrateEnv = map[string]string{"KUBEDRA_CONFIG": "none", "NO_COLOR": "1"}

const gpuDeployment = `# a GPU workload
apiVersion: apps/v1
kind: Deployment
metadata:
  name: trainer # keep me
  namespace: ml
spec:
  selector:
    matchLabels: {app: trainer}
  template:
    metadata:
      labels: {app: trainer}
    spec:
      containers:
      - name: cuda
        image: cuda:12
        resources:
          limits:
            nvidia.com/gpu: 2 # two
`

const plainService = `apiVersion: v1
kind: Service
metadata:
  name:   svc   # odd spacing stays
spec:
  ports: [{port: 80}]
`

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMigrateFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(*testing.T, *MigrateOptions)
	}{
		{name: "no input", args: nil, wantErr: "no input"},
		{name: "-w and --out", args: []string{"-w", "--out", "x", "a"}, wantErr: "do not go together"},
		{name: "stdin with -w", args: []string{"-w", "-"}, wantErr: "stdin is migrated to stdout"},
		{name: "stdin with paths", args: []string{"-", "a"}, wantErr: "cannot be mixed"},
		{name: "claims file is a name", args: []string{"--claims-file", "x/y.yaml", "a"}, wantErr: "give a file name"},
		{name: "unknown strategy", args: []string{"--strategy", "sideways", "a"}, wantErr: "unknown strategy"},
		{name: "extended-resource refused on 1.35", args: []string{"--strategy", "extended-resource", "--target-version", "1.35", "a"}, wantErr: "off by default"},
		{name: "extended-resource forced on 1.35", args: []string{"--strategy", "extended-resource", "--target-version", "1.35", "--force", "a"},
			check: func(t *testing.T, o *MigrateOptions) {
				if !o.Force || o.Target.Minor != 35 {
					t.Errorf("got %+v", o)
				}
			}},
		{name: "bad target", args: []string{"--target-version", "1.20", "a"}, wantErr: "not supported"},
		{name: "example", args: []string{"--example"}, check: func(t *testing.T, o *MigrateOptions) {
			if diff := cmp.Diff([]string{"-"}, o.Paths); diff != "" || !o.Example {
				t.Errorf("paths (-want +got): %s", diff)
			}
		}},
		{name: "all flags", args: []string{"-w", "--claims-file", "claims.yaml", "--strategy", "auto", "--target-version", "1.37", "--allow-lossy",
			"--keep-node-selectors", "--rules", "r.yaml", "--plan", "-q", "-f", "b", "a"},
			check: func(t *testing.T, o *MigrateOptions) {
				want := MigrateOptions{Inputs: flags.Inputs{Paths: []string{"a", "b"}, Rules: []string{"r.yaml"}, Quiet: true}, Write: true,
					Planning: flags.Planning{ClaimsFile: "claims.yaml", Strategy: "auto", AllowLossy: true, KeepNodeSelectors: true}, Plan: true}
				if diff := cmp.Diff(want.Paths, o.Paths); diff != "" || o.Write != want.Write || o.ClaimsFile != want.ClaimsFile ||
					o.Strategy != want.Strategy || !o.AllowLossy || !o.KeepNodeSelectors || o.Rules[0] != "r.yaml" || !o.Plan || !o.Quiet || o.Target.Minor != 37 {
					t.Errorf("got %+v", o)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _, _ := TestStreams("", migrateEnv, "")
			var got *MigrateOptions
			cmd := NewCmdMigrate(s, func(o *MigrateOptions) error { got = o; return nil })
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
			if tt.check != nil {
				tt.check(t, got)
			}
		})
	}
}

// TestMigrateDiffIsWhatWriteWrites checks the promise that the diff printed
// without -w is exactly what -w writes: the printed diff equals the diff
// between the original tree and the tree -w left, file by file.
func TestMigrateDiffIsWhatWriteWrites(t *testing.T) {
	files := map[string]string{
		"app/deploy.yaml":        gpuDeployment + "---\n" + plainService,
		"app/service.yaml":       plainService,
		"app/kustomization.yaml": "resources:\n- deploy.yaml\n- service.yaml\n",
		"README.md":              "not yaml\n",
	}
	for _, extra := range [][]string{nil, {"--claims-file", "claims.yaml"}} {
		t.Run(strings.Join(extra, " "), func(t *testing.T) {
			dir := WriteFiles(t, t.TempDir(), files)
			before := snapshot(t, dir)
			code, diff, stderr := Invoke(t, Invocation{Args: slices.Concat([]string{"migrate"}, extra, []string{dir}), Env: migrateEnv})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if diff == "" {
				t.Fatal("no diff")
			}
			if got := snapshot(t, dir); !cmp.Equal(before, got) {
				t.Fatalf("diff mode changed files")
			}
			code, out, stderr := Invoke(t, Invocation{Args: slices.Concat([]string{"migrate"}, extra, []string{"-w", dir}), Env: migrateEnv})
			if code != 0 || out != "" {
				t.Fatalf("-w: exit %d, stdout %q, stderr %s", code, out, stderr)
			}
			after := snapshot(t, dir)
			var want strings.Builder
			e := &emit.Emitter{}
			// Files in the order migrate emits them: inputs, then new files.
			var changedInputs, created []string
			for _, p := range sortedKeys(after) {
				if b, ok := before[p]; !ok {
					created = append(created, p)
				} else if b != after[p] && p != "app/kustomization.yaml" {
					changedInputs = append(changedInputs, p)
				}
			}
			for _, p := range changedInputs {
				want.Write(e.Diff(emit.Change{Path: filepath.Join(dir, p), Old: []byte(before[p]), New: []byte(after[p])}))
			}
			for _, p := range created {
				want.Write(e.Diff(emit.Change{Path: filepath.Join(dir, p), New: []byte(after[p]), IsNew: true}))
			}
			if before["app/kustomization.yaml"] != after["app/kustomization.yaml"] {
				p := "app/kustomization.yaml"
				want.Write(e.Diff(emit.Change{Path: filepath.Join(dir, p), Old: []byte(before[p]), New: []byte(after[p])}))
			}
			if d := cmp.Diff(want.String(), diff); d != "" {
				t.Errorf("printed diff is not what -w wrote (-written +printed):\n%s", d)
			}
			if after["app/service.yaml"] != plainService || after["README.md"] != "not yaml\n" {
				t.Errorf("untouched files changed")
			}
			if !strings.Contains(after["app/deploy.yaml"], "---\n"+plainService) {
				t.Errorf("untouched document changed:\n%s", after["app/deploy.yaml"])
			}
			if len(extra) > 0 {
				if !strings.Contains(after["app/kustomization.yaml"], "- claims.yaml") || !strings.Contains(after["app/claims.yaml"], "kind: ResourceClaimTemplate") {
					t.Errorf("claims file not wired:\n%s\n%s", after["app/kustomization.yaml"], after["app/claims.yaml"])
				}
			}
			// Second run: nothing to do.
			code, out, stderr = Invoke(t, Invocation{Args: slices.Concat([]string{"migrate"}, extra, []string{dir}), Env: migrateEnv})
			if code != 0 || out != "" {
				t.Errorf("second run: exit %d, diff:\n%s\n%s", code, out, stderr)
			}
		})
	}
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestMigrateWriteKeepsMode(t *testing.T) {
	dir := WriteFiles(t, t.TempDir(), map[string]string{"d.yaml": gpuDeployment})
	p := filepath.Join(dir, "d.yaml")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := Invoke(t, Invocation{Args: []string{"migrate", "-w", dir}, Env: migrateEnv}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temp files left behind: %v", entries)
	}
}

func TestMigrateOut(t *testing.T) {
	src := WriteFiles(t, t.TempDir(), map[string]string{"a/d.yaml": gpuDeployment, "a/s.yaml": plainService, "a/notes.txt": "hi\n"})
	before := snapshot(t, src)
	out := filepath.Join(t.TempDir(), "migrated")
	code, stdout, stderr := Invoke(t, Invocation{Args: []string{"migrate", "--out", out, src}, Env: migrateEnv})
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d stdout %q stderr %s", code, stdout, stderr)
	}
	if got := snapshot(t, src); !cmp.Equal(before, got) {
		t.Errorf("--out changed the input tree")
	}
	got := snapshot(t, out)
	if got["a/s.yaml"] != plainService || got["a/notes.txt"] != "hi\n" {
		t.Errorf("untouched files not copied as they were: %v", got)
	}
	if !strings.Contains(got["a/d.yaml"], "resourceClaimTemplateName: trainer-gpu") {
		t.Errorf("workload not migrated:\n%s", got["a/d.yaml"])
	}
}

func TestMigrateStdin(t *testing.T) {
	in := gpuDeployment + "---\n" + plainService
	code, out, stderr := Invoke(t, Invocation{Args: []string{"migrate", "-"}, Stdin: in, Env: migrateEnv})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasSuffix(out, "---\n"+plainService) || !strings.Contains(out, "kind: ResourceClaimTemplate") {
		t.Errorf("stream:\n%s", out)
	}
	if strings.Contains(out, "migrate:") || !strings.Contains(stderr, "migrate: 1 workload migrated") {
		t.Errorf("summary must go to stderr only; stderr:\n%s", stderr)
	}
	// The stream parses, and migrating it again changes nothing.
	if _, err := yaml.Parse(strings.SplitN(out, "---\n", 2)[0]); err != nil {
		t.Errorf("output does not parse: %v", err)
	}
	code, again, _ := Invoke(t, Invocation{Args: []string{"migrate", "-"}, Stdin: out, Env: migrateEnv})
	if code != 0 || again != out {
		t.Errorf("second run changed the stream:\n%s", again)
	}
	// -q: nothing on stderr.
	if _, _, stderr := Invoke(t, Invocation{Args: []string{"migrate", "-q", "-"}, Stdin: in, Env: migrateEnv}); stderr != "" {
		t.Errorf("-q printed %q", stderr)
	}
}

func TestMigrateFailuresLeaveFilesAlone(t *testing.T) {
	broken := "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n"
	helm := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        resources:\n          limits:\n            nvidia.com/gpu: {{ .Values.gpus }}\n"
	values := "resources:\n  limits:\n    nvidia.com/gpu: 1\n"
	dir := WriteFiles(t, t.TempDir(), map[string]string{"broken.yaml": broken, "good.yaml": gpuDeployment, "chart/templates/d.yaml": helm, "chart/values.yaml": values})
	code, out, stderr := Invoke(t, Invocation{Args: []string{"migrate", "-w", dir}, Env: migrateEnv})
	if code != ExitError {
		t.Errorf("exit %d, want %d", code, ExitError)
	}
	got := snapshot(t, dir)
	if got["broken.yaml"] != broken || got["chart/templates/d.yaml"] != helm || got["chart/values.yaml"] != values {
		t.Errorf("files that cannot be migrated were changed")
	}
	if !strings.Contains(got["good.yaml"], "resourceClaims:") {
		t.Errorf("the good file was not migrated:\n%s", got["good.yaml"])
	}
	if out != "" {
		t.Errorf("stdout: %q", out)
	}
	for _, want := range []string{"broken.yaml", "chart/values.yaml:3: warning: nvidia.com/gpu: Helm values set resources.limits.nvidia.com/gpu", "1 file failed"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestMigratePlan(t *testing.T) {
	dir := WriteFiles(t, t.TempDir(), map[string]string{"d.yaml": gpuDeployment})
	code, out, stderr := Invoke(t, Invocation{Args: []string{"migrate", "--plan", dir}, Env: migrateEnv})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"kind: ConversionPlan", "resourceClaimTemplateName: trainer-gpu", "kind: ResourceClaimTemplate"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if got := snapshot(t, dir); got["d.yaml"] != gpuDeployment {
		t.Errorf("--plan changed a file")
	}
}

// TestMigratePlanJSON: --plan -o json is the same plan as JSON, the new
// objects whole and every list present; -o without --plan is a usage
// error.
func TestMigratePlanJSON(t *testing.T) {
	dir := WriteFiles(t, t.TempDir(), map[string]string{"d.yaml": gpuDeployment})
	code, out, stderr := Invoke(t, Invocation{Args: []string{"migrate", "--plan", "-o", "json", dir}, Env: migrateEnv})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var p struct {
		Kind  string
		Files []struct {
			Docs []struct {
				Objects []map[string]any
			} `json:"documents"`
		}
		Diagnostics, Units []any
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if p.Kind != "ConversionPlan" || len(p.Files) != 1 || len(p.Files[0].Docs) != 1 || len(p.Files[0].Docs[0].Objects) != 1 ||
		p.Files[0].Docs[0].Objects[0]["kind"] != "ResourceClaimTemplate" || p.Files[0].Docs[0].Objects[0]["spec"] == nil || p.Units == nil {
		t.Errorf("plan %+v, want one file with its ResourceClaimTemplate whole and units []:\n%s", p, out)
	}
	if code, _, stderr := Invoke(t, Invocation{Args: []string{"migrate", "-o", "json", dir}, Env: migrateEnv}); code != ExitError || !strings.Contains(stderr, "--plan") {
		t.Errorf("-o without --plan: exit %d, %s", code, stderr)
	}
}

func TestMigrateExtendedResource(t *testing.T) {
	neuron := strings.ReplaceAll(gpuDeployment, "nvidia.com/gpu", "aws.amazon.com/neuron")
	dir := WriteFiles(t, t.TempDir(), map[string]string{"d.yaml": gpuDeployment, "n.yaml": neuron})
	code, out, stderr := Invoke(t, Invocation{Args: []string{"migrate", "--strategy", "extended-resource", "--target-version", "1.36", "-w", dir}, Env: migrateEnv})
	if code != 0 || out != "" {
		t.Fatalf("exit %d stdout %q stderr %s", code, out, stderr)
	}
	got := snapshot(t, dir)
	if got["d.yaml"] != gpuDeployment || got["n.yaml"] != neuron {
		t.Errorf("the workloads changed:\n%s\n%s", got["d.yaml"], got["n.yaml"])
	}
	// Neuron's stock class declares no extendedResourceName: kubedra adds
	// one. NVIDIA's gpu.nvidia.com declares nvidia.com/gpu: a second class
	// would clash with it (audit's class-name-clash), so none is written.
	dc := got["kubedra-deviceclasses.yaml"]
	for _, want := range []string{"kind: DeviceClass", "extendedResourceName: aws.amazon.com/neuron"} {
		if !strings.Contains(dc, want) {
			t.Errorf("DeviceClass file lacks %q:\n%s", want, dc)
		}
	}
	if strings.Contains(dc, "nvidia.com/gpu") || !strings.Contains(stderr, "served by the driver's DeviceClass gpu.nvidia.com") {
		t.Errorf("nvidia.com/gpu: DeviceClass file\n%s\nstderr\n%s", dc, stderr)
	}
	// Refused without --force where the gate is off by default.
	if code, _, stderr := Invoke(t, Invocation{Args: []string{"migrate", "--strategy", "extended-resource", "--target-version", "1.35", dir}, Env: migrateEnv}); code != ExitError || !strings.Contains(stderr, "--force") {
		t.Errorf("1.35 without --force: exit %d, %s", code, stderr)
	}
}

func TestMigrateExample(t *testing.T) {
	code, out, stderr := Invoke(t, Invocation{Args: []string{"migrate", "--example"}, Env: migrateEnv})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "kind: ResourceClaimTemplate") || !strings.Contains(stderr, "migrated") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, stderr)
	}
	// Locations name the example the way scan --example does, not "-".
	if !strings.Contains(stderr, flags.ExamplePath+":") || strings.Contains(stderr, "-:") {
		t.Errorf("stderr should locate findings in %s:\n%s", flags.ExamplePath, stderr)
	}
}
