package kubedra_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// buildKubedra is the CLI: KUBEDRA_TEST_BIN (make test and make
// dist-check build bin/kubedra first), else built once per test binary.
func buildKubedra(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("KUBEDRA_TEST_BIN"); bin != "" {
		return bin
	}
	kubedraOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kubedra-test-")
		if err != nil {
			kubedraErr = err
			return
		}
		kubedraPath = filepath.Join(dir, "kubedra")
		cmd := exec.Command("go", "build", "-o", kubedraPath, "./cmd/kubedra")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			kubedraErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if kubedraErr != nil {
		t.Fatal(kubedraErr)
	}
	return kubedraPath
}

var (
	kubedraOnce sync.Once
	kubedraPath string
	kubedraErr  error
)

// toolBin returns a developer tool built by `make tools` (hack/tools/build.sh,
// cached under ~/.cache/kubedra-tools). Tests never build a tool: with
// KUBEDRA_TOOLS=1 (make dist-check and make e2e, after make tools) a tool
// that is not built fails the test; otherwise the test is skipped.
func toolBin(t *testing.T, tool string) string {
	t.Helper()
	out, err := exec.Command("bash", "hack/tools/build.sh", "--cached", tool).Output()
	if err != nil {
		if os.Getenv("KUBEDRA_TOOLS") == "1" {
			t.Fatalf("%s is not built: run make tools first (%v)", tool, err)
		}
		t.Skipf("%s is not built yet: run make tools (make dist-check does)", tool)
	}
	return strings.TrimSpace(string(out))
}

// TestModulesAligned: the modules that build beside kubedra's (the tools
// module, the e2e tests) require every module they share with it at the
// same version, so that `make tools` and `make e2e` reuse the packages
// `make build` and `make test` compiled (hack/align-modules.sh aligns
// them). It reads the go.mod files (go mod edit -json): no network.
func TestModulesAligned(t *testing.T) {
	requires := func(dir string) map[string]string {
		cmd := exec.Command("go", "mod", "edit", "-json")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go mod edit -json in %s: %v", dir, err)
		}
		var mod struct {
			Require []struct{ Path, Version string }
		}
		if err := json.Unmarshal(out, &mod); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, r := range mod.Require {
			m[r.Path] = r.Version
		}
		return m
	}
	root := requires(".")
	for _, dir := range []string{"hack/tools", "test/e2e"} {
		for path, v := range requires(dir) {
			if want, ok := root[path]; ok && want != v {
				t.Errorf("%s requires %s %s, kubedra %s: run hack/align-modules.sh", dir, path, v, want)
			}
		}
	}
}

// TestGoreleaserConfig checks what the release promises, without goreleaser:
// six platforms, static trimmed builds, the version stamped into app.
func TestGoreleaserConfig(t *testing.T) {
	var cfg struct {
		Version int `json:"version"`
		Builds  []struct {
			Main    string   `json:"main"`
			Env     []string `json:"env"`
			Flags   []string `json:"flags"`
			Ldflags []string `json:"ldflags"`
			Goos    []string `json:"goos"`
			Goarch  []string `json:"goarch"`
		} `json:"builds"`
		Checksum struct {
			NameTemplate string `json:"name_template"`
		} `json:"checksum"`
	}
	data, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	b := cfg.Builds[0]
	ld := strings.Join(b.Ldflags, " ")
	for _, want := range []string{"-s -w", "app.version={{.Version}}", "app.commit=", "app.date="} {
		if !strings.Contains(ld, want) {
			t.Errorf("ldflags lack %q: %s", want, ld)
		}
	}
	if cfg.Version != 2 || b.Main != "./cmd/kubedra" || !contains(b.Env, "CGO_ENABLED=0") || !contains(b.Flags, "-trimpath") ||
		strings.Join(b.Goos, ",") != "linux,darwin,windows" || strings.Join(b.Goarch, ",") != "amd64,arm64" || cfg.Checksum.NameTemplate == "" {
		t.Errorf("unexpected release config: %+v", cfg)
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestKrewManifest renders the krew template the way krew-release-bot does
// and checks that every release archive is covered and installs kubectl-dra.
func TestKrewManifest(t *testing.T) {
	src, err := os.ReadFile("hack/krew/dra.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.New("krew").Funcs(template.FuncMap{
		"addURIAndSha": func(url, tag string) string {
			// The bot renders {{ .TagName }} inside the URL, then adds the sha.
			url = strings.ReplaceAll(url, "{{ .TagName }}", tag)
			return "uri: " + url + "\n    sha256: " + strings.Repeat("a", 64)
		},
	}).Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, map[string]string{"TagName": "v1.2.3"}); err != nil {
		t.Fatal(err)
	}
	var plugin struct {
		Kind     string                `json:"kind"`
		Metadata struct{ Name string } `json:"metadata"`
		Spec     struct {
			Version   string `json:"version"`
			Platforms []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI    string                      `json:"uri"`
				Sha256 string                      `json:"sha256"`
				Bin    string                      `json:"bin"`
				Files  []struct{ From, To string } `json:"files"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(buf.Bytes(), &plugin); err != nil {
		t.Fatalf("rendered manifest: %v\n%s", err, buf.String())
	}
	if plugin.Kind != "Plugin" || plugin.Metadata.Name != "dra" || plugin.Spec.Version != "v1.2.3" || len(plugin.Spec.Platforms) != 6 {
		t.Fatalf("unexpected manifest:\n%s", buf.String())
	}
	for _, p := range plugin.Spec.Platforms {
		os, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		ext, exe := ".tar.gz", ""
		if os == "windows" {
			ext, exe = ".zip", ".exe"
		}
		// The archive name .goreleaser.yaml produces: kubedra_<tag>_<os>_<arch>.
		want := "https://github.com/kubedra/kubedra/releases/download/v1.2.3/kubedra_v1.2.3_" + os + "_" + arch + ext
		if p.URI != want || p.Bin != "kubectl-dra"+exe || len(p.Sha256) != 64 {
			t.Errorf("%s/%s: uri %s bin %s", os, arch, p.URI, p.Bin)
		}
		if p.Files[0].From != "kubedra"+exe || p.Files[0].To != "kubectl-dra"+exe {
			t.Errorf("%s/%s: the binary is not installed as kubectl-dra: %+v", os, arch, p.Files)
		}
	}
}

// TestPreCommitHooks checks the hook definitions pre-commit reads.
func TestPreCommitHooks(t *testing.T) {
	data, err := os.ReadFile(".pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []struct {
		ID, Name, Entry, Language, Files string
	}
	if err := yaml.Unmarshal(data, &hooks); err != nil {
		t.Fatal(err)
	}
	if len(hooks) == 0 || hooks[0].ID != "kubedra-check" || hooks[0].Entry != "kubedra check" || hooks[0].Language != "golang" {
		t.Fatalf("hooks: %+v", hooks)
	}
	re := regexp.MustCompile(hooks[0].Files)
	for name, want := range map[string]bool{"deploy/a.yaml": true, "b.yml": true, "c.json": true, "main.go": false} {
		if re.MatchString(name) != want {
			t.Errorf("files pattern on %s: want %v", name, want)
		}
	}
}

// action is the part of action.yml the test runs.
type action struct {
	Inputs map[string]struct {
		Default string `json:"default"`
	} `json:"inputs"`
	Runs struct {
		Using string `json:"using"`
		Steps []struct {
			ID    string            `json:"id"`
			If    string            `json:"if"`
			Uses  string            `json:"uses"`
			Shell string            `json:"shell"`
			Env   map[string]string `json:"env"`
			With  map[string]string `json:"with"`
			Run   string            `json:"run"`
		} `json:"steps"`
	} `json:"runs"`
}

var exprRE = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// TestActionSteps runs the `run:` steps of action.yml with bash, as a
// runner would (bash --noprofile --norc -eo pipefail), against fixture
// repositories, with kubedra prebuilt (KUBEDRA_BIN) instead of downloaded.
// Expressions in env: are evaluated for the forms the action uses.
func TestActionSteps(t *testing.T) {
	bin := buildKubedra(t)
	data, err := os.ReadFile("action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using = %q", a.Runs.Using)
	}
	gpu := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n      - name: cuda\n        image: cuda\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n"
	clean := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"
	tests := []struct {
		name       string
		files      map[string]string
		inputs     map[string]string
		wantCode   string
		wantGate   int
		wantOutput string
	}{
		{name: "findings fail the gate", files: map[string]string{"deploy/gpu.yaml": gpu, "deploy/cm.yaml": clean}, inputs: map[string]string{"paths": "deploy"},
			wantCode: "2", wantGate: 2, wantOutput: "::error file=deploy/gpu.yaml,line=13,col=13,title=kubedra mappable/nvidia.com::"},
		{name: "fail-on input", files: map[string]string{"deploy/gpu.yaml": gpu}, inputs: map[string]string{"paths": "deploy", "fail-on": "unmapped"},
			wantCode: "0", wantGate: 0, wantOutput: "::warning file=deploy/gpu.yaml"},
		{name: "clean repository", files: map[string]string{"app/cm.yaml": clean}, wantCode: "0", wantGate: 0, wantOutput: "::notice title=kubedra check passed::"},
		{name: "broken input", files: map[string]string{"a.yaml": "a: [\n", "b dir/gpu.yaml": gpu}, inputs: map[string]string{"paths": "a.yaml\n'b dir'", "args": "--target-version 1.34"},
			wantCode: "1", wantGate: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo, tmp := t.TempDir(), t.TempDir()
			for name, content := range tt.files {
				p := filepath.Join(repo, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			inputs := map[string]string{}
			for k, v := range a.Inputs {
				inputs[k] = v.Default
			}
			for k, v := range tt.inputs {
				inputs[k] = v
			}
			outputs := map[string]map[string]string{}
			summary := filepath.Join(tmp, "summary.md")
			gate := -1
			var checkOut string
			for _, step := range a.Runs.Steps {
				eval := func(s string) string {
					return exprRE.ReplaceAllStringFunc(s, func(m string) string {
						e := exprRE.FindStringSubmatch(m)[1]
						switch {
						case strings.HasPrefix(e, "inputs."):
							return inputs[strings.TrimPrefix(e, "inputs.")]
						case strings.HasPrefix(e, "steps."):
							parts := strings.Split(e, ".") // steps.ID.outputs.NAME
							return outputs[parts[1]][parts[3]]
						case e == "github.token":
							return ""
						}
						t.Fatalf("expression %q not understood by the test", e)
						return ""
					})
				}
				if step.Uses != "" {
					// The SARIF upload: its input must be the report check wrote.
					if strings.Contains(step.Uses, "upload-sarif") {
						sarif := filepath.Join(repo, eval(step.With["sarif_file"]))
						raw, err := os.ReadFile(sarif)
						if err != nil {
							t.Errorf("upload-sarif would find no report: %v", err)
						} else if !json.Valid(raw) || !bytes.Contains(raw, []byte(`"version": "2.1.0"`)) {
							t.Errorf("report is not SARIF 2.1.0:\n%s", raw)
						}
					}
					continue
				}
				if strings.Contains(step.Run, "${{") {
					t.Fatalf("step %s uses ${{ }} inside its script; pass inputs through env", step.ID)
				}
				outFile := filepath.Join(tmp, "output-"+step.ID)
				os.WriteFile(outFile, nil, 0o644)
				script := filepath.Join(tmp, step.ID+".sh")
				os.WriteFile(script, []byte(step.Run), 0o755)
				cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
				cmd.Dir = repo
				cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+outFile, "GITHUB_STEP_SUMMARY="+summary, "RUNNER_TEMP="+tmp,
					"RUNNER_OS=Linux", "RUNNER_ARCH=X64", "KUBEDRA_BIN="+bin, "NO_COLOR=1", "KUBEDRA_CONFIG=none")
				for k, v := range step.Env {
					cmd.Env = append(cmd.Env, k+"="+eval(v))
				}
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				err := cmd.Run()
				code := cmd.ProcessState.ExitCode()
				if step.ID == "gate" {
					gate = code
				} else if err != nil {
					t.Fatalf("step %s failed (%v):\n%s\n%s", step.ID, err, stdout.String(), stderr.String())
				}
				if step.ID == "check" {
					checkOut = stdout.String()
				}
				outputs[step.ID] = map[string]string{}
				raw, _ := os.ReadFile(outFile)
				for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
					if k, v, ok := strings.Cut(line, "="); ok {
						outputs[step.ID][k] = v
					}
				}
			}
			if got := outputs["check"]["exit-code"]; got != tt.wantCode {
				t.Errorf("exit-code output = %q, want %q\n%s", got, tt.wantCode, checkOut)
			}
			if gate != tt.wantGate {
				t.Errorf("gate step exit %d, want %d", gate, tt.wantGate)
			}
			if tt.wantOutput != "" && !strings.Contains(checkOut, tt.wantOutput) {
				t.Errorf("check step output lacks %q:\n%s", tt.wantOutput, checkOut)
			}
			if s, _ := os.ReadFile(summary); !bytes.Contains(s, []byte("### kubedra check")) {
				t.Errorf("job summary lacks the markdown report:\n%s", s)
			}
		})
	}
}

// TestKustomizeExecFunction runs kubedra fn as an exec KRM transformer in a
// real kustomize build (kustomize built from its Go module in hack/tools).
func TestKustomizeExecFunction(t *testing.T) {
	kustomize := toolBin(t, "kustomize")
	bin := buildKubedra(t)
	dir := t.TempDir()
	files := map[string]string{
		"base/kustomization.yaml":             "resources:\n- train.yaml\n",
		"base/train.yaml":                     "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: train\nspec:\n  template:\n    spec:\n      containers:\n      - name: cuda\n        image: cuda\n        resources:\n          limits:\n            nvidia.com/gpu: 2\n",
		"overlays/prod/kustomization.yaml":    "resources:\n- ../../base\nnamespace: ml\ntransformers:\n- dra.yaml\n",
		"overlays/lenient/kustomization.yaml": "resources:\n- ../../base\ntransformers:\n- dra.yaml\n",
		"overlays/dra/kustomization.yaml":     "resources:\n- ../../base\nnamespace: ml\ntransformers:\n- dra.yaml\n",
	}
	fnConfig := func(failOn string) string {
		return "apiVersion: kubedra.dev/v1alpha1\nkind: Check\nmetadata:\n  name: dra\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: " + bin + "\n        args: [fn]\nspec:\n  failOn: " + failOn + "\n"
	}
	files["overlays/prod/dra.yaml"] = fnConfig("any")
	files["overlays/lenient/dra.yaml"] = fnConfig("unmapped")
	files["overlays/dra/dra.yaml"] = fnConfig("any\n  mode: migrate")
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func(overlay string, flags ...string) (string, string, error) {
		if flags == nil {
			flags = []string{"--enable-alpha-plugins", "--enable-exec"}
		}
		cmd := exec.Command(kustomize, append(append([]string{"build"}, flags...), filepath.Join(dir, "overlays", overlay))...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	// The gate fails the build and kustomize shows kubedra's reason.
	_, stderr, err := build("prod")
	if err == nil || !strings.Contains(stderr, "fail the gate") || !strings.Contains(stderr, "nvidia.com/gpu") {
		t.Errorf("prod: want a failed build naming the request, got err %v:\n%s", err, stderr)
	}
	// With --enable-alpha-plugins but without --enable-exec kustomize
	// skips the function without a word (kyaml runfn: no filter for an exec
	// spec, docs/ci.md): the failing gate's overlay builds, unchecked.
	// Without either flag it refuses the plugin.
	if out, stderr, err := build("prod", "--enable-alpha-plugins"); err != nil || stderr != "" || !strings.Contains(out, "nvidia.com/gpu: 2") {
		t.Errorf("prod without --enable-exec: kustomize no longer skips the exec function silently (update docs/ci.md): err %v\n%s\n%s", err, stderr, out)
	}
	if _, stderr, err := build("prod", []string{}...); err == nil || !strings.Contains(stderr, "external plugins disabled") {
		t.Errorf("prod without flags: err %v\n%s", err, stderr)
	}
	// A passing gate: the items come back unchanged.
	out, stderr, err := build("lenient")
	if err != nil {
		t.Fatalf("lenient: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, "nvidia.com/gpu: 2") || !strings.Contains(out, "kind: Deployment") || strings.Contains(out, "kind: Check") {
		t.Errorf("lenient build output:\n%s", out)
	}
	// Migrate mode: the overlay builds migrated workloads and their claim
	// templates, in the overlay's namespace.
	out, stderr, err = build("dra")
	if err != nil {
		t.Fatalf("dra: %v\n%s", err, stderr)
	}
	for _, want := range []string{"kind: ResourceClaimTemplate", "name: train-gpu", "namespace: ml", "resourceClaimTemplateName: train-gpu", "deviceClassName: gpu.nvidia.com"} {
		if !strings.Contains(out, want) {
			t.Errorf("dra build output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "nvidia.com/gpu: 2") {
		t.Errorf("dra build still requests nvidia.com/gpu:\n%s", out)
	}
}
