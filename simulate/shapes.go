package simulate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Driver names of the reference DRA drivers (shared/reference/dra.md §5).
const (
	DriverNVIDIA = "gpu.nvidia.com"
	DriverNeuron = "neuron.aws.com"
	DriverDRANET = "dra.net"
	DriverTPU    = "tpu.google.com"
)

// Well-known node labels the shapes set.
const (
	LabelInstanceType = "node.kubernetes.io/instance-type"
	pcieRootAttr      = "resource.kubernetes.io/pcieRoot"
	pciBusIDAttr      = "resource.kubernetes.io/pciBusID"
	efaPCIDevice      = "Elastic Fabric Adapter (EFA)"
)

// GPU is an NVIDIA GPU model as NVML and GPU feature discovery report it.
type GPU struct {
	// Product is the NVML name (the DRA driver's productName); the GFD
	// label nvidia.com/gpu.product is it sanitised.
	Product string
	// Architecture is the NVML architecture name (Ampere, Hopper, ...);
	// Family the GFD nvidia.com/gpu.family value.
	Architecture, Family string
	// Compute is the CUDA compute capability, major.minor.
	Compute string
	// MemoryMiB is NVML's total memory (GFD nvidia.com/gpu.memory).
	MemoryMiB int64
	// MIG lists the MIG profiles the model has and how many fit one GPU
	// (NVIDIA MIG user guide, "Supported MIG Profiles"); nil when the
	// model has no MIG.
	MIG map[string]int
}

// Shape is a node type: what its device plugins advertise and what the
// reference DRA drivers publish on it. Built-in shapes are cloud instance
// types; an inventory can write one out in full (Custom).
type Shape struct {
	Name     string `json:"name"`
	Provider string `json:"provider"`
	// GPUs, EFA, Neuron and TPU describe the accelerators; the views
	// derive from them.
	GPUCount int  `json:"gpus,omitempty"`
	GPU      *GPU `json:"-"`
	// EFA is the number of EFA interfaces (vpc.amazonaws.com/efa).
	EFA int `json:"efa,omitempty"`
	// NeuronDevices and NeuronCores (per device, as the device plugin
	// counts them) for Trainium and Inferentia.
	NeuronDevices  int `json:"neuronDevices,omitempty"`
	NeuronCores    int `json:"neuronCoresPerDevice,omitempty"`
	TPUChips       int `json:"tpuChips,omitempty"`
	TPUAccelerator string
	TPUTopology    string
	// Labels are the node labels the cloud sets (instance type, GKE
	// accelerator); GFD labels are added for NVIDIA GPUs.
	Labels map[string]string `json:"-"`
	// Custom, when set, is a shape written out in full in an inventory:
	// its views are given, not derived.
	Custom *View `json:"-"`
	// Source names where the figures come from (docs/simulate.md).
	Source string `json:"source"`
}

// View is one node's device-relevant state in one world: the labels, the
// extended resources the device plugins advertise, and the devices the DRA
// drivers publish (per driver).
type View struct {
	Labels      map[string]string
	Allocatable map[string]int64
	Devices     map[string][]resourceapi.Device
}

// PoolOptions change both views of a shape the way the device plugin and
// the driver do.
type PoolOptions struct {
	// MIG is a mig-parted config "all-<profile>" (or a profile): every GPU
	// is split into that profile. The plugin advertises
	// nvidia.com/mig-<profile> (mixed strategy) or nvidia.com/gpu (single);
	// the driver publishes MIG devices.
	MIG         string
	MIGStrategy string
	// TimeSlicing is the device plugin's replicas (each GPU advertised N
	// times); the driver publishes shareable GPUs with N shares
	// (consumable shares, integer mode).
	TimeSlicing int
}

func mib(n int64) resource.Quantity { return *resource.NewQuantity(n<<20, resource.BinarySI) }

var (
	a100x40 = &GPU{Product: "NVIDIA A100-SXM4-40GB", Architecture: "Ampere", Family: "ampere", Compute: "8.0", MemoryMiB: 40960,
		MIG: map[string]int{"1g.5gb": 7, "2g.10gb": 3, "3g.20gb": 2, "4g.20gb": 1, "7g.40gb": 1}}
	h100x80 = &GPU{Product: "NVIDIA H100 80GB HBM3", Architecture: "Hopper", Family: "hopper", Compute: "9.0", MemoryMiB: 81559,
		MIG: map[string]int{"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}}
	h200 = &GPU{Product: "NVIDIA H200", Architecture: "Hopper", Family: "hopper", Compute: "9.0", MemoryMiB: 143771,
		MIG: map[string]int{"1g.18gb": 7, "1g.35gb": 4, "2g.35gb": 3, "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1}}
	gb200 = &GPU{Product: "NVIDIA GB200", Architecture: "Blackwell", Family: "blackwell", Compute: "10.0", MemoryMiB: 189471,
		MIG: map[string]int{"1g.23gb": 7, "1g.47gb": 4, "2g.47gb": 3, "3g.93gb": 2, "4g.93gb": 1, "7g.186gb": 1}}
	a10g = &GPU{Product: "NVIDIA A10G", Architecture: "Ampere", Family: "ampere", Compute: "8.6", MemoryMiB: 23028}
	l4   = &GPU{Product: "NVIDIA L4", Architecture: "Ada Lovelace", Family: "ada-lovelace", Compute: "8.9", MemoryMiB: 23034}
	l40s = &GPU{Product: "NVIDIA L40S", Architecture: "Ada Lovelace", Family: "ada-lovelace", Compute: "8.9", MemoryMiB: 46068}
)

const (
	srcAWSAccel  = "https://aws.amazon.com/ec2/instance-types/#Accelerated_Computing"
	srcAWSEFA    = "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html#efa-instance-types"
	srcNeuron    = "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/general/arch/neuron-hardware/"
	srcGCPGPU    = "https://cloud.google.com/compute/docs/gpus"
	srcGCPTPU    = "https://cloud.google.com/tpu/docs/v5e"
	srcAzureND   = "https://learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/ndh100v5-series"
	srcMIG       = "NVIDIA MIG user guide (Supported MIG Profiles)"
	srcReference = "shared/reference/dra.md §5, §6"
)

func src(parts ...string) string { return strings.Join(append(parts, srcReference), "; ") }

// builtin is the shapes catalogue, by name.
var builtin = map[string]*Shape{}

func init() {
	for _, s := range []*Shape{
		{Name: "p4d.24xlarge", Provider: "aws", GPUCount: 8, GPU: a100x40, EFA: 4, Source: src(srcAWSAccel, srcAWSEFA, srcMIG)},
		{Name: "p5.48xlarge", Provider: "aws", GPUCount: 8, GPU: h100x80, EFA: 32, Source: src(srcAWSAccel, srcAWSEFA, srcMIG)},
		{Name: "p5e.48xlarge", Provider: "aws", GPUCount: 8, GPU: h200, EFA: 32, Source: src(srcAWSAccel, srcAWSEFA, srcMIG)},
		{Name: "g5.xlarge", Provider: "aws", GPUCount: 1, GPU: a10g, Source: src(srcAWSAccel)},
		{Name: "g5.12xlarge", Provider: "aws", GPUCount: 4, GPU: a10g, EFA: 1, Source: src(srcAWSAccel, srcAWSEFA)},
		{Name: "g5.48xlarge", Provider: "aws", GPUCount: 8, GPU: a10g, EFA: 1, Source: src(srcAWSAccel, srcAWSEFA)},
		{Name: "g6.xlarge", Provider: "aws", GPUCount: 1, GPU: l4, Source: src(srcAWSAccel)},
		{Name: "g6e.12xlarge", Provider: "aws", GPUCount: 4, GPU: l40s, EFA: 1, Source: src(srcAWSAccel, srcAWSEFA)},
		{Name: "p6e-gb200.36xlarge", Provider: "aws", GPUCount: 4, GPU: gb200, EFA: 17, Source: src(srcAWSAccel, srcAWSEFA, srcMIG)},
		{Name: "trn1.32xlarge", Provider: "aws", NeuronDevices: 16, NeuronCores: 2, EFA: 8, Source: src(srcNeuron, srcAWSEFA)},
		{Name: "trn2.48xlarge", Provider: "aws", NeuronDevices: 16, NeuronCores: 4, EFA: 16, Source: src(srcNeuron, srcAWSEFA)},
		{Name: "inf2.48xlarge", Provider: "aws", NeuronDevices: 12, NeuronCores: 2, Source: src(srcNeuron)},
		{Name: "a2-highgpu-8g", Provider: "gcp", GPUCount: 8, GPU: a100x40, Labels: map[string]string{"cloud.google.com/gke-accelerator": "nvidia-tesla-a100"}, Source: src(srcGCPGPU, srcMIG)},
		{Name: "a3-highgpu-8g", Provider: "gcp", GPUCount: 8, GPU: h100x80, Labels: map[string]string{"cloud.google.com/gke-accelerator": "nvidia-h100-80gb"}, Source: src(srcGCPGPU, srcMIG)},
		{Name: "g2-standard-48", Provider: "gcp", GPUCount: 4, GPU: l4, Labels: map[string]string{"cloud.google.com/gke-accelerator": "nvidia-l4"}, Source: src(srcGCPGPU)},
		{Name: "ct5lp-hightpu-4t", Provider: "gcp", TPUChips: 4, TPUAccelerator: "tpu-v5-lite-podslice", TPUTopology: "2x2", Source: src(srcGCPTPU)},
		{Name: "Standard_ND96isr_H100_v5", Provider: "azure", GPUCount: 8, GPU: h100x80, Labels: map[string]string{"kubernetes.azure.com/accelerator": "nvidia"}, Source: src(srcAzureND, srcMIG)},
	} {
		builtin[s.Name] = s
	}
}

// Shapes returns the built-in shapes, sorted by provider and name.
func Shapes() []*Shape {
	out := make([]*Shape, 0, len(builtin))
	for _, s := range builtin {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LookupShape returns the built-in shape name.
func LookupShape(name string) (*Shape, bool) {
	s, ok := builtin[name]
	return s, ok
}

// Summary describes a shape in a line, for --list-shapes.
func (s *Shape) Summary() string {
	var parts []string
	if s.GPU != nil {
		parts = append(parts, fmt.Sprintf("%d x %s (%s, %d MiB)", s.GPUCount, s.GPU.Product, s.GPU.Architecture, s.GPU.MemoryMiB))
	}
	if s.NeuronDevices > 0 {
		parts = append(parts, fmt.Sprintf("%d Neuron devices x %d cores", s.NeuronDevices, s.NeuronCores))
	}
	if s.TPUChips > 0 {
		parts = append(parts, fmt.Sprintf("%d TPU chips (%s %s)", s.TPUChips, s.TPUAccelerator, s.TPUTopology))
	}
	if s.EFA > 0 {
		parts = append(parts, fmt.Sprintf("%d EFA", s.EFA))
	}
	if s.Custom != nil {
		parts = append(parts, "custom")
	}
	return strings.Join(parts, ", ")
}

// MIGProfiles lists the shape's MIG profiles, sorted.
func (s *Shape) MIGProfiles() []string {
	if s.GPU == nil {
		return nil
	}
	var out []string
	for p := range s.GPU.MIG {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// migProfile parses a pool's mig option: "all-1g.10gb" or "1g.10gb".
func migProfile(opt string) string { return strings.TrimPrefix(opt, "all-") }

// check reports options the shape cannot honour.
func (s *Shape) check(o PoolOptions) error {
	if o.MIG != "" {
		if s.GPU == nil || s.GPU.MIG == nil {
			return fmt.Errorf("shape %s has no MIG-capable GPU", s.Name)
		}
		if _, ok := s.GPU.MIG[migProfile(o.MIG)]; !ok {
			return fmt.Errorf("shape %s has no MIG profile %q (it has %s)", s.Name, migProfile(o.MIG), strings.Join(s.MIGProfiles(), ", "))
		}
		if o.TimeSlicing > 1 {
			return fmt.Errorf("mig and timeSlicing cannot be combined in one pool")
		}
	}
	switch o.MIGStrategy {
	case "", "mixed", "single":
	default:
		return fmt.Errorf("migStrategy %q: use mixed or single", o.MIGStrategy)
	}
	if o.TimeSlicing < 0 {
		return fmt.Errorf("timeSlicing must be positive")
	}
	if o.TimeSlicing > 1 && s.GPU == nil {
		return fmt.Errorf("shape %s has no GPU to time-slice", s.Name)
	}
	return nil
}

// sanitize makes an NVML name a GFD label value.
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), "-")
}

// PluginView is what the node looks like with device plugins: allocatable
// extended resources and the labels GFD and the cloud set.
func (s *Shape) PluginView(o PoolOptions) View {
	if s.Custom != nil {
		return View{Labels: s.Custom.Labels, Allocatable: s.Custom.Allocatable}
	}
	v := View{Labels: s.baseLabels(), Allocatable: map[string]int64{}}
	if g := s.GPU; g != nil {
		product := sanitize(g.Product)
		major, minor, _ := strings.Cut(g.Compute, ".")
		v.Labels["nvidia.com/gpu.present"] = "true"
		v.Labels["nvidia.com/gpu.count"] = strconv.Itoa(s.GPUCount)
		v.Labels["nvidia.com/gpu.family"] = g.Family
		v.Labels["nvidia.com/gpu.compute.major"] = major
		v.Labels["nvidia.com/gpu.compute.minor"] = minor
		v.Labels["nvidia.com/gpu.memory"] = strconv.FormatInt(g.MemoryMiB, 10)
		v.Labels["nvidia.com/mig.capable"] = strconv.FormatBool(g.MIG != nil)
		switch {
		case o.MIG != "":
			p := migProfile(o.MIG)
			n := int64(s.GPUCount * g.MIG[p])
			v.Labels["nvidia.com/mig.config"] = "all-" + p
			if o.MIGStrategy == "single" {
				v.Labels["nvidia.com/mig.strategy"] = "single"
				v.Labels["nvidia.com/gpu.product"] = product + "-MIG-" + p
				v.Labels["nvidia.com/gpu.count"] = strconv.FormatInt(n, 10)
				v.Allocatable["nvidia.com/gpu"] = n
			} else {
				v.Labels["nvidia.com/mig.strategy"] = "mixed"
				v.Labels["nvidia.com/gpu.product"] = product
				v.Labels["nvidia.com/mig-"+strings.ReplaceAll(p, "+", ".")+".count"] = strconv.FormatInt(n, 10)
				v.Allocatable["nvidia.com/mig-"+strings.ReplaceAll(p, "+", ".")] = n
			}
		case o.TimeSlicing > 1:
			v.Labels["nvidia.com/gpu.product"] = product + "-SHARED"
			v.Labels["nvidia.com/gpu.replicas"] = strconv.Itoa(o.TimeSlicing)
			v.Labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing"
			v.Allocatable["nvidia.com/gpu"] = int64(s.GPUCount * o.TimeSlicing)
		default:
			v.Labels["nvidia.com/gpu.product"] = product
			v.Labels["nvidia.com/gpu.replicas"] = "1"
			v.Allocatable["nvidia.com/gpu"] = int64(s.GPUCount)
		}
	}
	if s.NeuronDevices > 0 {
		v.Allocatable["aws.amazon.com/neuron"] = int64(s.NeuronDevices)
		v.Allocatable["aws.amazon.com/neurondevice"] = int64(s.NeuronDevices)
		v.Allocatable["aws.amazon.com/neuroncore"] = int64(s.NeuronDevices * s.NeuronCores)
	}
	if s.EFA > 0 {
		v.Allocatable["vpc.amazonaws.com/efa"] = int64(s.EFA)
	}
	if s.TPUChips > 0 {
		v.Allocatable["google.com/tpu"] = int64(s.TPUChips)
	}
	return v
}

func (s *Shape) baseLabels() map[string]string {
	l := map[string]string{LabelInstanceType: s.Name}
	for k, v := range s.Labels {
		l[k] = v
	}
	if s.TPUChips > 0 {
		l["cloud.google.com/gke-tpu-accelerator"] = s.TPUAccelerator
		l["cloud.google.com/gke-tpu-topology"] = s.TPUTopology
	}
	return l
}

// DRAView is what the node looks like with the DRA drivers: the devices
// each publishes, and the cloud's labels (GFD no longer runs; the
// device-plugin resources are gone).
func (s *Shape) DRAView(o PoolOptions) View {
	if s.Custom != nil {
		return View{Labels: s.Custom.Labels, Devices: s.Custom.Devices}
	}
	// GFD keeps running beside the driver (the GPU Operator deploys both),
	// so the node labels are the plugin view's.
	v := View{Labels: s.PluginView(o).Labels, Devices: map[string][]resourceapi.Device{}}
	if s.GPU != nil {
		v.Devices[DriverNVIDIA] = s.gpuDevices(o)
	}
	if s.NeuronDevices > 0 {
		v.Devices[DriverNeuron] = s.neuronDevices()
	}
	if s.EFA > 0 {
		v.Devices[DriverDRANET] = s.efaDevices()
	}
	if s.TPUChips > 0 {
		v.Devices[DriverTPU] = s.tpuDevices()
	}
	return v
}

// gpuDevices are the NVIDIA driver's devices: a GPU each, or its MIG
// partitions under o.MIG.
func (s *Shape) gpuDevices(o PoolOptions) []resourceapi.Device {
	g := s.GPU
	var devs []resourceapi.Device
	for i := range s.GPUCount {
		base := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"productName":           str(g.Product),
			"architecture":          str(g.Architecture),
			"brand":                 str("Nvidia"),
			"cudaComputeCapability": ver(g.Compute + ".0"),
			"driverVersion":         ver("580.95.5"),
			"cudaDriverVersion":     ver("13.0.0"),
			pcieRootAttr:            str(s.gpuRoot(i)),
		}
		if o.MIG != "" {
			devs = append(devs, s.migDevices(i, base, migProfile(o.MIG))...)
			continue
		}
		devs = append(devs, s.gpuDevice(i, base, o.TimeSlicing))
	}
	return devs
}

// migDevices are GPU i's partitions of profile p, with the GPU's attributes
// base.
func (s *Shape) migDevices(i int, base map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, p string) []resourceapi.Device {
	var devs []resourceapi.Device
	gi := migMemoryMiB(p)
	for k := range s.GPU.MIG[p] {
		a := clone(base)
		a["type"] = str("mig")
		a["profile"] = str(p)
		a["uuid"] = str(fmt.Sprintf("MIG-%s-%d-%d", s.Name, i, k))
		a["parentUUID"] = str(fmt.Sprintf("GPU-%s-%d", s.Name, i))
		devs = append(devs, resourceapi.Device{Name: fmt.Sprintf("gpu-%d-mig-%s-%d", i, strings.NewReplacer(".", "", "+", "").Replace(p), k),
			Attributes: a, Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: mib(gi)}}})
	}
	return devs
}

// gpuDevice is whole GPU i, with the attributes base; shared as
// consumable capacity when timeSlicing is over 1.
func (s *Shape) gpuDevice(i int, base map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, timeSlicing int) resourceapi.Device {
	g := s.GPU
	a := clone(base)
	a["type"] = str("gpu")
	a["uuid"] = str(fmt.Sprintf("GPU-%s-%d", s.Name, i))
	a[pciBusIDAttr] = str(fmt.Sprintf("0000:%02x:00.0", 0x10+i))
	d := resourceapi.Device{Name: fmt.Sprintf("gpu-%d", i), Attributes: a,
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: mib(g.MemoryMiB)}}}
	if timeSlicing > 1 {
		// Consumable shares, integer mode (dra.md §5.1.1).
		d.AllowMultipleAllocations = ptr(true)
		d.Capacity["memory"] = resourceapi.DeviceCapacity{Value: mib(g.MemoryMiB), RequestPolicy: &resourceapi.CapacityRequestPolicy{
			Default: ptr(resource.MustParse("0")), ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: ptr(resource.MustParse("0")), Max: ptr(mib(g.MemoryMiB)), Step: ptr(resource.MustParse("1Mi"))}}}
		n := resource.MustParse(strconv.Itoa(timeSlicing))
		d.Capacity["shares"] = resourceapi.DeviceCapacity{Value: n, RequestPolicy: &resourceapi.CapacityRequestPolicy{
			Default: ptr(resource.MustParse("1")), ValidRange: &resourceapi.CapacityRequestPolicyRange{Min: ptr(resource.MustParse("1")), Max: ptr(n), Step: ptr(resource.MustParse("1"))}}}
	}
	return d
}

// neuronDevices are the Neuron driver's devices, with their EFA groups.
func (s *Shape) neuronDevices() []resourceapi.Device {
	var devs []resourceapi.Device
	for i := range s.NeuronDevices {
		a := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"deviceId":     {IntValue: ptr(int64(i))},
			"instanceType": str(s.Name),
			"resourceType": str("neuron_device"),
		}
		if s.EFA > 0 {
			for k, g := range s.groups(i) {
				a[k] = str(g)
			}
		}
		devs = append(devs, resourceapi.Device{Name: fmt.Sprintf("neurondevice%d", i), Attributes: a})
	}
	return devs
}

// efaDevices are DRANET's EFA interfaces, placed beside the GPUs or
// Neuron devices they serve.
func (s *Shape) efaDevices() []resourceapi.Device {
	var devs []resourceapi.Device
	for i := range s.EFA {
		a := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"dra.net/pciDevice": str(efaPCIDevice),
			"dra.net/ifName":    str(fmt.Sprintf("rdmap%ds0", i)),
			"dra.net/rdma":      {BoolValue: ptr(true)},
		}
		switch {
		case s.GPU != nil:
			a[pcieRootAttr] = str(s.efaRoot(i))
		case s.NeuronDevices > 0:
			// EFA i sits with Neuron device i*devices/efa.
			for k, g := range s.groups(i * s.NeuronDevices / s.EFA) {
				a[k] = str(g)
			}
		}
		devs = append(devs, resourceapi.Device{Name: fmt.Sprintf("efa-%d", i), Attributes: a})
	}
	return devs
}

// tpuDevices are the TPU driver's chips.
func (s *Shape) tpuDevices() []resourceapi.Device {
	var devs []resourceapi.Device
	for i := range s.TPUChips {
		devs = append(devs, resourceapi.Device{Name: fmt.Sprintf("tpu-%d", i), Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"index": {IntValue: ptr(int64(i))}, "brand": str("Google"), "tpuGen": str("v5e"),
			"accelerator": str(s.TPUAccelerator), "topology": str(s.TPUTopology), "chipCount": {IntValue: ptr(int64(s.TPUChips))},
		}})
	}
	return devs
}

// gpuRoot is GPU i's PCIe root; efaRoot the root of EFA interface i: the
// interfaces are spread evenly over the GPUs' PCIe switches (p5: four per
// GPU, p4d: one per two GPUs).
func (s *Shape) gpuRoot(i int) string {
	if s.EFA > 0 && s.EFA < s.GPUCount {
		return fmt.Sprintf("pci0000:%02x", i*s.EFA/s.GPUCount)
	}
	return fmt.Sprintf("pci0000:%02x", i)
}

func (s *Shape) efaRoot(i int) string {
	if s.EFA >= s.GPUCount {
		return fmt.Sprintf("pci0000:%02x", i*s.GPUCount/s.EFA)
	}
	return fmt.Sprintf("pci0000:%02x", i)
}

// groups are the resource.aws.com/devicegroup<N>_id attributes of Neuron
// device i: devices i/N*N .. +N-1 are connected.
func (s *Shape) groups(i int) map[resourceapi.QualifiedName]string {
	out := map[resourceapi.QualifiedName]string{}
	for _, n := range []int{1, 4, 8, 16} {
		if n <= s.NeuronDevices {
			out[resourceapi.QualifiedName(fmt.Sprintf("resource.aws.com/devicegroup%d_id", n))] = fmt.Sprintf("g%d-%d", n, i/n)
		}
	}
	return out
}

// migMemoryMiB is the memory of a MIG profile: the number before "gb".
func migMemoryMiB(p string) int64 {
	_, rest, _ := strings.Cut(p, ".")
	gb, _, _ := strings.Cut(rest, "gb")
	n, _ := strconv.ParseInt(gb, 10, 64)
	return n * 1024
}

func str(s string) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{StringValue: &s} }
func ver(s string) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{VersionValue: &s} }
func ptr[T any](v T) *T                        { return &v }

func clone(m map[resourceapi.QualifiedName]resourceapi.DeviceAttribute) map[resourceapi.QualifiedName]resourceapi.DeviceAttribute {
	out := make(map[resourceapi.QualifiedName]resourceapi.DeviceAttribute, len(m)+4)
	for k, v := range m {
		out[k] = v
	}
	return out
}
