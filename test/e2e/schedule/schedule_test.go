package schedule_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }

// pending marks a pod the scheduler reported unschedulable.
const pending = "(pending)"

// pluginResources are the device-plugin resources the scenarios use; none
// may be left in a migrated pod spec.
var pluginResources = []string{"nvidia.com/gpu", "nvidia.com/mig-", "aws.amazon.com/neuron", "vpc.amazonaws.com/efa"}

// nodeDef is one logical node of a scenario, present in both worlds.
type nodeDef struct {
	name string
	// labels are on the node in both worlds (instance type, ...).
	labels map[string]string
	// pluginLabels are device-plugin stack labels (GPU feature discovery):
	// only in the device-plugin world.
	pluginLabels map[string]string
	// pluginResources are advertised in status.allocatable in the device-plugin world.
	pluginResources map[string]string
	// slices are published for the node in the DRA world.
	slices []sliceDef
}

type sliceDef struct {
	driver  string
	devices []resourcev1.Device
}

// scenario is one workload file and what both worlds must do with it.
type scenario struct {
	name  string
	nodes []nodeDef
	// want maps each workload (its pods' "app" label) to the logical nodes
	// its pods are bound to, sorted, pending for unschedulable pods.
	want map[string][]string
	// devices is how many devices each bound pod of a workload gets in the DRA world.
	devices map[string]int
	// check inspects one bound pod's allocation in the DRA world (claims keyed
	// by the pod's claim name).
	check func(t *testing.T, pod *corev1.Pod, claims map[string][]harness.AllocatedDevice)
	// note explains, on failure, what the scenario is about.
	note string
}

type world string

const (
	pluginWorld world = "device-plugin"
	draWorld    world = "dra"
)

func TestSchedulingEquivalence(t *testing.T) {
	if _, err := harness.KubedraBin(); err != nil {
		t.Fatal(err)
	}
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			input, err := os.ReadFile(filepath.Join("testdata", sc.name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			original := decode(t, "the scenario input", input)
			migrated := decode(t, "kubedra migrate output", migrate(t, input))
			checkMigrated(t, migrated)

			var got [2]outcome
			for i, w := range []world{pluginWorld, draWorld} {
				objs := original
				if w == draWorld {
					objs = migrated
				}
				t.Run(string(w), func(t *testing.T) { got[i] = run(t, sc, w, objs) })
			}
			compare(t, sc, got[0], got[1])
		})
	}
}

// migrate runs `kubedra migrate --target-version <minor> -` on input.
func migrate(t *testing.T, input []byte) []byte {
	t.Helper()
	args := []string{"migrate", "--target-version", cluster.Version.TargetVersion(), "-"}
	res, err := harness.RunKubedra(context.Background(), nil, input, args...)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("kubedra %s exited %d\nstderr:\n%s", strings.Join(args, " "), res.ExitCode, res.Stderr)
	}
	t.Logf("kubedra %s: %s", strings.Join(args, " "), strings.TrimSpace(string(res.Stderr)))
	return res.Stdout
}

func decode(t *testing.T, what string, data []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := harness.DecodeYAML(data)
	if err != nil {
		t.Fatalf("decoding %s: %v\n%s", what, err, data)
	}
	return objs
}

// checkMigrated fails when migrate left a device-plugin resource in a pod
// spec: the DRA world would then not test a migration at all.
func checkMigrated(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		spec := podSpec(t, o)
		if spec == nil {
			continue
		}
		for _, c := range append(append([]corev1.Container{}, spec.InitContainers...), spec.Containers...) {
			for _, rl := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
				for name := range rl {
					for _, p := range pluginResources {
						if strings.HasPrefix(string(name), p) {
							t.Errorf("kubedra migrate left %s in container %s of %s %s", name, c.Name, o.GetKind(), o.GetName())
						}
					}
				}
			}
		}
	}
}

func podSpec(t *testing.T, o *unstructured.Unstructured) *corev1.PodSpec {
	t.Helper()
	path := harness.PodSpecPath(o.GetKind())
	if path == nil {
		return nil
	}
	m, found, err := unstructured.NestedMap(o.Object, path...)
	if err != nil || !found {
		t.Fatalf("%s %s: no pod spec at %v: %v", o.GetKind(), o.GetName(), path, err)
	}
	var spec corev1.PodSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &spec); err != nil {
		t.Fatalf("%s %s: decoding the pod spec: %v", o.GetKind(), o.GetName(), err)
	}
	return &spec
}

// appLabel is the "app" label of the pods a workload creates.
func appLabel(o *unstructured.Unstructured) string {
	path := append([]string{}, harness.PodSpecPath(o.GetKind())...)
	if len(path) == 0 {
		return ""
	}
	path[len(path)-1] = "metadata" // .spec -> .metadata, .template.spec -> .template.metadata
	labels, _, _ := unstructured.NestedStringMap(o.Object, append(path, "labels")...)
	return labels["app"]
}

// outcome is where each workload's pods went in one world, and why the
// pending ones are pending (the scheduler's message).
type outcome struct {
	nodes   map[string][]string
	reasons []string
}

// run builds one world in a sandbox, creates objs in it and returns where
// each workload's pods went.
func run(t *testing.T, sc scenario, w world, objs []*unstructured.Unstructured) outcome {
	ctx := context.Background()
	sb := cluster.NewSandbox(t)
	for _, n := range sc.nodes {
		spec := harness.NodeSpec{Name: n.name, Labels: map[string]string{}}
		for k, v := range n.labels {
			spec.Labels[k] = v
		}
		if w == pluginWorld {
			for k, v := range n.pluginLabels {
				spec.Labels[k] = v
			}
			spec.Resources = n.pluginResources
		}
		sb.Node(spec)
		if w == draWorld {
			for _, s := range n.slices {
				sb.Slice(s.driver, n.name, s.devices...)
			}
		}
	}
	waitForNodes(t, sb, sc.nodes)

	var workloads []*unstructured.Unstructured
	var others []*unstructured.Unstructured
	for _, o := range objs {
		o = o.DeepCopy()
		if err := sb.Confine(o); err != nil {
			t.Fatal(err)
		}
		if harness.PodSpecPath(o.GetKind()) != nil {
			workloads = append(workloads, o)
		} else {
			others = append(others, o)
		}
	}
	// Claim templates first, then the workloads one by one, each settled
	// before the next, so that "which pod stays pending" is deterministic.
	if err := cluster.CreateAll(ctx, others, harness.CreateOptions{}); err != nil {
		t.Fatalf("%s world: %v", w, err)
	}
	for _, o := range workloads {
		app := appLabel(o)
		n, ok := sc.want[app]
		if !ok {
			t.Fatalf("scenario %s: workload %s %s has pods labelled app=%q, which the scenario expects nothing of", sc.name, o.GetKind(), o.GetName(), app)
		}
		if err := cluster.CreateAll(ctx, []*unstructured.Unstructured{o}, harness.CreateOptions{}); err != nil {
			t.Fatalf("%s world: %v", w, err)
		}
		waitSettled(t, sb, w, app, len(n))
	}

	pods, err := cluster.Clientset.CoreV1().Pods(sb.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app,app!=e2e-canary"})
	if err != nil {
		t.Fatal(err)
	}
	got := outcome{nodes: map[string][]string{}}
	for i := range pods.Items {
		p := &pods.Items[i]
		node := pending
		if p.Spec.NodeName != "" {
			node = sb.Logical(p.Spec.NodeName)
		} else if c := harness.PodCondition(p, corev1.PodScheduled); c != nil {
			got.reasons = append(got.reasons, fmt.Sprintf("%s world: pod %s pending: %s", w, p.Name, c.Message))
		}
		got.nodes[p.Labels["app"]] = append(got.nodes[p.Labels["app"]], node)
		if w == draWorld && p.Spec.NodeName != "" {
			checkAllocation(t, sc, p)
		}
	}
	for k := range got.nodes {
		sort.Strings(got.nodes[k])
	}
	sort.Strings(got.reasons)
	return got
}

// waitForNodes binds one canary pod (no requests) to each node of the world
// so that the scheduler has seen every node before the workloads arrive;
// otherwise a pod could be reported unschedulable against a partial view.
func waitForNodes(t *testing.T, sb *harness.Sandbox, nodes []nodeDef) {
	t.Helper()
	ctx := context.Background()
	for _, n := range nodes {
		pod := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "canary-" + n.name, "labels": map[string]any{"app": "e2e-canary"}},
			"spec": map[string]any{
				"nodeSelector": map[string]any{"kubernetes.io/hostname": sb.NodeName(n.name)},
				"containers":   []any{map[string]any{"name": "pause", "image": "registry.invalid/pause:3"}},
			},
		}}
		if err := sb.Confine(pod); err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.Create(ctx, pod, harness.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range nodes {
		if _, err := cluster.WaitPodScheduled(ctx, sb.Namespace, "canary-"+n.name, harness.DefaultWait); err != nil {
			t.Fatalf("the scheduler did not see node %s: %v", n.name, err)
		}
	}
}

// waitSettled waits until the workload has n pods and each is bound or
// reported unschedulable.
func waitSettled(t *testing.T, sb *harness.Sandbox, w world, app string, n int) {
	t.Helper()
	err := harness.Poll(context.Background(), harness.DefaultWait,
		fmt.Sprintf("%s world: %d pod(s) of %s to be bound or reported unschedulable", w, n, app),
		func(ctx context.Context) (bool, string, error) {
			pods, err := cluster.Clientset.CoreV1().Pods(sb.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
			if err != nil {
				return false, err.Error(), nil
			}
			var seen []string
			settled := 0
			for i := range pods.Items {
				p := &pods.Items[i]
				seen = append(seen, p.Name+": "+harness.PodSummary(p))
				c := harness.PodCondition(p, corev1.PodScheduled)
				if p.Spec.NodeName != "" || (c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable) {
					settled++
				}
			}
			return len(pods.Items) == n && settled == n, fmt.Sprintf("%d pod(s): %s", len(pods.Items), strings.Join(seen, "; ")), nil
		})
	if err != nil {
		t.Fatal(err)
	}
}

// checkAllocation asserts that a bound pod's claims are allocated with the
// expected number of devices, all on the pod's node and reserved for it.
func checkAllocation(t *testing.T, sc scenario, p *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	claims, err := cluster.PodClaims(ctx, p)
	if err != nil {
		t.Errorf("dra world: pod %s: %v", p.Name, err)
		return
	}
	all := map[string][]harness.AllocatedDevice{}
	total := 0
	for name, c := range claims {
		if c.Status.Allocation == nil {
			t.Errorf("dra world: pod %s is bound to %s but its claim %s (%s) is not allocated", p.Name, p.Spec.NodeName, name, c.Name)
			continue
		}
		if !slices.ContainsFunc(c.Status.ReservedFor, func(r resourcev1.ResourceClaimConsumerReference) bool { return r.UID == p.UID }) {
			t.Errorf("dra world: claim %s is not reserved for pod %s (reservedFor %v)", c.Name, p.Name, c.Status.ReservedFor)
		}
		devs, err := cluster.AllocatedDevices(ctx, c)
		if err != nil {
			t.Errorf("dra world: pod %s: %v", p.Name, err)
			continue
		}
		for _, d := range devs {
			if d.Node != p.Spec.NodeName {
				t.Errorf("dra world: pod %s on %s got device %s/%s of node %s", p.Name, p.Spec.NodeName, d.Driver, d.Device, d.Node)
			}
		}
		all[name] = devs
		total += len(devs)
	}
	app := p.Labels["app"]
	if want, ok := sc.devices[app]; ok && total != want {
		t.Errorf("dra world: pod %s (%s) got %d device(s), want %d: %v", p.Name, app, total, want, deviceNames(all))
	}
	if sc.check != nil {
		sc.check(t, p, all)
	}
}

func deviceNames(claims map[string][]harness.AllocatedDevice) []string {
	var out []string
	for claim, devs := range claims {
		for _, d := range devs {
			out = append(out, fmt.Sprintf("%s/%s=%s/%s", claim, d.Request, d.Driver, d.Device))
		}
	}
	sort.Strings(out)
	return out
}

func compare(t *testing.T, sc scenario, po, do outcome) {
	t.Helper()
	plugin, dra := po.nodes, do.nodes
	apps := map[string]bool{}
	for _, m := range []map[string][]string{sc.want, plugin, dra} {
		for k := range m {
			apps[k] = true
		}
	}
	var diffs []string
	for app := range apps {
		want := append([]string{}, sc.want[app]...)
		sort.Strings(want)
		if !slices.Equal(plugin[app], dra[app]) || !slices.Equal(plugin[app], want) {
			diffs = append(diffs, fmt.Sprintf("workload %s: device-plugin world %v, DRA world %v; want %v", app, plugin[app], dra[app], want))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		note := ""
		if sc.note != "" {
			note = "\n  note: " + sc.note
		}
		t.Errorf("scenario %s: the worlds do not schedule alike (nodes are logical names; %s = unschedulable):\n  %s\n  %s%s",
			sc.name, pending, strings.Join(diffs, "\n  "), strings.Join(append(po.reasons, do.reasons...), "\n  "), note)
	}
}
