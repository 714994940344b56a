package simulate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }

// report is the part of simulate's JSON the suite checks.
type report struct {
	Workloads []struct {
		Kind, Name, Verdict string
		Pods                int
		Before, After       struct {
			Pods  int
			Pools []struct {
				Pool string
				Pods int
			}
			Reasons []string
		}
	}
}

type scenario struct {
	name, fleet, manifests string
	// after, when set, is given to simulate with --after and created in
	// the DRA world instead of migrate's output.
	after string
	// args are extra flags for simulate and migrate (--strategy ...).
	args []string
	// verdict and reason are what simulate must say (the scheduler then
	// decides whether it was right).
	verdict, reason string
}

func inventory(pools string) string {
	return "apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n" + pools
}

func deployment(name string, replicas int, spec string) string {
	lines := strings.Split(strings.Trim(spec, "\n"), "\n")
	for i := range lines {
		lines[i] = "      " + lines[i]
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: %s}
spec:
  replicas: %d
  selector: {matchLabels: {app: %s}}
  template:
    metadata: {labels: {app: %s}}
    spec:
%s
`, name, replicas, name, name, strings.Join(lines, "\n"))
}

func container(limits string) string {
	return "containers:\n- name: main\n  image: registry.invalid/app:1\n  resources: {limits: {" + limits + "}}"
}

func scenarios() []scenario {
	return []scenario{{
		name:      "8-GPU pods on p5",
		fleet:     inventory("- {name: train, shape: p5.48xlarge, count: 2}\n"),
		manifests: deployment("trainer", 3, container("nvidia.com/gpu: 8")),
		verdict:   "never-fit",
	}, {
		name:      "Neuron devices and EFA under one matchAttribute",
		fleet:     inventory("- {name: trn, shape: trn2.48xlarge, count: 1}\n"),
		manifests: deployment("llama", 2, container("aws.amazon.com/neuron: 16, vpc.amazonaws.com/efa: 16")),
		verdict:   "never-fit",
	}, {
		name:      "MIG profiles",
		fleet:     inventory("- {name: mig, shape: p5.48xlarge, count: 1, mig: all-1g.10gb}\n"),
		manifests: deployment("slices", 9, container("nvidia.com/mig-1g.10gb: 7")),
		verdict:   "never-fit",
	}, {
		name: "a selector that matches nothing",
		// The nodes are labelled A100 but carry H100s: the plugin world
		// trusts the label, the migrated selector asks the devices.
		fleet:     inventory("- {name: train, shape: p5.48xlarge, count: 1, labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}\n"),
		manifests: deployment("picky", 1, "nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"+container("nvidia.com/gpu: 1")),
		verdict:   "worse", reason: "no device matches the selector",
	}, {
		// A hand migration that puts all 40 devices in one claim: the
		// allocator refuses it.
		name:      "a claim of more than 32 devices",
		fleet:     inventory("- {name: train, shape: p5.48xlarge, count: 1}\n"),
		manifests: deployment("allnic", 1, container("nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32")),
		after: deployment("allnic", 1, "containers:\n- name: main\n  image: registry.invalid/app:1\n  resources: {claims: [{name: all}]}\nresourceClaims: [{name: all, resourceClaimTemplateName: allnic-all}]") + `---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: allnic-all}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}
      - {name: efa, exactly: {deviceClassName: efa.networking.k8s.aws, count: 32}}
`,
		verdict: "worse", reason: "more than the 32 a claim may hold",
	}, {
		// What migrate makes of it: two claims, and the pod fits as before.
		name:      "a pod of more than 32 devices, migrated",
		fleet:     inventory("- {name: train, shape: p5.48xlarge, count: 1}\n"),
		manifests: deployment("allnic", 1, container("nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32")),
		verdict:   "same",
	}, {
		name:  "an init container larger than the app containers",
		fleet: inventory("- {name: train, shape: p5.48xlarge, count: 2}\n"),
		manifests: deployment("warm", 3, "initContainers:\n- name: warm\n  image: registry.invalid/warm:1\n  resources: {limits: {nvidia.com/gpu: 8}}\n"+
			container("nvidia.com/gpu: 1")),
		// The effective request is 8 (the init container reuses the app
		// container's GPU and asks 7 more): two of three pods fit in both
		// worlds.
		verdict: "never-fit",
	}, {
		name:      "a toleration that only the plugin nodes need",
		fleet:     inventory("- {name: infer, shape: g5.12xlarge, count: 2, taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}\n"),
		manifests: deployment("serve", 10, "tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"+container("nvidia.com/gpu: 1")),
		verdict:   "never-fit",
	}, {
		name:      "a class that does not exist",
		fleet:     inventory("- {name: train, shape: p5.48xlarge, count: 1}\n"),
		manifests: deployment("classy", 1, container("nvidia.com/gpu: 1")),
		after: deployment("classy", 1, "containers:\n- name: main\n  image: registry.invalid/app:1\n  resources: {claims: [{name: gpu}]}\nresourceClaims: [{name: gpu, resourceClaimTemplateName: classy-gpu}]") + `---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: classy-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: h100.example.com}}]
`,
		verdict: "worse", reason: "DeviceClass h100.example.com does not exist",
	}, {
		name:      "a pool still on the device plugin",
		fleet:     inventory("- {name: legacy, shape: p5.48xlarge, count: 1, mode: plugin}\n- {name: small, shape: g5.xlarge, count: 1}\n"),
		manifests: deployment("pinned", 1, "nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"+container("nvidia.com/gpu: 2")),
		verdict:   "worse", reason: "pool legacy is still on the device plugin",
	}, {
		name:      "node affinity excludes every DRA node",
		fleet:     inventory("- {name: legacy, shape: a3-highgpu-8g, count: 1, mode: plugin, labels: {team: research}}\n- {name: fresh, shape: a3-highgpu-8g, count: 1}\n"),
		manifests: deployment("research", 1, "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms: [{matchExpressions: [{key: team, operator: In, values: [research]}]}]\n"+container("nvidia.com/gpu: 4")),
		verdict:   "worse", reason: "node affinity excludes every DRA node",
	}, {
		name:      "extended resources served by a DeviceClass (DRAExtendedResource)",
		fleet:     inventory("- {name: train, shape: p5.48xlarge, count: 1}\n"),
		manifests: deployment("ext", 3, container("nvidia.com/gpu: 3")),
		args:      []string{"--strategy", "extended-resource"},
		verdict:   "never-fit",
	}, {
		name:      "time-slicing becomes consumable shares",
		fleet:     inventory("- {name: shared, shape: g5.xlarge, count: 1, timeSlicing: 4}\n"),
		manifests: deployment("tiny", 5, container("nvidia.com/gpu: 1")),
		verdict:   "never-fit",
	}}
}

func TestSimulateAgreesWithTheScheduler(t *testing.T) {
	if _, err := harness.KubedraBin(); err != nil {
		t.Fatal(err)
	}
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
	target := cluster.Version.TargetVersion()
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write := func(name, text string) string {
				p := filepath.Join(dir, name)
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
				return p
			}
			fleet, manifests := write("fleet.yaml", sc.fleet), write("manifests.yaml", sc.manifests)
			sim := append([]string{"simulate", "--target-version", target, "--nodes", fleet}, sc.args...)
			if sc.after != "" {
				sim = append(sim, "--after", write("after.yaml", sc.after))
			}
			var rep report
			if err := json.Unmarshal(kubedra(t, nil, []int{0, 2}, append(sim, "-o", "json", manifests)...), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Workloads) != 1 {
				t.Fatalf("simulate reported %d workloads, want 1", len(rep.Workloads))
			}
			w := rep.Workloads[0]
			t.Logf("simulate: %s, before %d, after %d, reasons %q", w.Verdict, w.Before.Pods, w.After.Pods, w.After.Reasons)
			if w.Verdict != sc.verdict || !strings.Contains(strings.Join(w.After.Reasons, "\n"), sc.reason) {
				t.Errorf("simulate says %s (%q), want %s (%q)", w.Verdict, w.After.Reasons, sc.verdict, sc.reason)
			}
			after := []byte(sc.after)
			if sc.after == "" {
				after = kubedra(t, []byte(sc.manifests), []int{0}, append([]string{"migrate", "--target-version", target}, append(sc.args, "-")...)...)
			}
			for _, world := range []struct {
				name      string
				manifests []byte
				want      []poolCount
			}{
				{"before", []byte(sc.manifests), counts(w.Before.Pools)},
				{"after", after, counts(w.After.Pools)},
			} {
				t.Run(world.name, func(t *testing.T) {
					objects := kubedra(t, nil, []int{0, 2}, append(sim, "--emit-nodes", world.name, manifests)...)
					got := schedule(t, objects, world.manifests, w.Pods)
					if fmt.Sprint(got) != fmt.Sprint(world.want) {
						t.Errorf("%s: the scheduler bound %v, simulate placed %v", world.name, got, world.want)
					}
				})
			}
		})
	}
}

// kubedra runs the binary and fails unless it exits with one of codes.
func kubedra(t *testing.T, stdin []byte, codes []int, args ...string) []byte {
	t.Helper()
	res, err := harness.RunKubedra(context.Background(), nil, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range codes {
		if res.ExitCode == c {
			return res.Stdout
		}
	}
	t.Fatalf("kubedra %s exited %d\nstderr:\n%s", strings.Join(args, " "), res.ExitCode, res.Stderr)
	return nil
}

type poolCount struct {
	Pool string
	Pods int
}

func counts(l []struct {
	Pool string
	Pods int
}) []poolCount {
	out := []poolCount{}
	for _, p := range l {
		out = append(out, poolCount{p.Pool, p.Pods})
	}
	return out
}

// schedule builds a world from simulate's Nodes and ResourceSlices in a
// sandbox, creates the manifests, waits until all pods of the workload
// are bound or unschedulable, and counts the bound ones per pool.
func schedule(t *testing.T, objects, manifests []byte, pods int) []poolCount {
	t.Helper()
	ctx := context.Background()
	sb := cluster.NewSandbox(t)
	docs, err := harness.DecodeYAML(objects)
	if err != nil {
		t.Fatal(err)
	}
	var logical []string
	for _, d := range docs {
		data, _ := d.MarshalJSON()
		switch d.GetKind() {
		case "Node":
			var n corev1.Node
			if err := json.Unmarshal(data, &n); err != nil {
				t.Fatal(err)
			}
			spec := harness.NodeSpec{Name: n.Name, Labels: map[string]string{}, Taints: n.Spec.Taints, Resources: map[string]string{}}
			for k, v := range n.Labels {
				if k != corev1.LabelHostname {
					spec.Labels[k] = v
				}
			}
			for r, q := range n.Status.Allocatable {
				spec.Resources[string(r)] = q.String()
			}
			sb.Node(spec)
			logical = append(logical, n.Name)
		case "ResourceSlice":
			var s resourcev1.ResourceSlice
			if err := json.Unmarshal(data, &s); err != nil {
				t.Fatal(err)
			}
			sb.Slice(s.Spec.Driver, *s.Spec.NodeName, s.Spec.Devices...)
		}
	}
	waitForNodes(t, sb, logical)
	objs, err := harness.DecodeYAML(manifests)
	if err != nil {
		t.Fatal(err)
	}
	var workloads, others []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == "DeviceClass" {
			continue // the drivers' classes are installed once per cluster
		}
		if err := sb.Confine(o); err != nil {
			t.Fatal(err)
		}
		if harness.PodSpecPath(o.GetKind()) != nil {
			workloads = append(workloads, o)
		} else {
			others = append(others, o)
		}
	}
	if err := cluster.CreateAll(ctx, append(others, workloads...), harness.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var bound []corev1.Pod
	err = harness.Poll(ctx, harness.DefaultWait, fmt.Sprintf("%d pod(s) to be bound or reported unschedulable", pods), func(ctx context.Context) (bool, string, error) {
		list, err := cluster.Clientset.CoreV1().Pods(sb.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app notin (e2e-canary)"})
		if err != nil {
			return false, err.Error(), nil
		}
		bound = bound[:0]
		settled := 0
		var seen []string
		for _, p := range list.Items {
			seen = append(seen, p.Name+": "+harness.PodSummary(&p))
			c := harness.PodCondition(&p, corev1.PodScheduled)
			switch {
			case p.Spec.NodeName != "":
				settled++
				bound = append(bound, p)
			case c != nil && c.Status == corev1.ConditionFalse && (c.Reason == corev1.PodReasonUnschedulable || c.Reason == corev1.PodReasonSchedulerError):
				// A claim over 32 devices is a filter error, not "unschedulable".
				settled++
			}
		}
		return len(list.Items) == pods && settled == pods, strings.Join(seen, "; "), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, p := range bound {
		l := sb.Logical(p.Spec.NodeName)
		per[l[:strings.LastIndex(l, "-")]]++
	}
	out := []poolCount{}
	for p, n := range per {
		out = append(out, poolCount{p, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pool < out[j].Pool })
	return out
}

// waitForNodes waits until the scheduler has seen every node: a canary pod
// pinned to each is bound.
func waitForNodes(t *testing.T, sb *harness.Sandbox, nodes []string) {
	t.Helper()
	ctx := context.Background()
	for _, n := range nodes {
		pod := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "canary-" + n, "labels": map[string]any{"app": "e2e-canary"}},
			"spec": map[string]any{
				"nodeSelector": map[string]any{"kubernetes.io/hostname": sb.NodeName(n)},
				"tolerations":  []any{map[string]any{"operator": "Exists"}},
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
		if _, err := cluster.WaitPodScheduled(ctx, sb.Namespace, "canary-"+n, harness.DefaultWait); err != nil {
			t.Fatalf("the scheduler did not see node %s: %v", n, err)
		}
	}
}
