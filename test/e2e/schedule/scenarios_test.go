package schedule_test

import (
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

const (
	a100      = "NVIDIA A100-SXM4-80GB"
	h100      = "NVIDIA H100 80GB HBM3"
	a100Label = "NVIDIA-A100-SXM4-80GB" // GFD's nvidia.com/gpu.product: spaces -> "-"
	h100Label = "NVIDIA-H100-80GB-HBM3"
)

// gpuNode is a node with n full GPUs of one product: nvidia.com/gpu and GFD
// labels in the device-plugin world, a gpu.nvidia.com ResourceSlice in the DRA world.
func gpuNode(name string, n int, product, label string) nodeDef {
	var devs []resourcev1.Device
	for i := range n {
		g := harness.NvidiaGPU{Minor: i, ProductName: product}
		if product == h100 {
			g.Architecture, g.CUDAComputeCapability = "Hopper", "9.0.0"
		}
		devs = append(devs, g.Device())
	}
	return nodeDef{
		name:            name,
		pluginResources: map[string]string{"nvidia.com/gpu": strconv.Itoa(n)},
		pluginLabels: map[string]string{
			"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": label,
			"nvidia.com/gpu.count": strconv.Itoa(n), "nvidia.com/mig.strategy": "none",
		},
		slices: []sliceDef{{driver: harness.NvidiaDriver, devices: devs}},
	}
}

// migNode is an A100 with MIG enabled (mixed strategy), partitioned into n
// slices of one profile: nvidia.com/mig-<profile> in the device-plugin
// world, pre-created MIG devices (no full-GPU device) in the DRA world.
func migNode(name, profile string, n, giProfileID, placementStep int, memory string, sms int64) nodeDef {
	var devs []resourcev1.Device
	for i := range n {
		devs = append(devs, harness.NvidiaMIG{
			ParentMinor: 0, Profile: profile, GIProfileID: giProfileID, PlacementStart: i * placementStep,
			ProductName: a100, Memory: memory, Multiprocessors: sms,
		}.Device())
	}
	return nodeDef{
		name:            name,
		pluginResources: map[string]string{"nvidia.com/mig-" + profile: strconv.Itoa(n)},
		pluginLabels: map[string]string{
			"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": a100Label, "nvidia.com/mig.strategy": "mixed",
			"nvidia.com/mig-" + profile + ".count": strconv.Itoa(n),
		},
		slices: []sliceDef{{driver: harness.NvidiaDriver, devices: devs}},
	}
}

// trainiumNode is a Trainium node with n Neuron devices and n EFA interfaces
// in device groups of 4 (as on trn2.48xlarge): aws.amazon.com/neuron and
// vpc.amazonaws.com/efa in the device-plugin world, neuron.aws.com and dra.net
// slices whose devices carry resource.aws.com/devicegroup{1,4,8,16}_id in the DRA world.
func trainiumNode(name, instanceType string, neurons, efas int) nodeDef {
	groups := func(i int) map[int]string {
		g := map[int]string{}
		for _, k := range []int{1, 4, 8, 16} {
			g[k] = fmt.Sprintf("%s-dg%d-%d", name, k, i/k)
		}
		return g
	}
	var nd, ed []resourcev1.Device
	for i := range neurons {
		nd = append(nd, harness.NeuronDevice{ID: i, InstanceType: instanceType, Groups: groups(i)}.Device())
	}
	for i := range efas {
		ed = append(ed, harness.EFADevice{Index: i, Groups: groups(i)}.Device())
	}
	n := nodeDef{
		name:            name,
		labels:          map[string]string{"node.kubernetes.io/instance-type": instanceType},
		pluginResources: map[string]string{"aws.amazon.com/neuron": strconv.Itoa(neurons)},
		slices:          []sliceDef{{driver: harness.NeuronDriver, devices: nd}},
	}
	if efas > 0 {
		n.pluginResources["vpc.amazonaws.com/efa"] = strconv.Itoa(efas)
		n.slices = append(n.slices, sliceDef{driver: harness.DRANetDriver, devices: ed})
	}
	return n
}

// p5Node is a p5.48xlarge: 8 H100 GPUs and 32 EFA interfaces, four per
// GPU behind the GPU's PCIe root.
func p5Node(name string) nodeDef {
	n := gpuNode(name, 8, h100, h100Label)
	n.labels = map[string]string{"node.kubernetes.io/instance-type": "p5.48xlarge"}
	n.pluginResources["vpc.amazonaws.com/efa"] = "32"
	var efa []resourcev1.Device
	for i := range 32 {
		efa = append(efa, harness.EFADevice{Index: i, PCIeRoot: fmt.Sprintf("pci0000:%02x", i/4)}.Device())
	}
	n.slices = append(n.slices, sliceDef{driver: harness.DRANetDriver, devices: efa})
	return n
}

func cpuNode(name string) nodeDef { return nodeDef{name: name} }

func scenarios() []scenario {
	return []scenario{
		{
			name:    "single-gpu",
			nodes:   []nodeDef{cpuNode("cpu"), gpuNode("gpu1", 1, a100, a100Label)},
			want:    map[string][]string{"single": {"gpu1"}, "single-2": {pending}},
			devices: map[string]int{"single": 1, "single-2": 1},
		},
		{
			name:    "several-gpus",
			nodes:   []nodeDef{gpuNode("gpu2", 2, a100, a100Label), gpuNode("gpu8", 8, a100, a100Label)},
			want:    map[string][]string{"trainer": {"gpu8", "gpu8", pending}},
			devices: map[string]int{"trainer": 4},
			check:   distinctDevices,
		},
		{
			name:    "several-containers",
			nodes:   []nodeDef{gpuNode("gpu1", 1, a100, a100Label), gpuNode("gpu2", 2, a100, a100Label)},
			want:    map[string][]string{"pair": {"gpu2"}},
			devices: map[string]int{"pair": 2},
			check:   func(t *testing.T, p *corev1.Pod, c map[string][]harness.AllocatedDevice) { perContainer(t, p, c) },
		},
		{
			name:  "init-container",
			nodes: []nodeDef{cpuNode("cpu"), gpuNode("gpu1", 1, a100, a100Label)},
			want:  map[string][]string{"prep": {"gpu1"}},
			note: "with device plugins the scheduler counts max(init container, sum of containers) = 1 GPU and the kubelet " +
				"hands the init container's device on to the main container; a claim with one request per container " +
				"needs 2 devices at once. A (non-sidecar) init container can share the request of a later container instead.",
		},
		{
			name: "mig-profile",
			nodes: []nodeDef{
				gpuNode("full", 1, a100, a100Label),
				migNode("mig1g", "1g.10gb", 7, 19, 1, "9856Mi", 14),
				migNode("mig3g", "3g.40gb", 2, 9, 4, "40192Mi", 42),
			},
			want:    map[string][]string{"mig-small": {"mig1g"}},
			devices: map[string]int{"mig-small": 2},
			check: attrsEqual(map[string]string{
				"gpu.nvidia.com/type": "mig", "gpu.nvidia.com/profile": "1g.10gb", "gpu.nvidia.com/productName": a100,
			}),
		},
		{
			name:    "product-selector",
			nodes:   []nodeDef{gpuNode("a100", 2, a100, a100Label), gpuNode("h100", 2, h100, h100Label)},
			want:    map[string][]string{"h100": {"h100"}},
			devices: map[string]int{"h100": 1},
			check:   attrsEqual(map[string]string{"gpu.nvidia.com/type": "gpu", "gpu.nvidia.com/productName": h100}),
		},
		{
			name:    "neuron-efa",
			nodes:   []nodeDef{trainiumNode("trn2", "trn2.48xlarge", 16, 16), trainiumNode("inf2", "inf2.xlarge", 1, 0)},
			want:    map[string][]string{"llama": {"trn2", "trn2", "trn2", "trn2", pending}},
			devices: map[string]int{"llama": 8},
			check:   neuronEFAGroup,
		},
		{
			name:    "init-larger",
			nodes:   []nodeDef{cpuNode("cpu"), gpuNode("gpu2", 2, a100, a100Label)},
			want:    map[string][]string{"warm": {"gpu2"}},
			devices: map[string]int{"warm": 2},
			check:   distinctDevices,
			note: "an init container of 2 GPUs before two app containers of 1: the scheduler counts max(2, 1+1) = 2, " +
				"so the migrated pod must ask for 2 devices (the init container reusing the app containers'), not 4.",
		},
		{
			name:    "over-32",
			nodes:   []nodeDef{p5Node("p5"), gpuNode("a100", 8, a100, a100Label)},
			want:    map[string][]string{"p5-train": {"p5"}},
			devices: map[string]int{"p5-train": 40},
			check:   distinctDevices,
			note: "8 GPUs and 32 EFA interfaces in one pod: 40 devices, more than one claim may hold (32); " +
				"the migrated pod must spread them over claims or it never schedules.",
		},
		{
			name: "or-affinity",
			nodes: []nodeDef{gpuNode("l4", 1, "NVIDIA L4", "NVIDIA-L4"), gpuNode("t4", 1, "Tesla T4", "Tesla-T4"),
				gpuNode("a100", 2, a100, a100Label)},
			want:    map[string][]string{"either": {"l4", "t4", pending}},
			devices: map[string]int{"either": 1},
			note: "node affinity ORs two GPU products: the migrated claim must select either product, " +
				"and the affinity on GPU feature discovery labels must go (DRA nodes need not carry them).",
		},
		{
			name:  "no-match",
			nodes: []nodeDef{gpuNode("a100", 2, a100, a100Label)},
			want:  map[string][]string{"want-h100": {pending}},
		},
	}
}

// attrsEqual checks that every allocated device has the given attributes.
func attrsEqual(want map[string]string) func(*testing.T, *corev1.Pod, map[string][]harness.AllocatedDevice) {
	return func(t *testing.T, p *corev1.Pod, claims map[string][]harness.AllocatedDevice) {
		t.Helper()
		for claim, devs := range claims {
			for _, d := range devs {
				for k, v := range want {
					if d.Attributes[k] != v {
						t.Errorf("dra world: pod %s claim %s device %s: %s = %q, want %q", p.Name, claim, d.Device, k, d.Attributes[k], v)
					}
				}
			}
		}
	}
}

// distinctDevices checks that no device appears twice in a pod's allocation.
func distinctDevices(t *testing.T, p *corev1.Pod, claims map[string][]harness.AllocatedDevice) {
	t.Helper()
	seen := map[string]bool{}
	for _, devs := range claims {
		for _, d := range devs {
			id := d.Driver + "/" + d.Pool + "/" + d.Device
			if seen[id] {
				t.Errorf("dra world: pod %s got device %s twice", p.Name, id)
			}
			seen[id] = true
		}
	}
}

// perContainer checks that every container that asked for a GPU references
// exactly one device of its own: device-plugin devices were never shared
// between containers.
func perContainer(t *testing.T, p *corev1.Pod, claims map[string][]harness.AllocatedDevice) {
	t.Helper()
	owner := map[string]string{}
	for _, c := range p.Spec.Containers {
		var devs []harness.AllocatedDevice
		for _, ref := range c.Resources.Claims {
			for _, d := range claims[ref.Name] {
				if ref.Request == "" || d.Request == ref.Request || len(d.Request) > len(ref.Request) && d.Request[:len(ref.Request)+1] == ref.Request+"/" {
					devs = append(devs, d)
				}
			}
		}
		if len(c.Resources.Claims) == 0 {
			continue
		}
		if len(devs) != 1 {
			t.Errorf("dra world: container %s of pod %s sees %d device(s), want 1 (it asked for nvidia.com/gpu: 1)", c.Name, p.Name, len(devs))
		}
		for _, d := range devs {
			if prev, ok := owner[d.Device]; ok {
				t.Errorf("dra world: device %s is shared by containers %s and %s", d.Device, prev, c.Name)
			}
			owner[d.Device] = c.Name
		}
	}
}

// neuronEFAGroup checks the topology constraint: 4 Neuron devices and 4 EFA
// interfaces, all in one 4-device group (resource.aws.com/devicegroup4_id).
func neuronEFAGroup(t *testing.T, p *corev1.Pod, claims map[string][]harness.AllocatedDevice) {
	t.Helper()
	drivers := map[string]int{}
	groups := map[string]bool{}
	for _, devs := range claims {
		for _, d := range devs {
			drivers[d.Driver]++
			groups[d.Attributes[harness.AWSDomain+"/devicegroup4_id"]] = true
		}
	}
	if drivers[harness.NeuronDriver] != 4 || drivers[harness.DRANetDriver] != 4 {
		t.Errorf("dra world: pod %s got devices per driver %v, want 4 %s and 4 %s", p.Name, drivers, harness.NeuronDriver, harness.DRANetDriver)
	}
	if len(groups) != 1 {
		t.Errorf("dra world: pod %s got devices from %d device groups %v, want one (matchAttribute resource.aws.com/devicegroup4_id): %v",
			p.Name, len(groups), groups, deviceNames(claims))
	}
}
