package simulate

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rules"
)

func manifests(t *testing.T, text string) *Manifests {
	t.Helper()
	nodes, err := kio.FromBytes([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var docs []*inventory.Document
	for i, n := range nodes {
		docs = append(docs, &inventory.Document{Node: n, Origin: inventory.Origin{Path: "m.yaml", Index: i, Line: n.YNode().Line}})
	}
	m := Collect(docs, detect.Options{})
	if err := m.Diagnostics.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

const classesYAML = `
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]
  extendedResourceName: nvidia.com/gpu
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: mig.nvidia.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'"}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: neuron.aws.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'neuron.aws.com'"}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: efa.networking.k8s.aws}
spec:
  selectors: [{cel: {expression: "device.driver == 'dra.net' && device.attributes['dra.net'].pciDevice == 'Elastic Fabric Adapter (EFA)'"}}]
`

func run(t *testing.T, fleet, before, after string, target rules.Version) *Result {
	t.Helper()
	inv, err := ParseInventory("fleet.yaml", []byte(fleet))
	if err != nil {
		t.Fatal(err)
	}
	dcs := manifests(t, classesYAML).Classes
	bw, aw := Worlds(inv, target, dcs, dcs)
	r, err := Run(context.Background(), bw, aw, manifests(t, before), manifests(t, after))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func fleet(pools string) string {
	return "apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n" + pools
}

// pod is a Deployment of n replicas with the given pod spec lines.
func deploy(name string, n int, spec string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + "}\nspec:\n  replicas: " + itoa(n) + "\n  template:\n    spec:\n" + indent(spec, 6) + "\n"
}

func itoa(n int) string {
	return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+n/10%10)) + string(rune('0'+n%10)))
}

func indent(s string, n int) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i := range lines {
		lines[i] = strings.Repeat(" ", n) + lines[i]
	}
	return strings.Join(lines, "\n")
}

func rct(name, body string) string {
	return "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: " + name + "}\nspec:\n  spec:\n    devices:\n" + indent(body, 6) + "\n"
}

var v134, v136 = rules.Version{Major: 1, Minor: 34}, rules.Version{Major: 1, Minor: 36}

func TestScenarios(t *testing.T) {
	claimPod := func(tpl string) string {
		return "containers:\n- name: c\n  image: x\n  resources: {claims: [{name: d}]}\nresourceClaims: [{name: d, resourceClaimTemplateName: " + tpl + "}]"
	}
	for _, tc := range []struct {
		name          string
		fleet         string
		before, after string
		target        rules.Version
		// want: pods placed before and after, verdict, a reason substring.
		beforePods, afterPods int
		verdict               string
		reason                string
	}{{
		name:       "8-GPU pods on p5",
		fleet:      "- {name: train, shape: p5.48xlarge, count: 3}\n",
		before:     deploy("t", 4, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 8}}"),
		after:      deploy("t", 4, claimPod("gpus")) + rct("gpus", "requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}]"),
		beforePods: 3, afterPods: 3, verdict: NeverFit,
	}, {
		name:   "Neuron and EFA under one matchAttribute",
		fleet:  "- {name: trn, shape: trn2.48xlarge, count: 2}\n",
		before: deploy("n", 2, "containers:\n- name: c\n  image: x\n  resources: {limits: {aws.amazon.com/neuron: 16, vpc.amazonaws.com/efa: 16}}"),
		after: deploy("n", 2, claimPod("ne")) + rct("ne", `requests:
- {name: neuron, exactly: {deviceClassName: neuron.aws.com, count: 16}}
- {name: efa, exactly: {deviceClassName: efa.networking.k8s.aws, count: 16}}
constraints: [{requests: [neuron, efa], matchAttribute: resource.aws.com/devicegroup16_id}]`),
		beforePods: 2, afterPods: 2, verdict: Same,
	}, {
		name:   "matchAttribute that cannot be met",
		fleet:  "- {name: trn, shape: trn1.32xlarge, count: 1}\n",
		before: deploy("n", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {aws.amazon.com/neuron: 4, vpc.amazonaws.com/efa: 4}}"),
		after: deploy("n", 1, claimPod("ne")) + rct("ne", `requests:
- {name: neuron, exactly: {deviceClassName: neuron.aws.com, count: 4}}
- {name: efa, exactly: {deviceClassName: efa.networking.k8s.aws, count: 4}}
constraints: [{requests: [neuron, efa], matchAttribute: resource.aws.com/devicegroup4_id}]`),
		beforePods: 1, afterPods: 0, verdict: Worse, reason: "matchAttribute resource.aws.com/devicegroup4_id constraint (requests neuron, efa) cannot be met",
	}, {
		name:       "MIG profiles",
		fleet:      "- {name: mig, shape: p5.48xlarge, count: 1, mig: all-1g.10gb}\n",
		before:     deploy("m", 60, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/mig-1g.10gb: 1}}"),
		after:      deploy("m", 60, claimPod("mig")) + rct("mig", `requests: [{name: g, exactly: {deviceClassName: mig.nvidia.com, selectors: [{cel: {expression: 'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'}}]}}]`),
		beforePods: 56, afterPods: 56, verdict: NeverFit,
	}, {
		name:       "selector that matches nothing",
		fleet:      "- {name: train, shape: p5.48xlarge, count: 1}\n",
		before:     deploy("s", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 1}}"),
		after:      deploy("s", 1, claimPod("g")) + rct("g", `requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com, selectors: [{cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-80GB"'}}]}}]`),
		beforePods: 1, afterPods: 0, verdict: Worse, reason: "no device matches the selector of request gpu (class gpu.nvidia.com): `device.attributes[\"gpu.nvidia.com\"].productName == \"NVIDIA A100-SXM4-80GB\"`",
	}, {
		name:   "claim of more than 32 devices",
		fleet:  "- {name: train, shape: p5.48xlarge, count: 1}\n",
		before: deploy("b", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32}}"),
		after: deploy("b", 1, claimPod("ge")) + rct("ge", `requests:
- {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}
- {name: efa, exactly: {deviceClassName: efa.networking.k8s.aws, count: 32}}`),
		beforePods: 1, afterPods: 0, verdict: Worse, reason: "asks 40 devices, more than the 32 a claim may hold",
	}, {
		name:  "init container larger than the app containers",
		fleet: "- {name: train, shape: p5.48xlarge, count: 2}\n",
		// Effective request max(8, 1) = 8: one pod per node.
		before: deploy("i", 3, "initContainers:\n- name: warm\n  image: x\n  resources: {limits: {nvidia.com/gpu: 8}}\ncontainers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 1}}"),
		// Migrated with one claim of 9 devices: the init container's and the app's.
		after:      deploy("i", 3, claimPod("g")) + rct("g", `requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 9}}]`),
		beforePods: 2, afterPods: 0, verdict: Worse, reason: "a pod's claims ask 9 devices where the device-plugin pod asked 8",
	}, {
		name:   "a toleration that only the plugin nodes need",
		fleet:  "- {name: infer, shape: g5.12xlarge, count: 2, taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}\n",
		before: deploy("t", 8, "tolerations: [{key: nvidia.com/gpu, operator: Exists}]\ncontainers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 1}}"),
		// migrate keeps the toleration; without it the tainted DRA nodes refuse the pod.
		after:      deploy("t", 8, claimPod("g")) + rct("g", `requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com}}]`),
		beforePods: 8, afterPods: 0, verdict: Worse, reason: "does not tolerate the taint nvidia.com/gpu:NoSchedule of the DRA nodes",
	}, {
		name:       "class does not exist",
		fleet:      "- {name: train, shape: p5.48xlarge, count: 1}\n",
		before:     deploy("c", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 1}}"),
		after:      deploy("c", 1, claimPod("g")) + rct("g", `requests: [{name: g, exactly: {deviceClassName: h100.example.com}}]`),
		beforePods: 1, afterPods: 0, verdict: Worse, reason: "DeviceClass h100.example.com does not exist",
	}, {
		name:       "pool still on the device plugin",
		fleet:      "- {name: train, shape: p5.48xlarge, count: 1, mode: plugin}\n- {name: other, shape: g5.xlarge, count: 1}\n",
		before:     deploy("p", 1, "nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\ncontainers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 2}}"),
		after:      deploy("p", 1, "nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"+claimPod("g")) + rct("g", `requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]`),
		beforePods: 1, afterPods: 0, verdict: Worse, reason: "pool train is still on the device plugin",
	}, {
		name:       "node affinity excludes every DRA node",
		fleet:      "- {name: train, shape: p5.48xlarge, count: 1, mode: plugin}\n- {name: other, shape: g5.xlarge, count: 1}\n",
		before:     deploy("p", 1, "nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\ncontainers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 2}}"),
		after:      deploy("p", 1, "nodeSelector: {node.kubernetes.io/instance-type: p5.48xlarge}\n"+claimPod("g")) + rct("g", `requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]`),
		beforePods: 1, afterPods: 0, verdict: Worse, reason: "node affinity excludes every DRA node (node.kubernetes.io/instance-type=p5.48xlarge)",
	}, {
		name:   "unmigrated request served by DRAExtendedResource on 1.36",
		fleet:  "- {name: train, shape: p5.48xlarge, count: 1}\n",
		before: deploy("e", 2, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 4}}"),
		after:  deploy("e", 2, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 4}}"),
		target: v136, beforePods: 2, afterPods: 2, verdict: Same,
	}, {
		name:       "unmigrated request on 1.34 DRA nodes",
		fleet:      "- {name: train, shape: p5.48xlarge, count: 1}\n",
		before:     deploy("e", 2, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 4}}"),
		after:      deploy("e", 2, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 4}}"),
		beforePods: 2, afterPods: 0, verdict: Worse, reason: "still requests nvidia.com/gpu",
	}, {
		name:   "time-slicing becomes consumable shares on 1.36",
		fleet:  "- {name: ts, shape: g5.xlarge, count: 1, timeSlicing: 4}\n",
		before: deploy("s", 4, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 1}}"),
		after:  deploy("s", 4, claimPod("g")) + rct("g", `requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com}}]`),
		target: v136, beforePods: 4, afterPods: 4, verdict: Same,
	}, {
		name:       "time-slicing without consumable capacity (1.34)",
		fleet:      "- {name: ts, shape: g5.xlarge, count: 1, timeSlicing: 4}\n",
		before:     deploy("s", 4, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 1}}"),
		after:      deploy("s", 4, claimPod("g")) + rct("g", `requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com}}]`),
		beforePods: 4, afterPods: 1, verdict: Worse, reason: "the DRA nodes are full",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target == (rules.Version{}) {
				target = v134
			}
			r := run(t, fleet(tc.fleet), tc.before, tc.after, target)
			if len(r.Workloads) != 1 {
				t.Fatalf("workloads = %d, want 1", len(r.Workloads))
			}
			w := r.Workloads[0]
			if w.Before.Pods != tc.beforePods || w.After.Pods != tc.afterPods || w.Verdict != tc.verdict {
				t.Errorf("before %d, after %d, verdict %s; want %d, %d, %s (reasons %q)", w.Before.Pods, w.After.Pods, w.Verdict, tc.beforePods, tc.afterPods, tc.verdict, w.After.Reasons)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(w.After.Reasons, "\n"), tc.reason) {
				t.Errorf("reasons %q do not say %q", w.After.Reasons, tc.reason)
			}
			// Reasons say why not every pod fits: none when all do, some when not.
			for _, o := range []Outcome{w.Before, w.After} {
				if o.Reasons == nil || o.Fits != (len(o.Reasons) == 0) {
					t.Errorf("fits %v with reasons %#v (verdict %s)", o.Fits, o.Reasons, w.Verdict)
				}
			}
		})
	}
}

// Every template that does not fit whole says why, per world, counting the
// nodes that rejected it per reason (as the scheduler's FitError does);
// a template that fits has an empty list.
func TestReasonsPerNode(t *testing.T) {
	fl := fleet("- {name: tainted, shape: g5.12xlarge, count: 3, mode: plugin, taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n" +
		"- {name: small, shape: g5.xlarge, count: 1, mode: plugin}\n" +
		"- {name: labelled, shape: g5.xlarge, count: 2, mode: plugin, labels: {team: other}}\n")
	before := deploy("d", 1, "nodeSelector: {node.kubernetes.io/instance-type: g5.12xlarge}\ncontainers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 2}}") +
		"---\n" + deploy("fits", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 1}}") +
		"---\n" + deploy("two", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 2}}")
	r := run(t, fl, before, before, v134)
	if len(r.Workloads) != 3 {
		t.Fatalf("workloads %d", len(r.Workloads))
	}
	d, fits, two := r.Workloads[0], r.Workloads[1], r.Workloads[2]
	if d.Verdict != NeverFit {
		t.Fatalf("d: %s", d.Verdict)
	}
	want := []string{
		"3 nodes: node affinity/selector does not match (node.kubernetes.io/instance-type=g5.12xlarge)",
		"3 nodes: untolerated taint nvidia.com/gpu=present:NoSchedule",
	}
	if d := cmp.Diff(want, d.Before.Reasons); d != "" {
		t.Errorf("never-fit before reasons (-want +got):\n%s", d)
	}
	if fits.Verdict != Same || fits.Before.Reasons == nil || len(fits.Before.Reasons) != 0 || fits.After.Reasons == nil || len(fits.After.Reasons) != 0 {
		t.Errorf("a template that fits: %s, reasons %#v %#v", fits.Verdict, fits.Before.Reasons, fits.After.Reasons)
	}
	// Two GPUs: the untainted g5.xlarge nodes have one each (DRA: one device of the class).
	if two.Verdict != NeverFit {
		t.Fatalf("two: %s", two.Verdict)
	}
	wantTwo := []string{"3 nodes: insufficient nvidia.com/gpu (2 asked, 1 on the node)", "3 nodes: untolerated taint nvidia.com/gpu=present:NoSchedule"}
	if d := cmp.Diff(wantTwo, two.Before.Reasons); d != "" {
		t.Errorf("before reasons (-want +got):\n%s", d)
	}
}

// The DRA side names the class a node lacks or has too few of.
func TestReasonsPerNodeDRA(t *testing.T) {
	claimPod := "containers:\n- name: c\n  image: x\n  resources: {claims: [{name: d}]}\nresourceClaims: [{name: d, resourceClaimTemplateName: g}]"
	fl := fleet("- {name: small, shape: g5.xlarge, count: 2}\n- {name: trn, shape: trn1.32xlarge, count: 1}\n")
	before := deploy("d", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 2}}")
	after := deploy("d", 1, claimPod) + rct("g", "requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 2}}]")
	r := run(t, fl, before, after, v134)
	w := r.Workloads[0]
	if w.Verdict != NeverFit {
		t.Fatalf("verdict %s", w.Verdict)
	}
	want := []string{"2 nodes: 1 device of class gpu.nvidia.com (2 asked)", "1 node: no device of class gpu.nvidia.com"}
	if d := cmp.Diff(want, w.After.Reasons); d != "" {
		t.Errorf("after reasons (-want +got):\n%s", d)
	}
}

// A template whose after form asks no devices (migrate dropped a zero
// request, or --after has it without one) is matched, not missing: its
// pods are packed as they are. A template that asks only zero of a device
// asks nothing.
func TestAfterWithoutDevices(t *testing.T) {
	fl := fleet("- {name: p, shape: g5.xlarge, count: 2}\n")
	ds := func(res string) string {
		return "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n" + res
	}
	before := ds("        resources: {limits: {nvidia.com/gpu: 1}}\n") + "---\n" +
		deploy("head", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 0}}")
	after := ds("") + "---\n" + deploy("head", 1, "containers:\n- name: c\n  image: x")
	r := run(t, fl, before, after, v134)
	if len(r.Workloads) != 1 {
		t.Fatalf("workloads %+v, want the DaemonSet only", r.Workloads)
	}
	w := r.Workloads[0]
	if w.Verdict != Same || w.After.Pods != 2 || !w.Migrated || len(w.After.Reasons) != 0 {
		t.Errorf("verdict %s, after %d, migrated %v, reasons %q", w.Verdict, w.After.Pods, w.Migrated, w.After.Reasons)
	}
}

// Pods per template for the kinds detection knows, as their controllers
// make them.
func TestPodsPerKind(t *testing.T) {
	gpu := "containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]"
	m := manifests(t, `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
    leaderTemplate: {spec: {`+gpu+`}}
    workerTemplate: {spec: {`+gpu+`}}
---
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: w
    replicas: 3
    template: {spec: {parallelism: 4, completions: 2, template: {spec: {`+gpu+`}}}}
---
`+mpiJob(gpu, gpu, 5)+`---
apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: ray}
spec:
  headGroupSpec: {template: {spec: {`+gpu+`}}}
  workerGroupSpecs:
  - {groupName: g, replicas: 2, numOfHosts: 4, template: {spec: {`+gpu+`}}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: sts}
spec: {template: {spec: {`+gpu+`}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: job}
spec: {parallelism: 6, completions: 3, template: {spec: {`+gpu+`}}}
`)
	got := map[string]int{}
	for _, tp := range m.Templates {
		got[tp.Kind+" "+tp.PodTemplatePath] = tp.Pods
	}
	want := map[string]int{
		"LeaderWorkerSet spec.leaderWorkerTemplate.leaderTemplate.spec":  2,
		"LeaderWorkerSet spec.leaderWorkerTemplate.workerTemplate.spec":  6,
		"JobSet spec.replicatedJobs[name=w].template.spec.template.spec": 6,
		"MPIJob spec.mpiReplicaSpecs.Launcher.template.spec":             1,
		"MPIJob spec.mpiReplicaSpecs.Worker.template.spec":               5,
		"RayCluster spec.headGroupSpec.template.spec":                    1,
		"RayCluster spec.workerGroupSpecs[groupName=g].template.spec":    8,
		"StatefulSet spec.template.spec":                                 1,
		"Job spec.template.spec":                                         3,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("pods (-want +got):\n%s", d)
	}
}

// A quantity left as a placeholder is input simulate cannot judge: the
// template is skipped with the reason, not an error; the rest is simulated.
func TestPlaceholderSkipped(t *testing.T) {
	docs := ""
	for i, q := range []string{"$GPU_PER_NODE", "${N}", "'{{ .Values.gpus }}'"} {
		docs += deploy("p"+itoa(i), 1, "containers:\n- name: c\n  image: x\n  resources:\n    limits:\n      nvidia.com/gpu: "+q) + "---\n"
	}
	docs += deploy("ok", 1, "containers:\n- name: c\n  image: x\n  resources: {limits: {nvidia.com/gpu: 1}}")
	m := manifests(t, docs) // fails on any error diagnostic
	if len(m.Templates) != 1 || len(m.Skipped) != 3 {
		t.Fatalf("templates %d, skipped %+v", len(m.Templates), m.Skipped)
	}
	s := m.Skipped[0]
	if s.Name != "p00" || s.PodTemplatePath != "spec.template.spec" || s.Line == 0 ||
		s.Reason != "quantity is a placeholder: render it first (nvidia.com/gpu: $GPU_PER_NODE in container c)" {
		t.Errorf("skip %+v", s)
	}
	r := run(t, fleet("- {name: p, shape: g5.xlarge, count: 1, mode: plugin}\n"), docs, docs, v134)
	if len(r.Workloads) != 1 || len(r.Skipped) != 3 || r.Worse() {
		t.Errorf("workloads %d, skipped %d, worse %v", len(r.Workloads), len(r.Skipped), r.Worse())
	}
}

// Groups that schedule together fit whole or not at all: a LeaderWorkerSet
// group (leader and size-1 workers), an MPIJob.
func TestGangs(t *testing.T) {
	gpu := func(n int) string {
		return "containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: " + itoa(n) + "}}}]"
	}
	// Three p5 nodes of 8 GPUs; LeaderWorkerSet groups of 5 pods of 4 GPUs.
	lws := `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 5
    leaderTemplate: {spec: {` + gpu(4) + `}}
    workerTemplate: {spec: {` + gpu(4) + `}}
---
` + mpiJob(gpu(1), gpu(8), 3)
	r := run(t, fleet("- {name: p, shape: p5.48xlarge, count: 3, mode: plugin}\n"), lws, lws, v134)
	got := map[string]string{}
	for _, w := range r.Workloads {
		got[w.Kind+" "+w.PodTemplatePath] = fmt.Sprintf("%d/%d %s", w.Before.Pods, w.Pods, w.Verdict)
	}
	want := map[string]string{
		// 24 GPUs: one group of 5 pods of 4 GPUs (20); the second group does not fit whole.
		"LeaderWorkerSet spec.leaderWorkerTemplate.leaderTemplate.spec": "1/2 never-fit",
		"LeaderWorkerSet spec.leaderWorkerTemplate.workerTemplate.spec": "4/8 never-fit",
		// 4 GPUs left: the launcher fits, the workers do not, so neither runs.
		"MPIJob spec.mpiReplicaSpecs.Launcher.template.spec": "0/1 never-fit",
		"MPIJob spec.mpiReplicaSpecs.Worker.template.spec":   "0/3 never-fit",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, w := range r.Workloads {
		if w.Kind == "MPIJob" && !strings.Contains(strings.Join(w.Before.Reasons, "\n"), "the group schedules whole or not at all") {
			t.Errorf("%s reasons %q", w.PodTemplatePath, w.Before.Reasons)
		}
	}
	// What the failed group took was given back: a later Deployment fits on it.
	r = run(t, fleet("- {name: p, shape: p5.48xlarge, count: 1, mode: plugin}\n"), strings.SplitN(lws, "---\n", 2)[1]+"---\n"+deploy("d", 1, gpu(8)), "", v134)
	if w := r.Workloads[len(r.Workloads)-1]; w.Name != "d" || w.Before.Pods != 1 {
		t.Errorf("after a failed group: %+v", w)
	}
}

// mpiJob is an MPIJob named mpi of a launcher and workers with these pod specs.
func mpiJob(launcher, worker string, workers int) string {
	return "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: mpi}\nspec:\n  mpiReplicaSpecs:\n" +
		"    Launcher: {replicas: 1, template: {spec: {" + launcher + "}}}\n    Worker: {replicas: " + itoa(workers) + ", template: {spec: {" + worker + "}}}\n"
}
