package harness

import (
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Driver and DeviceClass names of the real DRA drivers that replace the
// device plugins kubedra migrates from (../shared/reference/dra.md §5).
const (
	NvidiaDriver    = "gpu.nvidia.com"
	NeuronDriver    = "neuron.aws.com"
	DRANetDriver    = "dra.net"
	GPUClass        = "gpu.nvidia.com"
	MIGClass        = "mig.nvidia.com"
	NeuronClass     = "neuron.aws.com"
	EFAClass        = "efa.networking.k8s.aws"
	EFAPCIDevice    = "Elastic Fabric Adapter (EFA)"
	StandardDomain  = "resource.kubernetes.io"
	AWSDomain       = "resource.aws.com"
	PCIeRootAttr    = StandardDomain + "/pcieRoot"
	NvidiaGPUDomain = NvidiaDriver
)

// DeviceClasses returns the DeviceClasses the drivers' Helm charts install:
// gpu.nvidia.com and mig.nvidia.com (dra-driver-nvidia-gpu chart; the GPU
// class maps the extended resource nvidia.com/gpu when rendered for
// resource.k8s.io/v1, a field the API server drops where DRAExtendedResource
// is off), neuron.aws.com (Neuron Helm chart) and efa.networking.k8s.aws
// (aws-dranet chart), with their selectors.
func DeviceClasses() []*resourcev1.DeviceClass {
	class := func(name, expr string, ext string) *resourcev1.DeviceClass {
		dc := &resourcev1.DeviceClass{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
				CEL: &resourcev1.CELDeviceSelector{Expression: expr},
			}}},
		}
		if ext != "" {
			dc.Spec.ExtendedResourceName = &ext
		}
		return dc
	}
	return []*resourcev1.DeviceClass{
		class(GPUClass, `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`, "nvidia.com/gpu"),
		class(MIGClass, `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'`, ""),
		class(NeuronClass, `device.driver == 'neuron.aws.com'`, ""),
		class(EFAClass, "device.driver == \"dra.net\" &&\ndevice.attributes[\"dra.net\"].pciDevice == 'Elastic Fabric Adapter (EFA)'\n", ""),
	}
}

// NvidiaGPU is a full GPU as the NVIDIA DRA driver publishes it (MIG disabled).
type NvidiaGPU struct {
	// Minor is the GPU's minor number; the device is named gpu-<Minor>.
	Minor int
	// ProductName is the raw NVML name, e.g. "NVIDIA A100-SXM4-80GB".
	ProductName string
	// Architecture, e.g. "Ampere" or "Hopper"; default "Ampere".
	Architecture string
	// Memory capacity, e.g. "80Gi"; default "80Gi".
	Memory string
	// CUDAComputeCapability as a semver, default "8.0.0".
	CUDAComputeCapability string
	// UUID; default derived from the node-independent Minor and ProductName.
	UUID string
	// PCIeRoot (resource.kubernetes.io/pcieRoot); default "pci0000:<minor>".
	PCIeRoot string
}

// Device returns the resource.k8s.io/v1 Device with the driver's attributes:
// type, uuid, productName, brand, architecture, cudaComputeCapability,
// driverVersion, cudaDriverVersion, resource.kubernetes.io/pciBusID and
// pcieRoot; capacity memory.
func (g NvidiaGPU) Device() resourcev1.Device {
	if g.Architecture == "" {
		g.Architecture = "Ampere"
	}
	if g.Memory == "" {
		g.Memory = "80Gi"
	}
	if g.CUDAComputeCapability == "" {
		g.CUDAComputeCapability = "8.0.0"
	}
	if g.UUID == "" {
		g.UUID = fakeUUID("GPU", g.ProductName, g.Minor)
	}
	if g.PCIeRoot == "" {
		g.PCIeRoot = fmt.Sprintf("pci0000:%02x", g.Minor)
	}
	return resourcev1.Device{
		Name: fmt.Sprintf("gpu-%d", g.Minor),
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type":                       str("gpu"),
			"uuid":                       str(g.UUID),
			"productName":                str(g.ProductName),
			"brand":                      str("Nvidia"),
			"architecture":               str(g.Architecture),
			"cudaComputeCapability":      ver(g.CUDAComputeCapability),
			"driverVersion":              ver("570.124.6"),
			"cudaDriverVersion":          ver("12.8.0"),
			StandardDomain + "/pciBusID": str(fmt.Sprintf("0000:%02x:00.0", 0x10+g.Minor)),
			PCIeRootAttr:                 str(g.PCIeRoot),
		},
		Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
			"memory": {Value: resource.MustParse(g.Memory)},
		},
	}
}

// NvidiaMIG is a pre-created MIG device (static MIG, driver gate DynamicMIG
// off): the parent GPU is then published only through its MIG devices.
type NvidiaMIG struct {
	// ParentMinor is the parent GPU's minor number.
	ParentMinor int
	// Profile, e.g. "1g.10gb" or "3g.40gb".
	Profile string
	// GIProfileID and PlacementStart make the device name unique per parent.
	GIProfileID, PlacementStart int
	// ProductName of the parent, e.g. "NVIDIA A100-SXM4-80GB".
	ProductName string
	// Memory capacity, e.g. "9856Mi"; Multiprocessors, e.g. 14.
	Memory          string
	Multiprocessors int64
	// PCIeRoot of the parent; default "pci0000:<parent minor>".
	PCIeRoot string
}

// Device returns the MIG device as the driver names and describes it
// (gpu-<parent>-mig-<profile without dots>-<giProfileId>-<placementStart>).
func (m NvidiaMIG) Device() resourcev1.Device {
	if m.PCIeRoot == "" {
		m.PCIeRoot = fmt.Sprintf("pci0000:%02x", m.ParentMinor)
	}
	if m.Memory == "" {
		m.Memory = "9856Mi"
	}
	if m.Multiprocessors == 0 {
		m.Multiprocessors = 14
	}
	name := fmt.Sprintf("gpu-%d-mig-%s-%d-%d", m.ParentMinor, strings.NewReplacer(".", "", "+", "").Replace(m.Profile), m.GIProfileID, m.PlacementStart)
	return resourcev1.Device{
		Name: name,
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type":                  str("mig"),
			"uuid":                  str(fakeUUID("MIG", m.ProductName+m.Profile, m.ParentMinor*100+m.PlacementStart)),
			"parentUUID":            str(fakeUUID("GPU", m.ProductName, m.ParentMinor)),
			"profile":               str(m.Profile),
			"productName":           str(m.ProductName),
			"brand":                 str("Nvidia"),
			"architecture":          str("Ampere"),
			"cudaComputeCapability": ver("8.0.0"),
			"driverVersion":         ver("570.124.6"),
			"cudaDriverVersion":     ver("12.8.0"),
			PCIeRootAttr:            str(m.PCIeRoot),
		},
		Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
			"memory":          {Value: resource.MustParse(m.Memory)},
			"multiprocessors": {Value: *resource.NewQuantity(m.Multiprocessors, resource.DecimalSI)},
			"copyEngines":     {Value: resource.MustParse("1")},
			"decoders":        {Value: resource.MustParse("0")},
			"encoders":        {Value: resource.MustParse("0")},
			"jpegEngines":     {Value: resource.MustParse("0")},
			"ofaEngines":      {Value: resource.MustParse("0")},
			resourcev1.QualifiedName(fmt.Sprintf("memorySlice%d", m.PlacementStart)): {Value: resource.MustParse("1")},
		},
	}
}

// NeuronDevice is one AWS Neuron device as the Neuron DRA driver publishes it.
type NeuronDevice struct {
	// ID is the deviceId; the device is named neurondevice<ID>.
	ID int
	// InstanceType, e.g. "trn2.48xlarge".
	InstanceType string
	// Groups are the EFA-topology device groups: Groups[k] is the value of
	// resource.aws.com/devicegroup<k>_id for k in 1, 4, 8, 16 (set those you need).
	Groups map[int]string
}

// Device returns the Neuron device with deviceId, instanceType, resourceType,
// neuronDriverVersion, draDriverVersion and the devicegroup<k>_id attributes.
func (n NeuronDevice) Device() resourcev1.Device {
	attrs := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		"deviceId":            intAttr(int64(n.ID)),
		"instanceType":        str(n.InstanceType),
		"resourceType":        str("neuron_device"),
		"neuronDriverVersion": str("2.24.7.0"),
		"draDriverVersion":    ver("1.0.0"),
	}
	for k, v := range n.Groups {
		attrs[resourcev1.QualifiedName(fmt.Sprintf("%s/devicegroup%d_id", AWSDomain, k))] = str(v)
	}
	return resourcev1.Device{Name: fmt.Sprintf("neurondevice%d", n.ID), Attributes: attrs}
}

// EFADevice is an EFA interface as DRANET (driver dra.net) publishes it.
type EFADevice struct {
	// Index makes names and PCI addresses unique on the node.
	Index int
	// PCIeRoot (resource.kubernetes.io/pcieRoot), e.g. the GPU's root for alignment.
	PCIeRoot string
	// Groups as for NeuronDevice: on Trainium/Inferentia instances EFA devices
	// carry the same resource.aws.com/devicegroup<k>_id keys as the Neuron devices.
	Groups map[int]string
}

// Device returns the EFA device with DRANET's dra.net/* attributes
// (pciDevice "Elastic Fabric Adapter (EFA)", rdma, ifName, ...) plus pcieRoot
// and device groups.
func (e EFADevice) Device() resourcev1.Device {
	pci := fmt.Sprintf("0000:%02x:00.0", 0x30+e.Index)
	attrs := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
		"dra.net/ifName":     str(fmt.Sprintf("rdmap%ds0", 0x30+e.Index)),
		"dra.net/pciAddress": str(pci),
		"dra.net/pciVendor":  str("Amazon.com, Inc."),
		"dra.net/pciDevice":  str(EFAPCIDevice),
		"dra.net/numaNode":   intAttr(int64(e.Index % 2)),
		"dra.net/rdma":       boolAttr(true),
		"dra.net/sriov":      boolAttr(false),
		"dra.net/virtual":    boolAttr(false),
		"dra.net/type":       str("device"),
	}
	if e.PCIeRoot != "" {
		attrs[PCIeRootAttr] = str(e.PCIeRoot)
	}
	for k, v := range e.Groups {
		attrs[resourcev1.QualifiedName(fmt.Sprintf("%s/devicegroup%d_id", AWSDomain, k))] = str(v)
	}
	return resourcev1.Device{Name: "pci-" + strings.NewReplacer(":", "-", ".", "-").Replace(pci), Attributes: attrs}
}

// Slice returns the ResourceSlice a driver publishes for one node: one pool
// named after the node, generation 1, one slice.
func Slice(driver, node string, devices ...resourcev1.Device) *resourcev1.ResourceSlice {
	return &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + strings.ReplaceAll(driver, ".", "-")},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   driver,
			NodeName: &node,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices:  devices,
		},
	}
}

func fakeUUID(kind, seed string, n int) string {
	var h uint32 = 2166136261
	for _, c := range []byte(seed) {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("%s-%08x-%04x-4000-8000-%012x", kind, h, n&0xffff, uint64(h)*uint64(n+1)&0xffffffffffff)
}

func str(s string) resourcev1.DeviceAttribute    { return resourcev1.DeviceAttribute{StringValue: &s} }
func ver(s string) resourcev1.DeviceAttribute    { return resourcev1.DeviceAttribute{VersionValue: &s} }
func intAttr(i int64) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{IntValue: &i} }
func boolAttr(b bool) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{BoolValue: &b} }
