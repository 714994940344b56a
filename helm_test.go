package kubedra_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/yaml"
)

// helmRun is one helm invocation's result.
type helmRun struct {
	stdout, stderr []byte
	err            error
}

// helmEnv is an environment in which helm finds kubedra on PATH and keeps
// its config, data (plugins) and cache in the test's folders.
func helmEnv(t *testing.T, kubedra string, extra ...string) []string {
	t.Helper()
	bin := t.TempDir()
	if err := os.Symlink(kubedra, filepath.Join(bin, "kubedra")); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + home,
		"HELM_CONFIG_HOME=" + filepath.Join(home, "config"), "HELM_DATA_HOME=" + filepath.Join(home, "data"), "HELM_CACHE_HOME=" + filepath.Join(home, "cache"),
		"NO_COLOR=1", "KUBEDRA_CONFIG=none"}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "GOCOVERDIR" || k == "TMPDIR" {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func run(t *testing.T, env []string, stdin []byte, name string, args ...string) helmRun {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return helmRun{stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err}
}

func (r helmRun) must(t *testing.T, what string) []byte {
	t.Helper()
	if r.err != nil {
		t.Fatalf("%s: %v\n%s", what, r.err, r.stderr)
	}
	return r.stdout
}

// objects are a stream's objects as sorted JSON, for comparing streams
// whose formatting differs (Helm 4 re-encodes a post-renderer's output).
func objects(t *testing.T, stream []byte) []string {
	t.Helper()
	nodes, err := kio.FromBytes(stream)
	if err != nil {
		t.Fatalf("parsing a rendered stream: %v\n%s", err, stream)
	}
	var out []string
	for _, n := range nodes {
		b, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}

// postRendererCharts are the charts the post-renderer test renders: a
// fixture with a GPU hook and a ConfigMap, the vendored vLLM
// production-stack chart, and a chart of the shared corpus when present.
func postRendererCharts(t *testing.T) []struct {
	name, dir string
	args      []string
} {
	charts := []struct {
		name, dir string
		args      []string
	}{
		{"gpu-hook", "testdata/helm/gpu-hook", nil},
		{"vllm-stack", "test/e2e/helm/testdata/charts/vllm-stack", []string{"-f", "test/e2e/helm/testdata/charts/vllm-stack/values-example.yaml"}},
	}
	triton := filepath.Join("..", "shared", "corpus", "dev", "triton-inference-server__server", "deploy", "aws")
	if _, err := os.Stat(triton); err == nil {
		charts = append(charts, struct {
			name, dir string
			args      []string
		}{"triton-aws", triton, nil})
	} else {
		t.Logf("no shared corpus beside the clone: the corpus chart is left out (%v)", err)
	}
	return charts
}

// TestHelmPostRenderer runs kubedra as the post-renderer of real helm
// binaries built from their Go modules (hack/tools/helm3, helm4; cached
// like kustomize): Helm 3's exec form (--post-renderer kubedra
// --post-renderer-args migrate --post-renderer-args -) and Helm 4's plugin
// (deploy/helm-plugin, installed with helm plugin install). What helm
// renders with it must be exactly `kubedra migrate -` over helm's render
// without it: byte for byte for Helm 3 (which post-renders manifests and
// appends the hooks unchanged), object for object for Helm 4 (which
// post-renders hooks too and re-encodes the stream).
func TestHelmPostRenderer(t *testing.T) {
	helm3, helm4 := toolBin(t, "helm3"), toolBin(t, "helm4")
	bin := buildKubedra(t)
	env := helmEnv(t, bin)
	run(t, env, nil, helm4, "plugin", "install", "deploy/helm-plugin").must(t, "helm 4 plugin install")
	if out := run(t, env, nil, helm4, "plugin", "list").must(t, "helm plugin list"); !bytes.Contains(out, []byte("postrenderer/v1")) {
		t.Fatalf("helm plugin list shows no postrenderer/v1 plugin:\n%s", out)
	}
	migrate := func(in []byte, args ...string) []byte {
		t.Helper()
		return run(t, env, in, bin, append([]string{"migrate", "-"}, args...)...).must(t, "kubedra migrate -")
	}
	helm3PR := []string{"--post-renderer", "kubedra", "--post-renderer-args", "migrate", "--post-renderer-args", "-"}
	for _, c := range postRendererCharts(t) {
		t.Run(c.name, func(t *testing.T) {
			tmpl := append([]string{"template", "gpu", c.dir}, c.args...)
			// Helm 3: manifests post-rendered, hooks appended as rendered.
			noHooks := run(t, env, nil, helm3, append(tmpl, "--no-hooks")...).must(t, "helm 3 template --no-hooks")
			want := migrate(noHooks)
			if bytes.Equal(want, noHooks) {
				t.Fatalf("kubedra migrate - changed nothing in the render: no device request to migrate?\n%s", noHooks)
			}
			got := run(t, env, nil, helm3, append(append(tmpl, "--no-hooks"), helm3PR...)...).must(t, "helm 3 template --post-renderer kubedra")
			if !bytes.Equal(got, want) {
				t.Errorf("helm 3 with the post-renderer differs from kubedra migrate - over helm template:\n--- got\n%s\n--- want\n%s", got, want)
			}
			plain := run(t, env, nil, helm3, tmpl...).must(t, "helm 3 template")
			got = run(t, env, nil, helm3, append(tmpl, helm3PR...)...).must(t, "helm 3 template --post-renderer kubedra")
			if hooks := plain[len(noHooks):]; !bytes.Equal(got, append(slices.Clone(want), hooks...)) {
				t.Errorf("helm 3 with hooks: want the migrated manifests and then the hooks as rendered (Helm 3 does not post-render hooks):\n%s", got)
			}
			// Helm 4: the plugin, hooks included.
			plain4 := run(t, env, nil, helm4, tmpl...).must(t, "helm 4 template")
			got4 := run(t, env, nil, helm4, append(tmpl, "--post-renderer", "kubedra")...).must(t, "helm 4 template --post-renderer kubedra")
			if g, w := objects(t, got4), objects(t, migrate(plain4)); !slices.Equal(g, w) {
				t.Errorf("helm 4 with the plugin differs from kubedra migrate - over helm template:\n--- got\n%s\n--- want\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
			// Flags reach kubedra through --post-renderer-args and through
			// KUBEDRA_* in helm's environment: with the extended-resource
			// strategy (KEP-5004) on 1.37 nothing changes.
			ext := []string{"--post-renderer-args", "--strategy", "--post-renderer-args", "extended-resource", "--post-renderer-args", "--target-version", "--post-renderer-args", "1.37"}
			if got := run(t, env, nil, helm3, append(append(tmpl, helm3PR...), ext...)...).must(t, "helm 3 --strategy extended-resource"); !bytes.Equal(got, plain) {
				t.Errorf("helm 3 with --strategy extended-resource through --post-renderer-args changed the render:\n%s", got)
			}
			if got := run(t, env, nil, helm4, append(append(tmpl, "--post-renderer", "kubedra"), ext...)...).must(t, "helm 4 --strategy extended-resource"); !slices.Equal(objects(t, got), objects(t, plain4)) {
				t.Errorf("helm 4 with --strategy extended-resource through --post-renderer-args changed the render:\n%s", got)
			}
			env4 := append(slices.Clone(env), "KUBEDRA_STRATEGY=extended-resource", "KUBEDRA_TARGET_VERSION=1.37")
			if got := run(t, env4, nil, helm4, append(tmpl, "--post-renderer", "kubedra")...).must(t, "helm 4 with KUBEDRA_STRATEGY"); !slices.Equal(objects(t, got), objects(t, plain4)) {
				t.Errorf("helm 4 with KUBEDRA_STRATEGY=extended-resource changed the render:\n%s", got)
			}
		})
	}

	t.Run("hooks and pass-through", func(t *testing.T) {
		tmpl := []string{"template", "gpu", "testdata/helm/gpu-hook"}
		got3 := string(run(t, env, nil, helm3, append(tmpl, helm3PR...)...).must(t, "helm 3"))
		// A document without device requests passes byte for byte.
		if !strings.Contains(got3, "# byte for byte (comments, quoting and spacing included).\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gpu-config\ndata:\n  greeting:   \"hello\"    # spaced on purpose\n") {
			t.Errorf("helm 3: the ConfigMap did not pass through byte for byte:\n%s", got3)
		}
		// Helm 3 does not post-render hooks: the hook Job keeps its request.
		if !strings.Contains(got3, "name: gpu-warmup\n  annotations:\n    helm.sh/hook: pre-install") || !strings.Contains(got3, "nvidia.com/gpu: 1") {
			t.Errorf("helm 3: the pre-install hook Job should be left as rendered:\n%s", got3)
		}
		// Helm 4 does: the hook's claim template is a hook of the same
		// event, one weight before the Job.
		got4 := string(run(t, env, nil, helm4, append(tmpl, "--post-renderer", "kubedra")...).must(t, "helm 4"))
		if !strings.Contains(got4, "kind: ResourceClaimTemplate\nmetadata:\n  name: gpu-warmup-gpu\n  annotations:\n    helm.sh/hook: 'pre-install'\n    helm.sh/hook-weight: '4'\n") {
			t.Errorf("helm 4: the warm-up Job's claim template is not a pre-install hook of weight 4:\n%s", got4)
		}
		if strings.Contains(got4, "nvidia.com/gpu:") {
			t.Errorf("helm 4: a device-plugin request is left:\n%s", got4)
		}
	})

	// The forms users mix up (issue 28): Helm 3 given migrate without "-"
	// fails with kubedra's hint; Helm 4 given Helm 3's exec form without
	// the plugin installed names the plugin it looked for; Helm 4 with the
	// plugin given migrate - again fails (the plugin runs migrate -
	// already).
	t.Run("the other helm's form", func(t *testing.T) {
		tmpl := []string{"template", "gpu", "testdata/helm/gpu-hook"}
		r := run(t, env, nil, helm3, append(tmpl, "--post-renderer", "kubedra", "--post-renderer-args", "migrate")...)
		if r.err == nil || !bytes.Contains(r.stderr, []byte("stdin is not a terminal: pass - to read it (a Helm 3 post-renderer: --post-renderer-args migrate --post-renderer-args -")) {
			t.Errorf("helm 3 with migrate and no -: %v\n%s", r.err, r.stderr)
		}
		bare := helmEnv(t, bin) // no plugin installed
		r = run(t, bare, nil, helm4, append(tmpl, helm3PR...)...)
		if r.err == nil || !bytes.Contains(r.stderr, []byte(`invalid argument "kubedra" for "--post-renderer" flag: plugin: {Name:kubedra Type:postrenderer/v1} not found`)) {
			t.Errorf("helm 4 without the plugin: %v\n%s", r.err, r.stderr)
		}
		if r := run(t, env, nil, helm4, append(tmpl, helm3PR...)...); r.err == nil {
			t.Errorf("helm 4's plugin given migrate - again passed:\n%s", r.stdout)
		}
	})

	t.Run("failures fail helm", func(t *testing.T) {
		// Helm accepts the chart (a duplicate key); kubedra refuses it, exit 1.
		tmpl := []string{"template", "gpu", "testdata/helm/dupkey"}
		run(t, env, nil, helm3, tmpl...).must(t, "helm 3 template without the post-renderer")
		r := run(t, env, nil, helm3, append(tmpl, helm3PR...)...)
		if r.err == nil || !bytes.Contains(r.stderr, []byte(`duplicate key "nvidia.com/gpu"`)) || len(r.stdout) != 0 {
			t.Errorf("helm 3 must fail with kubedra's message and print nothing on stdout: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
		}
		// Helm 4.3.1 keeps a plugin's stderr to itself
		// (internal/plugin/runtime_subprocess.go): helm fails naming the
		// plugin, and kubedra's reason is what `helm template | kubedra
		// migrate -` prints (docs/helm.md).
		r = run(t, env, nil, helm4, append(tmpl, "--post-renderer", "kubedra")...)
		if r.err == nil || !bytes.Contains(r.stderr, []byte(`plugin "kubedra" exited with error`)) || len(r.stdout) != 0 {
			t.Errorf("helm 4 must fail naming the kubedra plugin: %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
		}
		if bytes.Contains(r.stderr, []byte("duplicate key")) {
			t.Logf("helm 4 now shows the plugin's stderr: update docs/helm.md")
		}
		// A bad flag value through the args is a failure too.
		r = run(t, env, nil, helm3, append(append([]string{"template", "gpu", "testdata/helm/gpu-hook"}, helm3PR...), "--post-renderer-args", "--target-version", "--post-renderer-args", "1.10")...)
		if r.err == nil || !bytes.Contains(r.stderr, []byte("--target-version")) {
			t.Errorf("helm 3 with --target-version 1.10 must fail with kubedra's message: %v\n%s", r.err, r.stderr)
		}
	})
}

// TestArgoCDPlugin runs the generate and init commands of the Argo CD
// Config Management Plugin that deploy/argocd/cmp-plugin.yaml ships, as the
// CMP sidecar runs them: with sh -c in the chart's folder, Argo CD's build
// environment (ARGOCD_APP_NAME, ARGOCD_APP_NAMESPACE, KUBE_VERSION,
// KUBE_API_VERSIONS) and the Application's plugin env as ARGOCD_ENV_*, helm
// (v3.22.0 from hack/tools) and kubedra on PATH. Its output must be `helm
// template | kubedra migrate -` for the cluster's version; a failed render
// or migrate must fail the command and print nothing.
func TestArgoCDPlugin(t *testing.T) {
	helm3 := toolBin(t, "helm3")
	bin := buildKubedra(t)
	data, err := os.ReadFile("deploy/argocd/cmp-plugin.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil {
		t.Fatal(err)
	}
	type command struct {
		Command []string `json:"command"`
		Args    []string `json:"args"`
	}
	var plugin struct {
		APIVersion, Kind string
		Metadata         struct{ Name string }
		Spec             struct {
			Version        string `json:"version"`
			Init, Generate command
			Discover       struct {
				FileName string `json:"fileName"`
			}
		}
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["plugin.yaml"]), &plugin); err != nil {
		t.Fatalf("plugin.yaml: %v", err)
	}
	if plugin.Kind != "ConfigManagementPlugin" || plugin.APIVersion != "argoproj.io/v1alpha1" || plugin.Spec.Discover.FileName != "./Chart.yaml" {
		t.Fatalf("unexpected plugin: %+v", plugin)
	}
	// helm on PATH as "helm", kubedra beside it.
	env := helmEnv(t, bin)
	helmDir := t.TempDir()
	if err := os.Symlink(helm3, filepath.Join(helmDir, "helm")); err != nil {
		t.Fatal(err)
	}
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + helmDir + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	argo := append(slices.Clone(env), "ARGOCD_APP_NAME=gpu", "ARGOCD_APP_NAMESPACE=ml", "KUBE_VERSION=1.37.2",
		"KUBE_API_VERSIONS=v1,apps/v1,batch/v1,resource.k8s.io/v1,monitoring.coreos.com/v1")
	sh := func(c command, dir string, env []string) helmRun {
		t.Helper()
		cmd := exec.Command(c.Command[0], append(c.Command[1:], c.Args...)...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return helmRun{stdout: stdout.Bytes(), stderr: stderr.Bytes(), err: err}
	}
	for _, c := range postRendererCharts(t) {
		t.Run(c.name, func(t *testing.T) {
			dir, err := filepath.Abs(c.dir)
			if err != nil {
				t.Fatal(err)
			}
			sh(plugin.Spec.Init, dir, argo).must(t, "init")
			helmArgs := ""
			var values []string
			for i := 0; i+1 < len(c.args); i += 2 {
				abs, _ := filepath.Abs(c.args[i+1])
				helmArgs += " " + c.args[i] + " " + abs
				values = append(values, c.args[i], abs)
			}
			got := sh(plugin.Spec.Generate, dir, append(slices.Clone(argo), "ARGOCD_ENV_HELM_ARGS="+helmArgs)).must(t, "generate")
			rendered := run(t, env, nil, helm3, append([]string{"template", "gpu", dir, "--namespace", "ml", "--kube-version", "1.37.2",
				"--api-versions", "v1,apps/v1,batch/v1,resource.k8s.io/v1,monitoring.coreos.com/v1"}, values...)...).must(t, "helm template")
			want := run(t, env, rendered, bin, "migrate", "-", "--target-version", "1.37").must(t, "kubedra migrate -")
			if !bytes.Equal(got, want) {
				t.Errorf("the plugin's generate differs from helm template | kubedra migrate -:\n--- got\n%s\n--- want\n%s", got, want)
			}
			if bytes.Equal(want, rendered) {
				t.Errorf("nothing migrated: the chart asks no device?")
			}
			// The Application's plugin env reaches kubedra.
			ext := append(slices.Clone(argo), "ARGOCD_ENV_HELM_ARGS="+helmArgs, "ARGOCD_ENV_KUBEDRA_STRATEGY=extended-resource")
			if got := sh(plugin.Spec.Generate, dir, ext).must(t, "generate with KUBEDRA_STRATEGY"); !bytes.Equal(got, rendered) {
				t.Errorf("with ARGOCD_ENV_KUBEDRA_STRATEGY=extended-resource on 1.37 the render should pass unchanged:\n%s", got)
			}
		})
	}
	t.Run("failures", func(t *testing.T) {
		dupkey, _ := filepath.Abs("testdata/helm/dupkey")
		// Argo CD discards the output of a generate that fails.
		r := sh(plugin.Spec.Generate, dupkey, argo)
		if r.err == nil || !bytes.Contains(r.stderr, []byte(`duplicate key "nvidia.com/gpu"`)) {
			t.Errorf("a migrate failure must fail generate with kubedra's message: %v\nstderr:\n%s", r.err, r.stderr)
		}
		gpuHook, _ := filepath.Abs("testdata/helm/gpu-hook")
		r = sh(plugin.Spec.Generate, gpuHook, append(slices.Clone(argo), "ARGOCD_ENV_HELM_ARGS=--set gpus={"))
		if r.err == nil || len(r.stdout) != 0 {
			t.Errorf("a helm failure must fail generate and print nothing (never an empty stream that prunes the app): %v\nstdout:\n%s\nstderr:\n%s", r.err, r.stdout, r.stderr)
		}
	})
}

// TestFluxPatches checks the Flux example (deploy/flux): the kustomize
// patches of its HelmRelease's spec.postRenderers, applied with kustomize (as
// helm-controller's kustomize post-renderer applies them) to the Triton
// chart's render, give the objects `kubedra migrate -` gives, and
// claim-template.yaml is the ResourceClaimTemplate migrate adds.
func TestFluxPatches(t *testing.T) {
	chart := filepath.Join("..", "shared", "corpus", "dev", "triton-inference-server__server", "deploy", "aws")
	if _, err := os.Stat(chart); err != nil {
		t.Skipf("no shared corpus beside the clone: %v", err)
	}
	helm3, kustomize := toolBin(t, "helm3"), toolBin(t, "kustomize")
	bin := buildKubedra(t)
	env := helmEnv(t, bin)
	var hr struct {
		Spec struct {
			ReleaseName   string `json:"releaseName"`
			PostRenderers []struct {
				Kustomize struct {
					Patches []map[string]any `json:"patches"`
				} `json:"kustomize"`
			} `json:"postRenderers"`
		} `json:"spec"`
	}
	data, err := os.ReadFile("deploy/flux/helmrelease-triton.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &hr); err != nil {
		t.Fatal(err)
	}
	if len(hr.Spec.PostRenderers) != 1 || len(hr.Spec.PostRenderers[0].Kustomize.Patches) == 0 {
		t.Fatalf("the HelmRelease has no kustomize post-renderer: %+v", hr.Spec)
	}
	rendered := run(t, env, nil, helm3, "template", hr.Spec.ReleaseName, chart, "--namespace", "default").must(t, "helm template")
	dir := t.TempDir()
	kust, err := yaml.Marshal(map[string]any{"resources": []string{"render.yaml"}, "patches": hr.Spec.PostRenderers[0].Kustomize.Patches})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "render.yaml"), rendered, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), kust, 0o644); err != nil {
		t.Fatal(err)
	}
	patched := run(t, env, nil, kustomize, "build", dir).must(t, "kustomize build")
	claim, err := os.ReadFile("deploy/flux/claim-template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := objects(t, run(t, env, rendered, bin, "migrate", "-", "--target-version", "1.37").must(t, "kubedra migrate -"))
	got := objects(t, append(append(patched, []byte("\n---\n")...), claim...))
	if !slices.Equal(got, want) {
		t.Errorf("the Flux patches and claim template differ from kubedra migrate -:\n--- got\n%s\n--- want\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
