package rules

import (
	"context"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules/selector"
)

// Sample devices shaped like the real drivers' ResourceSlices
// (shared/reference/dra.md section 5).
type attrs map[resourcev1.QualifiedName]resourcev1.DeviceAttribute
type caps map[resourcev1.QualifiedName]resourcev1.DeviceCapacity

func s(v string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &v} }
func v(v string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{VersionValue: &v} }
func i(v int64) resourcev1.DeviceAttribute  { return resourcev1.DeviceAttribute{IntValue: &v} }
func q(v string) resourcev1.DeviceCapacity {
	return resourcev1.DeviceCapacity{Value: resource.MustParse(v)}
}
func dev(driver string, a attrs, c caps) selector.Device {
	return selector.Device{Driver: driver, Attributes: a, Capacity: c}
}

var (
	h100 = dev("gpu.nvidia.com", attrs{
		"type": s("gpu"), "uuid": s("GPU-1"), "productName": s("NVIDIA H100 80GB HBM3"), "brand": s("Tesla"),
		"architecture": s("Hopper"), "cudaComputeCapability": v("9.0.0"), "driverVersion": v("570.124.6"),
		"cudaDriverVersion": v("12.8.0"), "resource.kubernetes.io/pcieRoot": s("pci0000:00"),
	}, caps{"memory": q("81559Mi")})
	a100 = dev("gpu.nvidia.com", attrs{
		"type": s("gpu"), "productName": s("NVIDIA A100-SXM4-80GB"), "architecture": s("Ampere"),
		"cudaComputeCapability": v("8.0.0"), "driverVersion": v("550.54.15"), "cudaDriverVersion": v("12.4.0"),
	}, caps{"memory": q("81920Mi")})
	a10g = dev("gpu.nvidia.com", attrs{
		"type": s("gpu"), "productName": s("NVIDIA A10G"), "architecture": s("Ampere"), "cudaComputeCapability": v("8.6.0"),
	}, caps{"memory": q("23028Mi")})
	// An older driver version without architecture (guards must hold).
	bareGPU = dev("gpu.nvidia.com", attrs{"type": s("gpu")}, nil)
	migMe   = dev("gpu.nvidia.com", attrs{
		"type": s("mig"), "profile": s("1g.10gb+me"), "productName": s("NVIDIA A100-SXM4-80GB"), "parentUUID": s("GPU-2"),
	}, caps{"memory": q("9856Mi"), "multiprocessors": q("14")})
	mig1g = dev("gpu.nvidia.com", attrs{
		"type": s("mig"), "profile": s("1g.10gb"), "productName": s("NVIDIA A100-SXM4-80GB"),
	}, caps{"memory": q("9856Mi")})
	mig5gb = dev("gpu.nvidia.com", attrs{
		"type": s("mig"), "profile": s("1g.5gb"), "productName": s("NVIDIA A100-SXM4-40GB"),
	}, caps{"memory": q("4864Mi")})
	neuronDev = dev("neuron.aws.com", attrs{
		"deviceId": i(0), "instanceType": s("trn2.48xlarge"), "resourceType": s("neuron_device"),
		"resource.aws.com/devicegroup4_id": s("g4-0"),
	}, nil)
	neuronNode = dev("neuron.aws.com", attrs{"resourceType": s("neuron_node"), "instanceType": s("trn2u.48xlarge")}, nil)
	efaDev     = dev("dra.net", attrs{
		"dra.net/pciDevice": s("Elastic Fabric Adapter (EFA)"), "dra.net/rdma": {BoolValue: ptrTo(true)},
		"resource.kubernetes.io/pcieRoot": s("pci0000:00"),
	}, nil)
	enaDev   = dev("dra.net", attrs{"dra.net/pciDevice": s("Elastic Network Adapter (ENA)")}, nil)
	amdGPU   = dev("gpu.amd.com", attrs{"type": s("amdgpu"), "productName": s("AMD Instinct MI300X"), "partitionProfile": s("spx_nps1")}, caps{"memory": q("192Gi")})
	amdPart  = dev("gpu.amd.com", attrs{"type": s("amdgpu-partition"), "partitionProfile": s("cpx_nps4")}, nil)
	intelXe  = dev("gpu.intel.com", attrs{"driver": s("xe"), "model": s("Battlemage"), "family": s("Arc")}, caps{"millicores": q("1000")})
	intel915 = dev("gpu.intel.com", attrs{"driver": s("i915"), "model": s("Flex 170"), "family": s("Flex")}, nil)
	gaudi    = dev("gaudi.intel.com", attrs{"model": s("Gaudi3")}, nil)
	example  = dev("gpu.example.com", attrs{"index": i(0), "model": s("LATEST-GPU-MODEL"), "driverVersion": v("1.0.0")}, caps{"memory": q("80Gi")})
	tpu      = dev("tpu.google.com", attrs{"index": i(0), "tpuGen": s("v5litepod"), "accelerator": s("tpu-v5-lite-podslice")}, nil)
)

func ptrTo[T any](x T) *T { return &x }

// selects evaluates a decision the way the allocator does: the class's
// selectors (device.driver plus the rule's class selectors) and the request's
// selectors must all be true. A runtime error fails the test: it would fail
// the whole allocation.
func selects(t *testing.T, set *Set, d Decision, dv selector.Device) bool {
	t.Helper()
	var exprs []string
	exprs = append(exprs, "device.driver == "+celString(d.Driver))
	for _, r := range set.rules {
		if d.Rule != nil && r.ID == d.Rule.ID {
			exprs = append(exprs, r.ClassSelectors...)
		}
	}
	exprs = append(exprs, d.Selectors...)
	for _, x := range exprs {
		e, err := selector.Compile(x, selector.Features{})
		if err != nil {
			t.Fatalf("compile %q: %v", x, err)
		}
		ok, err := e.Matches(context.Background(), dv)
		if err != nil {
			t.Fatalf("evaluating %q on %+v: %v", x, dv.Attributes, err)
		}
		if !ok {
			return false
		}
	}
	return true
}

func nodeSel(key, val string) inventory.Hint {
	return inventory.Hint{Kind: inventory.HintNodeSelector, Key: key, Values: []string{val}}
}

func affinity(key, op string, vals ...string) inventory.Hint {
	return inventory.Hint{Kind: inventory.HintNodeAffinity, Key: key, Operator: op, Values: vals}
}

func TestSelectorsOnDevices(t *testing.T) {
	t.Parallel()
	set := Default()
	all := map[string]selector.Device{
		"h100": h100, "a100": a100, "a10g": a10g, "bareGPU": bareGPU, "migMe": migMe, "mig1g": mig1g, "mig5gb": mig5gb,
		"neuronDev": neuronDev, "neuronNode": neuronNode, "efa": efaDev, "ena": enaDev, "amdGPU": amdGPU, "amdPart": amdPart,
		"intelXe": intelXe, "intel915": intel915, "gaudi": gaudi, "example": example, "tpu": tpu,
	}
	tests := []struct {
		name     string
		resource string
		hints    []inventory.Hint
		want     []string // devices selected; every other sample must be rejected
	}{
		{name: "plain gpu", resource: "nvidia.com/gpu", want: []string{"h100", "a100", "a10g", "bareGPU"}},
		{name: "gfd product", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3")}, want: []string{"h100"}},
		{name: "gfd product list", resource: "nvidia.com/gpu", hints: []inventory.Hint{affinity("nvidia.com/gpu.product", "In", "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB")}, want: []string{"h100", "a100"}},
		{name: "gfd product NotIn", resource: "nvidia.com/gpu", hints: []inventory.Hint{affinity("nvidia.com/gpu.product", "NotIn", "NVIDIA-H100-80GB-HBM3")}, want: []string{"a100", "a10g", "bareGPU"}},
		{name: "gfd memory", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/gpu.memory", "81559")}, want: []string{"h100"}},
		{name: "gfd memory Gt", resource: "nvidia.com/gpu", hints: []inventory.Hint{affinity("nvidia.com/gpu.memory", "Gt", "40000")}, want: []string{"h100", "a100"}},
		{name: "gfd family", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/gpu.family", "ampere")}, want: []string{"a100", "a10g"}},
		{name: "gfd family ada", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/gpu.family", "ada-lovelace")}, want: nil},
		{name: "gfd compute major Gt", resource: "nvidia.com/gpu", hints: []inventory.Hint{affinity("nvidia.com/gpu.compute.major", "Gt", "8")}, want: []string{"h100"}},
		{name: "gfd compute major and minor", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/gpu.compute.major", "8"), nodeSel("nvidia.com/gpu.compute.minor", "6")}, want: []string{"a10g"}},
		{name: "gfd driver major", resource: "nvidia.com/gpu", hints: []inventory.Hint{affinity("nvidia.com/cuda.driver-version.major", "Gt", "560")}, want: []string{"h100"}},
		{name: "gfd driver full zero padded", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/cuda.driver-version.full", "570.124.06")}, want: []string{"h100"}},
		{name: "gfd cuda runtime", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/cuda.runtime-version.major", "12")}, want: []string{"h100", "a100"}},
		{name: "gpu present dropped", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/gpu.present", "true")}, want: []string{"h100", "a100", "a10g", "bareGPU"}},
		{name: "karpenter gpu name", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("karpenter.k8s.aws/instance-gpu-name", "a10g")}, want: []string{"a10g"}},
		{name: "karpenter gpu name a100", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("karpenter.k8s.aws/instance-gpu-name", "a100")}, want: []string{"a100"}},
		{name: "gke accelerator", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("cloud.google.com/gke-accelerator", "nvidia-h100-80gb")}, want: []string{"h100"}},
		{name: "mig mixed +me", resource: "nvidia.com/mig-1g.10gb.me", want: []string{"migMe"}},
		{name: "mig mixed", resource: "nvidia.com/mig-1g.10gb", want: []string{"mig1g"}},
		{name: "mig single", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb")}, want: []string{"mig5gb"}},
		{name: "mig single shared", resource: "nvidia.com/gpu", hints: []inventory.Hint{nodeSel("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED")}, want: []string{"mig5gb"}},
		{name: "mig config all-1g.10gb", resource: "nvidia.com/mig-1g.10gb", hints: []inventory.Hint{nodeSel("nvidia.com/mig.config", "all-1g.10gb")}, want: []string{"mig1g"}},
		{name: "gpu.shared", resource: "nvidia.com/gpu.shared", want: []string{"h100", "a100", "a10g", "bareGPU"}},
		{name: "neuron", resource: "aws.amazon.com/neuron", want: []string{"neuronDev"}},
		{name: "neuron instance type", resource: "aws.amazon.com/neuron", hints: []inventory.Hint{nodeSel("node.kubernetes.io/instance-type", "trn2.48xlarge")}, want: []string{"neuronDev"}},
		{name: "neuron other instance type", resource: "aws.amazon.com/neuron", hints: []inventory.Hint{nodeSel("node.kubernetes.io/instance-type", "trn1.32xlarge")}, want: nil},
		{name: "neuroncore", resource: "aws.amazon.com/neuroncore", want: []string{"neuronDev"}},
		{name: "efa", resource: "vpc.amazonaws.com/efa", want: []string{"efa"}},
		{name: "amd gpu", resource: "amd.com/gpu", want: []string{"amdGPU"}},
		{name: "amd partition", resource: "amd.com/cpx_nps4", want: []string{"amdPart"}},
		{name: "intel i915", resource: "gpu.intel.com/i915", want: []string{"intel915"}},
		{name: "intel xe", resource: "gpu.intel.com/xe", want: []string{"intelXe"}},
		{name: "gaudi", resource: "habana.ai/gaudi", want: []string{"gaudi"}},
		{name: "example", resource: "example.com/gpu", want: []string{"example"}},
		{name: "tpu", resource: "google.com/tpu", want: []string{"tpu"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := set.Resolve(Pod{Requests: []PodRequest{{Container: "c", Resource: tt.resource, Quantity: "1"}}, Hints: tt.hints},
				Options{Target: Version{1, 34}, AllowLossy: true})
			if err != nil {
				t.Fatal(err)
			}
			d := res.Decisions[0]
			if d.Status != Mappable && d.Status != Lossy {
				t.Fatalf("status %s: %s", d.Status, d.Reason)
			}
			for name, dv := range all {
				want := false
				for _, w := range tt.want {
					want = want || w == name
				}
				if got := selects(t, set, d, dv); got != want {
					t.Errorf("%s: selected = %v, want %v (selectors %q)", name, got, want, d.Selectors)
				}
			}
		})
	}
}
