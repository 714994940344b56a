package helm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

// helmBin is a helm built by make tools (hack/tools/build.sh); the test
// never builds it. With KUBEDRA_TOOLS=1 (make e2e) a missing one fails the
// test; otherwise it is skipped.
func helmBin(t *testing.T, tool string) string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join("..", "..", "..", "hack", "tools", "build.sh"), "--cached", tool).Output()
	if err != nil {
		if os.Getenv("KUBEDRA_TOOLS") == "1" {
			t.Fatalf("%s is not built: run make tools first (%v)", tool, err)
		}
		t.Skipf("%s is not built yet: run make tools", tool)
	}
	return strings.TrimSpace(string(out))
}

// TestHelmInstall installs, upgrades and uninstalls the vendored vLLM
// production-stack chart on the control plane with real helm 3 and helm 4
// binaries and kubedra as their post-renderer (Helm 3's exec form, Helm 4's
// plugin deploy/helm-plugin): the release's engine Deployment asks a
// ResourceClaim from a ResourceClaimTemplate that belongs to the release, an
// upgrade with the post-renderer changes nothing, and uninstalling removes
// the template with the release.
func TestHelmInstall(t *testing.T) {
	bin, err := harness.KubedraBin()
	if err != nil {
		t.Fatal(err)
	}
	installCRDs(t)
	chart, _ := filepath.Abs(filepath.Join("testdata", "charts", "vllm-stack"))
	plugin, _ := filepath.Abs(filepath.Join("..", "..", "..", "deploy", "helm-plugin"))
	for _, tc := range []struct {
		tool string
		pr   []string
	}{
		{"helm3", []string{"--post-renderer", "kubedra", "--post-renderer-args", "migrate", "--post-renderer-args", "-"}},
		{"helm4", []string{"--post-renderer", "kubedra"}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			helm := helmBin(t, tc.tool)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			pathDir, home := t.TempDir(), t.TempDir()
			if err := os.Symlink(bin, filepath.Join(pathDir, "kubedra")); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cluster.Kubeconfig,
				"HELM_CONFIG_HOME="+filepath.Join(home, "config"), "HELM_DATA_HOME="+filepath.Join(home, "data"), "HELM_CACHE_HOME="+filepath.Join(home, "cache"),
				"KUBEDRA_TARGET_VERSION="+cluster.Version.TargetVersion(), "KUBEDRA_CONFIG=none", "NO_COLOR=1")
			helmRun := func(args ...string) string {
				t.Helper()
				cmd := exec.CommandContext(ctx, helm, args...)
				cmd.Env = env
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
				}
				return stdout.String()
			}
			if tc.tool == "helm4" {
				helmRun("plugin", "install", plugin)
			}
			ns := cluster.NewNamespace(t)
			release := []string{"gpu", chart, "-n", ns, "-f", filepath.Join(chart, "values-example.yaml"), "--skip-crds"}
			helmRun(append(append([]string{"install"}, release...), tc.pr...)...)

			get := func(kind, name string) map[string]any {
				t.Helper()
				out, err := cluster.RunKubectl(ctx, "get", kind, name, "-n", ns, "-o", "json")
				if err != nil {
					t.Fatalf("kubectl get %s %s: %v\n%s", kind, name, err, out)
				}
				var obj map[string]any
				if err := json.Unmarshal(out, &obj); err != nil {
					t.Fatal(err)
				}
				return obj
			}
			deploy := get("deployment", "gpu-opt125m-deployment-vllm")
			spec := dig(deploy, "spec", "template", "spec").(map[string]any)
			claims, _ := spec["resourceClaims"].([]any)
			if len(claims) != 1 {
				t.Fatalf("the engine Deployment has no single resourceClaim: %v", spec["resourceClaims"])
			}
			tmpl, _ := claims[0].(map[string]any)["resourceClaimTemplateName"].(string)
			if b, _ := json.Marshal(spec["containers"]); bytes.Contains(b, []byte("nvidia.com/gpu")) {
				t.Errorf("the installed Deployment still asks nvidia.com/gpu: %s", b)
			}
			rct := get("resourceclaimtemplate", tmpl)
			if dig(rct, "metadata", "annotations", "meta.helm.sh/release-name") != "gpu" || dig(rct, "metadata", "labels", "app.kubernetes.io/managed-by") != "Helm" {
				t.Errorf("the claim template %s is not the release's: %v", tmpl, dig(rct, "metadata"))
			}
			generation := dig(deploy, "metadata", "generation")
			helmRun(append(append([]string{"upgrade"}, release...), tc.pr...)...)
			if g := dig(get("deployment", "gpu-opt125m-deployment-vllm"), "metadata", "generation"); g != generation {
				t.Errorf("an upgrade with the post-renderer changed the Deployment (generation %v -> %v)", generation, g)
			}
			// Without --wait: the pods of a control plane without kubelets
			// never end, so waiting for the Deployment to go would hang.
			helmRun("uninstall", "gpu", "-n", ns)
			err := harness.Poll(ctx, 30*time.Second, "the release's claim template to be deleted", func(ctx context.Context) (bool, string, error) {
				out, err := cluster.RunKubectl(ctx, "get", "resourceclaimtemplate", "-n", ns, "-o", "name")
				return err == nil && len(bytes.TrimSpace(out)) == 0, string(out), nil
			})
			if err != nil {
				t.Errorf("after helm uninstall: %v", err)
			}
		})
	}
}

func dig(obj map[string]any, path ...string) any {
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}
