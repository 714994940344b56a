package upgrade_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }

// target is what the classic manifests are upgraded for: the first release
// without v1beta1. Its output (resource.k8s.io/v1) is what 1.34+ serve.
const target = "1.38"

// repoRoot is the kubedra clone: test/e2e/upgrade -> ../../..
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "kubedra")); err != nil {
		t.Fatalf("%s does not look like the kubedra clone: %v", root, err)
	}
	return root
}

func quickstart(t *testing.T) string {
	return filepath.Join(repoRoot(t), "rewrite", "testdata", "dra-classic-quickstart", "input.yaml")
}

// corpusInputs copies the classic and v1beta1 examples of the reference
// corpus into dir (the corpus is never written to).
func corpusInputs(t *testing.T, dir string) int {
	t.Helper()
	src := filepath.Join(repoRoot(t), "..", "shared", "corpus", "dra-reference", "NVIDIA__k8s-dra-driver-gpu", "demo", "specs")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no reference corpus at %s", src)
	}
	n := 0
	for _, rel := range []string{"selectors/claims.yaml", "selectors/parameters.yaml", "selectors/pods.yaml",
		"mig+mps/sharing-demo-claims.yaml", "mig+mps/sharing-demo-job.yaml", "quickstart/gpu-test7.yaml", "quickstart/gpu-test8.yaml"} {
		data, err := os.ReadFile(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, filepath.Dir(rel), filepath.Base(rel))
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// migrate runs kubedra migrate --target-version 1.38 over args and returns
// its stderr; exit 0 is required.
func migrate(t *testing.T, stdin []byte, args ...string) ([]byte, []byte) {
	t.Helper()
	if _, err := harness.KubedraBin(); err != nil {
		t.Fatal(err)
	}
	args = append([]string{"migrate", "--target-version", target}, args...)
	res, err := harness.RunKubedra(context.Background(), nil, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("kubedra %s exited %d\nstderr:\n%s", strings.Join(args, " "), res.ExitCode, res.Stderr)
	}
	return res.Stdout, res.Stderr
}

func dryRun(ctx context.Context, o *unstructured.Unstructured) error {
	if ns := o.GetNamespace(); ns != "" {
		if err := cluster.EnsureNamespace(ctx, ns); err != nil {
			return err
		}
	}
	_, err := cluster.Create(ctx, o, harness.CreateOptions{DryRun: true})
	if apierrors.IsAlreadyExists(err) {
		return nil // existence is checked after validation and admission
	}
	return err
}

// earlier reports whether an object is DRA written for an earlier release.
func earlier(o *unstructured.Unstructured) bool {
	group, version, _ := strings.Cut(o.GetAPIVersion(), "/")
	if strings.HasSuffix(group, ".resource.nvidia.com") || group == "gpu.resource.intel.com" {
		return true
	}
	if group == "resource.k8s.io" && version != "v1" {
		return true
	}
	spec := podSpec(o)
	claims, _, _ := unstructured.NestedSlice(spec, "resourceClaims")
	for _, c := range claims {
		if m, ok := c.(map[string]any); ok && m["source"] != nil {
			return true
		}
	}
	return false
}

func podSpec(o *unstructured.Unstructured) map[string]any {
	path := harness.PodSpecPath(o.GetKind())
	if path == nil {
		return nil
	}
	spec, _, _ := unstructured.NestedMap(o.Object, path...)
	return spec
}

func TestDryRun(t *testing.T) {
	ctx := context.Background()
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
	in := t.TempDir()
	files := corpusInputs(t, in)
	data, err := os.ReadFile(quickstart(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, "quickstart.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	_, stderr := migrate(t, nil, "--out", out, in)
	t.Logf("kubedra migrate: %s", strings.TrimSpace(string(stderr)[strings.LastIndex(strings.TrimSpace(string(stderr)), "\n")+1:]))

	var accepted, rejectedInputs, earlierInputs int
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(out, path)
		got, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		objs, err := harness.DecodeYAML(got)
		if err != nil {
			t.Errorf("%s: migrated output does not decode: %v", rel, err)
			return nil
		}
		for _, o := range objs {
			if earlier(o) {
				t.Errorf("%s: %s %s is still written for an earlier DRA (%s)", rel, o.GetKind(), o.GetName(), o.GetAPIVersion())
				continue
			}
			if err := dryRun(ctx, o); err != nil {
				t.Errorf("%s: %s %s/%s rejected by kube-apiserver %s:\n  %v", rel, o.GetKind(), o.GetNamespace(), o.GetName(), cluster.Version.Kubernetes, err)
				continue
			}
			accepted++
		}
		// The input's earlier-DRA documents are refused as written.
		orig, err := os.ReadFile(filepath.Join(in, rel))
		if err != nil {
			return err
		}
		inObjs, err := harness.DecodeYAML(orig)
		if err != nil {
			return err
		}
		for _, o := range inObjs {
			if !earlier(o) {
				continue
			}
			earlierInputs++
			if dryRun(ctx, o) != nil {
				rejectedInputs++
			} else {
				t.Errorf("%s: the input's %s %s (%s) is accepted as written: this test cannot tell a migration from none", rel, o.GetKind(), o.GetName(), o.GetAPIVersion())
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d corpus files + the quick-start set: %d migrated objects accepted; %d of %d earlier-DRA input documents rejected as written",
		files, accepted, rejectedInputs, earlierInputs)
	if accepted == 0 || earlierInputs == 0 {
		t.Fatalf("nothing validated (accepted %d, earlier inputs %d)", accepted, earlierInputs)
	}
}

// world is one sandbox with its nodes and their devices.
type world struct {
	sb *harness.Sandbox
}

func newWorld(t *testing.T, nodes map[string][]resourcev1.Device) *world {
	w := &world{sb: cluster.NewSandbox(t)}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		w.sb.Node(harness.NodeSpec{Name: n})
		w.sb.Slice(harness.NvidiaDriver, n, nodes[n]...)
	}
	return w
}

// create creates the migrated objects of namespace ns (one scenario's
// namespace) in the sandbox, confined to its nodes, and returns the names
// of the Pods among them.
func (w *world) create(t *testing.T, objs []*unstructured.Unstructured, ns string) []string {
	t.Helper()
	var pods []string
	for _, o := range objs {
		if o.GetNamespace() != ns || o.GetKind() == "Namespace" {
			continue
		}
		o = o.DeepCopy()
		if err := w.sb.Confine(o); err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.Create(context.Background(), o, harness.CreateOptions{Namespace: w.sb.Namespace}); err != nil {
			t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
		}
		if o.GetKind() == "Pod" {
			pods = append(pods, o.GetName())
		}
	}
	return pods
}

// placed waits for each pod to be scheduled and returns, per pod, its node
// (logical name) and the devices of its claims.
func (w *world) placed(t *testing.T, pods []string) (map[string]string, map[string][]harness.AllocatedDevice) {
	t.Helper()
	if len(pods) == 0 {
		t.Fatal("no pods to place")
	}
	ctx := context.Background()
	nodes := map[string]string{}
	devices := map[string][]harness.AllocatedDevice{}
	for _, name := range pods {
		p, err := cluster.WaitPodScheduled(ctx, w.sb.Namespace, name, harness.DefaultWait)
		if err != nil {
			t.Fatalf("%v; events: %v", err, cluster.SchedulingEvents(ctx, w.sb.Namespace, name))
		}
		nodes[name] = w.sb.Logical(p.Spec.NodeName)
		claims, err := cluster.PodClaims(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range claims {
			ds, err := cluster.AllocatedDevices(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			devices[name] = append(devices[name], ds...)
		}
	}
	return nodes, devices
}

func gpus(n int) []resourcev1.Device {
	var out []resourcev1.Device
	for i := range n {
		out = append(out, harness.NvidiaGPU{Minor: i, ProductName: "NVIDIA A100-SXM4-80GB"}.Device())
	}
	return out
}

func migs(profile string, gi, step, n int) []resourcev1.Device {
	var out []resourcev1.Device
	for i := range n {
		out = append(out, harness.NvidiaMIG{ParentMinor: 0, Profile: profile, GIProfileID: gi, PlacementStart: i * step, ProductName: "NVIDIA A100-SXM4-80GB"}.Device())
	}
	return out
}

func TestPlacement(t *testing.T) {
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
	data, err := os.ReadFile(quickstart(t))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := migrate(t, data, "-")
	objs, err := harness.DecodeYAML(out)
	if err != nil {
		t.Fatalf("decoding the migrated quick-start: %v\n%s", err, out)
	}
	for _, o := range objs {
		if earlier(o) {
			t.Fatalf("%s %s is still written for an earlier DRA", o.GetKind(), o.GetName())
		}
	}

	t.Run("exclusive GPU per pod", func(t *testing.T) {
		t.Parallel()
		// One node with two GPUs: each pod takes one of them.
		w := newWorld(t, map[string][]resourcev1.Device{"gpu2": gpus(2)})
		nodes, devs := w.placed(t, w.create(t, objs, "gpu-test1"))
		seen := map[string]string{}
		for pod, ds := range devs {
			if len(ds) != 1 || ds[0].Attributes["gpu.nvidia.com/type"] != "gpu" {
				t.Fatalf("pod %s got %+v, want one full GPU", pod, ds)
			}
			if other, ok := seen[ds[0].Device]; ok {
				t.Errorf("pods %s and %s share GPU %s: the classic claims were exclusive", pod, other, ds[0].Device)
			}
			seen[ds[0].Device] = pod
		}
		t.Logf("placement: %v, devices %v", nodes, seen)
	})

	t.Run("time-sliced GPU shared by two pods", func(t *testing.T) {
		t.Parallel()
		// Two nodes with one GPU each: the shared claim puts both pods on
		// the same node and GPU; exclusive claims would spread them.
		w := newWorld(t, map[string][]resourcev1.Device{"gpu-a": gpus(1), "gpu-b": gpus(1)})
		pods := w.create(t, objs, "gpu-test-ts")
		nodes, devs := w.placed(t, pods)
		if len(pods) != 2 || nodes[pods[0]] != nodes[pods[1]] {
			t.Errorf("pods %v on %v: want both on one node", pods, nodes)
		}
		var ids []string
		for _, p := range pods {
			if len(devs[p]) != 1 {
				t.Fatalf("pod %s got %+v, want the one shared GPU", p, devs[p])
			}
			ids = append(ids, devs[p][0].Node+"/"+devs[p][0].Device)
		}
		if ids[0] != ids[1] {
			t.Errorf("pods got %v: want one GPU shared", ids)
		}
		claim, err := cluster.Clientset.ResourceV1().ResourceClaims(w.sb.Namespace).Get(context.Background(), "shared-gpu", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(claim.Status.ReservedFor); n != 2 {
			t.Errorf("claim reserved for %d consumers, want the two pods", n)
		}
		cfg := claim.Spec.Devices.Config
		if len(cfg) != 1 || cfg[0].Opaque == nil || !strings.Contains(string(cfg[0].Opaque.Parameters.Raw), `"interval":"Long"`) {
			t.Errorf("claim config %+v: want the driver's GpuConfig with TimeSlicing interval Long", cfg)
		}
		t.Logf("placement: %v, device %s", nodes, ids[0])
	})

	t.Run("MIG device of the profile", func(t *testing.T) {
		t.Parallel()
		// A node with a full GPU, one with 2g.20gb slices and one with
		// 1g.10gb slices: only the last serves the claim.
		w := newWorld(t, map[string][]resourcev1.Device{
			"full": gpus(1), "mig-2g": migs("2g.20gb", 14, 2, 3), "mig-1g": migs("1g.10gb", 19, 1, 7),
		})
		nodes, devs := w.placed(t, w.create(t, objs, "gpu-test-mig"))
		for pod, ds := range devs {
			if nodes[pod] != "mig-1g" || len(ds) != 1 || ds[0].Attributes["gpu.nvidia.com/profile"] != "1g.10gb" {
				t.Errorf("pod %s on %s got %s: want one 1g.10gb MIG device on mig-1g", pod, nodes[pod], describe(ds))
			}
		}
		t.Logf("placement: %v", nodes)
	})
}

// TestCorpusPlacement: the corpus' classic demos, migrated, are placed as
// their parameters meant: the selectors demo's inference pod (memory <= 16G,
// compute capability >= 7.5) and training pod (memory >= 16G) land on the
// GPUs that match, and the sharing demo's four pods, which share four named
// claims (two GPUs, two MIG devices), all land on the one node that has
// both.
func TestCorpusPlacement(t *testing.T) {
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
	in := t.TempDir()
	corpusInputs(t, in)
	out := t.TempDir()
	migrate(t, nil, "--out", out, in)
	var objs []*unstructured.Unstructured
	for _, rel := range []string{"selectors/claims.yaml", "selectors/parameters.yaml", "selectors/pods.yaml", "mig+mps/sharing-demo-claims.yaml", "mig+mps/sharing-demo-job.yaml"} {
		data, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			t.Fatal(err)
		}
		o, err := harness.DecodeYAML(data)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, o...)
	}

	t.Run("selectors", func(t *testing.T) {
		t.Parallel()
		small := harness.NvidiaGPU{Minor: 0, ProductName: "NVIDIA GeForce RTX 3060", Architecture: "Ampere", Memory: "12Gi", CUDAComputeCapability: "8.6.0"}
		w := newWorld(t, map[string][]resourcev1.Device{"small": {small.Device()}, "big": gpus(1)})
		nodes, _ := w.placed(t, w.create(t, objs, "kubecon-demo"))
		want := map[string]string{"inference-pod": "small", "training-pod": "big"}
		if fmt.Sprint(nodes) != fmt.Sprint(want) {
			t.Errorf("placement %v, want %v", nodes, want)
		}
	})

	t.Run("sharing demo", func(t *testing.T) {
		t.Parallel()
		mixed := append(gpus(2), harness.NvidiaMIG{ParentMinor: 2, Profile: "1g.10gb", GIProfileID: 19, PlacementStart: 0, ProductName: "NVIDIA A100-SXM4-80GB"}.Device(),
			harness.NvidiaMIG{ParentMinor: 2, Profile: "1g.10gb", GIProfileID: 19, PlacementStart: 1, ProductName: "NVIDIA A100-SXM4-80GB"}.Device())
		w := newWorld(t, map[string][]resourcev1.Device{"gpus-only": gpus(4), "mixed": mixed})
		w.create(t, objs, "sharing-demo")
		ctx := context.Background()
		var pods []string
		err := harness.Poll(ctx, harness.DefaultWait, "the job's 4 pods", func(ctx context.Context) (bool, string, error) {
			l, err := cluster.Clientset.CoreV1().Pods(w.sb.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "job-name=sharing-demo-job"})
			if err != nil {
				return false, "", err
			}
			pods = pods[:0]
			for _, p := range l.Items {
				pods = append(pods, p.Name)
			}
			return len(pods) == 4, fmt.Sprintf("%d pods", len(pods)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		nodes, devs := w.placed(t, pods)
		for _, p := range pods {
			if nodes[p] != "mixed" || len(devs[p]) != 4 {
				t.Errorf("pod %s on %s with %s: want the four shared devices on mixed", p, nodes[p], describe(devs[p]))
			}
		}
	})
}

func describe(ds []harness.AllocatedDevice) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprintf("%s (%s %s)", d.Device, d.Attributes["gpu.nvidia.com/type"], d.Attributes["gpu.nvidia.com/profile"]))
	}
	return strings.Join(s, ", ")
}
