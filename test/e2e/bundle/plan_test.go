package bundle_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

// planStep is one shell command of PLAN.md and where it came from.
type planStep struct {
	section string
	cmd     string
	// rollback: the command undoes a step ("Rollback: `cmd`" or a block
	// under "Rollback:").
	rollback bool
}

var inlineRollback = regexp.MustCompile("^Rollback[^:]*: `([^`]+)`")

// planSteps reads every command of PLAN.md: the lines of its sh blocks and
// the inline rollback commands, in order.
func planSteps(t *testing.T, plan string) []planStep {
	t.Helper()
	var out []planStep
	section, inBlock, rollbackBlock := "", false, false
	sc := bufio.NewScanner(strings.NewReader(plan))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case inBlock && l == "```":
			inBlock = false
		case inBlock:
			out = append(out, planStep{section: section, cmd: l, rollback: rollbackBlock})
		case l == "```sh":
			inBlock = true
		case strings.HasPrefix(l, "#"):
			section, rollbackBlock = strings.TrimLeft(l, "# "), false
		case strings.HasPrefix(l, "Rollback"):
			if m := inlineRollback.FindStringSubmatch(l); m != nil {
				out = append(out, planStep{section: section, cmd: m[1], rollback: true})
			} else {
				rollbackBlock = true
			}
		case l != "":
			rollbackBlock = false
		}
	}
	return out
}

// fakeKubelet plays the kubelet for pods on nodes: bound pods become Ready
// (so `kubectl rollout status` and drain see them), pods being deleted go.
func fakeKubelet(ctx context.Context, nodes map[string]bool) {
	zero := int64(0)
	for ctx.Err() == nil {
		pods, err := cluster.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				if !nodes[p.Spec.NodeName] {
					continue
				}
				if p.DeletionTimestamp != nil {
					_ = cluster.Clientset.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
					continue
				}
				if p.Status.Phase == corev1.PodRunning {
					continue
				}
				now := metav1.Now()
				p.Status.Phase = corev1.PodRunning
				p.Status.StartTime = &now
				p.Status.Conditions = []corev1.PodCondition{
					{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
					{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
					{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
					{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
				}
				_, _ = cluster.Clientset.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(300 * time.Millisecond):
		}
	}
}

const manifests = `apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer, namespace: plan-workloads}
spec:
  replicas: 1
  selector: {matchLabels: {app: plan-trainer}}
  template:
    metadata: {labels: {app: plan-trainer}}
    spec:
      nodeSelector: {e2e.kubedra.io/nowhere: "true"}
      containers:
      - name: train
        image: registry.example.com/train:v1
        resources: {limits: {example.com/gpu: 1}}
`

// TestPlanCommands runs every command PLAN.md gives, as a user would copy
// them into a shell from the bundle's parent folder: the forward steps in
// order, then every step's rollback from the last step back, then the
// full rollback. Each must exit 0 (the opening `kubedra bundle verify`
// exits 2: before phase 1 a labelled pool would run both), and the end
// state is the start state: the plugin's affinity as it was, no node
// labelled or cordoned, the driver gone.
func TestPlanCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// A test before this one may still be deleting the driver's namespace.
	namespaceGone(t, ctx, driverNS)
	nodes := map[string]bool{}
	for _, n := range []struct{ name, pool string }{{"plan-x-1", "x"}, {"plan-y-1", "y"}} {
		nodes[n.name] = true
		cluster.CreateNode(t, harness.NodeSpec{Name: n.name,
			Labels:    map[string]string{poolLabel: "plan-" + n.pool, "example.com/gpu.present": "true"},
			Resources: map[string]string{"example.com/gpu": "8"}})
	}
	kctx, kstop := context.WithCancel(ctx)
	defer kstop()
	go fakeKubelet(kctx, nodes)

	plugin := readDaemonSet(t, "testdata/plugin.yaml")
	if _, err := cluster.Clientset.AppsV1().DaemonSets(pluginNS).Create(ctx, plugin, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Clientset.AppsV1().DaemonSets(pluginNS).Delete(context.Background(), pluginName, metav1.DeleteOptions{})
		_, _ = cluster.RunKubectl(context.Background(), "delete", "namespace", driverNS, "plan-workloads", "--ignore-not-found", "--wait=false")
	})
	start := placement(t, ctx, []string{"plan-x-1", "plan-y-1"}, nil)

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "MANIFESTS.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.RunKubectl(ctx, "create", "namespace", "plan-workloads"); err != nil {
		t.Fatal(err)
	}
	env := userEnv(t)
	sh := func(step planStep, want int) {
		t.Helper()
		runStep(t, ctx, dir, env, step, want)
	}
	sh(planStep{section: "generate", cmd: "kubedra bundle --driver example --from-cluster --pool-label " + poolLabel + " --pools plan-x,plan-y --target-version 1.37 --out cutover"}, 0)
	plan, err := os.ReadFile(filepath.Join(dir, "cutover", "PLAN.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps := planSteps(t, string(plan))
	var forward, back, full []planStep
	for _, s := range steps {
		switch {
		case strings.HasPrefix(s.section, "Full rollback"):
			full = append(full, s)
		case s.rollback:
			back = append(back, s)
		default:
			forward = append(forward, s)
		}
	}
	if len(forward) < 15 || len(back) < 10 || len(full) < 4 {
		t.Fatalf("PLAN.md has %d forward, %d rollback and %d full-rollback commands:\n%s", len(forward), len(back), len(full), plan)
	}
	for i, s := range forward {
		want := 0
		if i == 0 && s.cmd == "kubedra bundle verify cutover" {
			want = 2 // before phase 1: labelling would run both
		}
		sh(s, want)
	}
	placement(t, ctx, []string{}, []string{"plan-x-1", "plan-y-1"})
	// Step 7 applied the migrated workload, not a diff.
	dep, err := cluster.Clientset.AppsV1().Deployments("plan-workloads").Get(ctx, "trainer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ps := dep.Spec.Template.Spec; len(ps.ResourceClaims) == 0 || len(ps.Containers[0].Resources.Limits) != 0 {
		t.Errorf("step 7 did not apply the migrated Deployment: claims %+v, limits %v", ps.ResourceClaims, ps.Containers[0].Resources.Limits)
	}
	for i := len(back) - 1; i >= 0; i-- {
		sh(back[i], 0)
	}
	for _, s := range full {
		sh(s, 0)
	}
	end := placement(t, ctx, []string{"plan-x-1", "plan-y-1"}, nil)
	if !equality.Semantic.DeepEqual(start.Spec.Template.Spec.Affinity, end.Spec.Template.Spec.Affinity) {
		t.Errorf("the plugin's affinity is not restored:\nbefore %+v\nafter  %+v", start.Spec.Template.Spec.Affinity, end.Spec.Template.Spec.Affinity)
	}
	for n := range nodes {
		node, err := cluster.Clientset.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if node.Spec.Unschedulable || node.Labels[modeLabel] != "" {
			t.Errorf("node %s after the rollback: unschedulable %v, labels %v", n, node.Spec.Unschedulable, node.Labels)
		}
	}
}

// TestDocsCommands runs the command block of docs/bundle.md in order on a
// cluster holding the NVIDIA device plugin as its Helm chart ships it and
// two Neuron pools: every command exits 0, and phase 1 keeps each of the
// chart's three ORed terms, with the exclusion ANDed into each.
func TestDocsCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	namespaceGone(t, ctx, "nvidia-device-plugin")
	cluster.CreateNode(t, harness.NodeSpec{Name: "docs-nv-1", Labels: map[string]string{"eks.amazonaws.com/nodegroup": "gpu-a", "nvidia.com/gpu.present": "true"},
		Resources: map[string]string{"nvidia.com/gpu": "8"}})
	for _, p := range []string{"trn2-a", "trn2-b"} {
		cluster.CreateNode(t, harness.NodeSpec{Name: "docs-" + p + "-1", Labels: map[string]string{"eks.amazonaws.com/nodegroup": p, "node.kubernetes.io/instance-type": "trn2.48xlarge"},
			Resources: map[string]string{"aws.amazon.com/neuron": "16"}})
	}
	objs, err := harness.DecodeYAML(must(os.ReadFile("testdata/nvdp.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.CreateAll(ctx, objs, harness.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cluster.RunKubectl(context.Background(), "delete", "namespace", "nvidia-device-plugin", "--ignore-not-found", "--wait=false")
		_, _ = cluster.RunKubectl(context.Background(), "-n", "kube-system", "delete", "daemonset", "neuron-device-plugin-daemonset", "--ignore-not-found", "--wait=false")
	})
	doc, err := os.ReadFile("../../../docs/bundle.md")
	if err != nil {
		t.Fatal(err)
	}
	steps := planSteps(t, string(doc))
	if len(steps) < 6 {
		t.Fatalf("docs/bundle.md has %d commands", len(steps))
	}
	dir, env := t.TempDir(), userEnv(t)
	for _, s := range steps {
		runStep(t, ctx, dir, env, s, 0)
	}
	ds, err := cluster.Clientset.AppsV1().DaemonSets("nvidia-device-plugin").Get(ctx, "nvdp-nvidia-device-plugin", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	terms := ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) != 3 {
		t.Fatalf("phase 1 left %d terms, want the chart's 3: %+v", len(terms), terms)
	}
	for i, term := range terms {
		if len(term.MatchExpressions) != 2 || term.MatchExpressions[1].Key != modeLabel {
			t.Errorf("term %d: %+v, want the chart's expression and the exclusion", i, term.MatchExpressions)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cutover-defaults", "phase-1")); err == nil {
		t.Errorf("the bundle without facts has a phase 1")
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// userEnv is the environment of a user's shell: kubedra and kubectl on
// PATH, the cluster's kubeconfig.
func userEnv(t *testing.T) []string {
	t.Helper()
	bin, err := harness.KubedraBin()
	if err != nil {
		t.Fatal(err)
	}
	pathDir := t.TempDir()
	for name, target := range map[string]string{"kubedra": bin, "kubectl": cluster.Kubectl} {
		if err := os.Symlink(target, filepath.Join(pathDir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return append(cluster.Env(), "PATH="+pathDir+":/usr/bin:/bin")
}

// runStep runs one command with sh in dir and requires its exit code.
func runStep(t *testing.T, ctx context.Context, dir string, env []string, step planStep, want int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", step.cmd)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != want {
		t.Fatalf("%q: `%s`: exit %d, want %d\n%s", step.section, step.cmd, code, want, out)
	}
	t.Logf("ok (%d) %s", code, step.cmd)
}

// namespaceGone waits until a namespace an earlier test deleted is gone,
// force-deleting its pods (no kubelet ends them).
func namespaceGone(t *testing.T, ctx context.Context, ns string) {
	t.Helper()
	if err := harness.Poll(ctx, 2*time.Minute, "namespace "+ns+" gone", func(ctx context.Context) (bool, string, error) {
		_, err := cluster.Clientset.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		_ = cluster.ForceDeletePods(ctx, ns)
		return false, "still there", nil
	}); err != nil {
		t.Fatal(err)
	}
}
