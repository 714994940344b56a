package bundle_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }

const (
	poolLabel  = "e2e.kubedra.io/pool"
	modeLabel  = "kubedra.io/device-mode"
	pluginNS   = "kube-system"
	pluginName = "example-device-plugin"
	driverNS   = "dra-example-driver"
	driverName = "dra-example-driver-kubeletplugin"
	wait       = 90 * time.Second
)

// TestBundleCutover applies an example-driver bundle to two pools of fake
// nodes, moves one pool to DRA and rolls everything back, checking where the
// DaemonSet controller puts plugin and driver pods at each step.
func TestBundleCutover(t *testing.T) {
	ctx := context.Background()
	gpu := map[string]string{"example.com/gpu.present": "true"}
	taint := []corev1.Taint{{Key: "example.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}
	for _, n := range []struct{ name, pool string }{{"a-1", "a"}, {"a-2", "a"}, {"b-1", "b"}, {"b-2", "b"}} {
		labels := map[string]string{poolLabel: n.pool}
		for k, v := range gpu {
			labels[k] = v
		}
		cluster.CreateNode(t, harness.NodeSpec{Name: n.name, Labels: labels, Taints: taint, Resources: map[string]string{"example.com/gpu": "8"}})
	}
	cluster.CreateNode(t, harness.NodeSpec{Name: "cpu-1", Labels: map[string]string{poolLabel: "cpu"}})

	plugin := readDaemonSet(t, "testdata/plugin.yaml")
	if _, err := cluster.Clientset.AppsV1().DaemonSets(pluginNS).Create(ctx, plugin, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Clientset.AppsV1().DaemonSets(pluginNS).Delete(context.Background(), pluginName, metav1.DeleteOptions{})
		_, _ = cluster.RunKubectl(context.Background(), "delete", "namespace", driverNS, "--ignore-not-found", "--wait=false")
	})
	start := placement(t, ctx, []string{"a-1", "a-2", "b-1", "b-2"}, nil)

	out := filepath.Join(t.TempDir(), "cutover")
	kubedra(t, ctx, 0, "bundle", "--driver", "example", "--from-cluster", "--pool-label", poolLabel, "--target-version", "1.37", "--out", out)
	man, err := os.ReadFile(filepath.Join(out, "kubedra-bundle.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"selector: e2e.kubedra.io/pool=a", "selector: e2e.kubedra.io/pool=b", "name: example-device-plugin"} {
		if !strings.Contains(string(man), want) {
			t.Errorf("kubedra-bundle.yaml lacks %q:\n%s", want, man)
		}
	}
	if strings.Contains(string(man), "pool=cpu") {
		t.Errorf("the cpu pool has no device plugin and must not be a phase:\n%s", man)
	}

	// The gate can fail: before phase 1, labelling a pool would run both.
	kubedra(t, ctx, 2, "bundle", "verify", out)

	apply(t, ctx, filepath.Join(out, "phase-1"))
	apply(t, ctx, filepath.Join(out, "phase-2"))
	placement(t, ctx, []string{"a-1", "a-2", "b-1", "b-2"}, []string{})
	kubedra(t, ctx, 0, "bundle", "verify", out)

	// Pool a moves to DRA.
	if _, err := cluster.RunKubectl(ctx, "label", "nodes", "-l", poolLabel+"=a", modeLabel+"=dra"); err != nil {
		t.Fatal(err)
	}
	placement(t, ctx, []string{"b-1", "b-2"}, []string{"a-1", "a-2"})
	res := kubedra(t, ctx, 0, "bundle", "verify", "-o", "json", out)
	var rep struct {
		Conflicts  []any `json:"conflicts"`
		Placements []struct {
			Node    string   `json:"node"`
			Plugins []string `json:"plugins"`
			Drivers []string `json:"drivers"`
		} `json:"placements"`
	}
	if err := json.Unmarshal(res, &rep); err != nil {
		t.Fatalf("verify -o json: %v\n%s", err, res)
	}
	for _, p := range rep.Placements {
		if len(p.Plugins) > 0 && len(p.Drivers) > 0 {
			t.Errorf("verify says %s can run both %v and %v", p.Node, p.Plugins, p.Drivers)
		}
		if strings.HasPrefix(p.Node, "a-") && len(p.Drivers) != 1 {
			t.Errorf("verify: %s should run the driver, got %v", p.Node, p.Drivers)
		}
	}

	// A driver that ignores the bundle's selector is caught by verify.
	if _, err := cluster.RunKubectl(ctx, "-n", driverNS, "patch", "daemonset", driverName, "--type", "json",
		"-p", `[{"op":"remove","path":"/spec/template/spec/nodeSelector"}]`); err != nil {
		t.Fatal(err)
	}
	kubedra(t, ctx, 2, "bundle", "verify", out)
	apply(t, ctx, filepath.Join(out, "phase-2"))
	kubedra(t, ctx, 0, "bundle", "verify", out)

	// Rollback, in reverse order.
	if _, err := cluster.RunKubectl(ctx, "label", "nodes", "-l", poolLabel+"=a", modeLabel+"-"); err != nil {
		t.Fatal(err)
	}
	placement(t, ctx, []string{"a-1", "a-2", "b-1", "b-2"}, []string{})
	if _, err := cluster.RunKubectl(ctx, "delete", "-k", filepath.Join(out, "phase-2"), "--wait=false"); err != nil {
		t.Fatal(err)
	}
	apply(t, ctx, filepath.Join(out, "rollback", "phase-1"))
	end := placement(t, ctx, []string{"a-1", "a-2", "b-1", "b-2"}, nil)
	if !equality.Semantic.DeepEqual(start.Spec.Template.Spec.Affinity, end.Spec.Template.Spec.Affinity) {
		a, _ := yaml.Marshal(start.Spec.Template.Spec.Affinity)
		b, _ := yaml.Marshal(end.Spec.Template.Spec.Affinity)
		t.Errorf("rollback did not restore the plugin's affinity:\nbefore:\n%s\nafter:\n%s", a, b)
	}
	if err := harness.Poll(ctx, wait, "the driver DaemonSet to be deleted", func(ctx context.Context) (bool, string, error) {
		_, err := cluster.Clientset.AppsV1().DaemonSets(driverNS).Get(ctx, driverName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		return false, "still there", nil
	}); err != nil {
		t.Error(err)
	}
}

func readDaemonSet(t *testing.T, path string) *appsv1.DaemonSet {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ds appsv1.DaemonSet
	if err := yaml.Unmarshal(b, &ds); err != nil {
		t.Fatal(err)
	}
	return &ds
}

// kubedra runs the binary under test against the cluster and requires the
// exit code; it returns stdout.
func kubedra(t *testing.T, ctx context.Context, code int, args ...string) []byte {
	t.Helper()
	res, err := harness.RunKubedra(ctx, cluster.Env(), nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != code {
		t.Fatalf("kubedra %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.ExitCode, code, res.Stdout, res.Stderr)
	}
	return res.Stdout
}

// apply applies a bundle folder the way PLAN.md says.
func apply(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	if _, err := cluster.RunKubectl(ctx, "apply", "--server-side", "--force-conflicts", "--field-manager=kubedra", "-k", dir); err != nil {
		t.Fatal(err)
	}
}

// placement waits until the DaemonSet controller has settled with plugin pods
// on exactly pluginNodes and driver pods on exactly driverNodes (nil: the
// driver DaemonSet is not checked), and returns the plugin DaemonSet.
// Pods being deleted never go away without a kubelet; they are force-deleted
// and ignored.
func placement(t *testing.T, ctx context.Context, pluginNodes, driverNodes []string) *appsv1.DaemonSet {
	t.Helper()
	var ds *appsv1.DaemonSet
	what := "plugin pods on " + strings.Join(pluginNodes, ",")
	if driverNodes != nil {
		what += " and driver pods on " + strings.Join(driverNodes, ",")
	}
	err := harness.Poll(ctx, wait, what, func(ctx context.Context) (bool, string, error) {
		var err error
		ds, err = cluster.Clientset.AppsV1().DaemonSets(pluginNS).Get(ctx, pluginName, metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		p, err := podNodes(ctx, pluginNS, "name=example-device-plugin-ds")
		if err != nil {
			return false, "", err
		}
		seen := "plugin on " + strings.Join(p, ",")
		done := ds.Status.ObservedGeneration == ds.Generation && slices.Equal(p, sorted(pluginNodes))
		if driverNodes != nil {
			d, err := podNodes(ctx, driverNS, "app.kubernetes.io/name=dra-example-driver")
			if err != nil {
				return false, "", err
			}
			seen += "; driver on " + strings.Join(d, ",")
			done = done && slices.Equal(d, sorted(driverNodes))
		}
		return done, seen, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// podNodes returns the nodes of the live pods matching selector, sorted, and
// force-deletes pods that are being deleted.
func podNodes(ctx context.Context, ns, selector string) ([]string, error) {
	pods, err := cluster.Clientset.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var nodes []string
	zero := int64(0)
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil {
			_ = cluster.Clientset.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
			continue
		}
		if n := podNode(&p); n != "" {
			nodes = append(nodes, n)
		}
	}
	sort.Strings(nodes)
	return nodes, nil
}

// podNode is the node a daemon pod is for: spec.nodeName once bound, else
// the metadata.name field affinity the DaemonSet controller sets.
func podNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}
