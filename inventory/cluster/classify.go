package cluster

import (
	"path"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Kubelet directories (reference dra.md §6.1): device plugins register
// through the first; DRA kubelet plugins (and CSI drivers) through the others.
const (
	DevicePluginDir    = "/var/lib/kubelet/device-plugins"
	PluginsDir         = "/var/lib/kubelet/plugins"
	PluginsRegistryDir = "/var/lib/kubelet/plugins_registry"
)

// signature identifies device software by image, label or name.
type signature struct {
	role   Role
	family string
	// image is a substring of the image reference (repository part).
	image string
	// label is key=value; name an exact DaemonSet name.
	label string
	name  string
}

// signatures come from dra.md §5 and §6.1. Helm releases rename DaemonSets,
// so images and labels come first; names are the last resort.
var signatures = []signature{
	// device plugins
	{role: DevicePlugin, family: "nvidia", image: "nvidia/k8s-device-plugin"},
	{role: DevicePlugin, family: "nvidia", label: "name=nvidia-device-plugin-ds"},
	{role: DevicePlugin, family: "nvidia", label: "app.kubernetes.io/name=nvidia-device-plugin"},
	{role: DevicePlugin, family: "nvidia", label: "app=nvidia-device-plugin-daemonset"},
	{role: DevicePlugin, family: "nvidia", name: "nvidia-device-plugin-daemonset"},
	{role: DevicePlugin, family: "neuron", image: "neuron/neuron-device-plugin"},
	{role: DevicePlugin, family: "neuron", label: "name=neuron-device-plugin-ds"},
	{role: DevicePlugin, family: "neuron", name: "neuron-device-plugin-daemonset"},
	{role: DevicePlugin, family: "neuron", name: "neuron-device-plugin"},
	{role: DevicePlugin, family: "efa", image: "eks/aws-efa-k8s-device-plugin"},
	{role: DevicePlugin, family: "efa", label: "name=aws-efa-k8s-device-plugin"},
	{role: DevicePlugin, family: "efa", label: "app.kubernetes.io/name=aws-efa-k8s-device-plugin"},
	{role: DevicePlugin, family: "efa", name: "aws-efa-k8s-device-plugin-daemonset"},
	{role: DevicePlugin, family: "amd", image: "rocm/k8s-device-plugin"},
	{role: DevicePlugin, family: "amd", label: "name=amdgpu-dp-ds"},
	{role: DevicePlugin, family: "amd", name: "amdgpu-device-plugin-daemonset"},
	{role: DevicePlugin, family: "intel-gpu", image: "intel/intel-gpu-plugin"},
	{role: DevicePlugin, family: "intel-gpu", label: "app=intel-gpu-plugin"},
	{role: DevicePlugin, family: "intel-gpu", name: "intel-gpu-plugin"},
	{role: DevicePlugin, family: "gaudi", label: "name=habanalabs-device-plugin-ds"},
	{role: DevicePlugin, family: "gaudi", name: "habanalabs-device-plugin-daemonset"},
	// DRA kubelet plugins
	{role: DRADriver, family: "nvidia", image: "k8s-dra-driver-gpu"},
	{role: DRADriver, family: "nvidia", image: "dra-driver-nvidia-gpu"},
	{role: DRADriver, family: "nvidia", label: "app.kubernetes.io/name=dra-driver-nvidia-gpu"},
	{role: DRADriver, family: "nvidia", label: "app.kubernetes.io/name=nvidia-dra-driver-gpu"},
	{role: DRADriver, family: "neuron", image: "neuron-dra-driver"},
	{role: DRADriver, family: "amd", image: "k8s-gpu-dra-driver"},
	{role: DRADriver, family: "intel-gpu", image: "intel-gpu-resource-driver"},
	{role: DRADriver, family: "gaudi", image: "intel-gaudi-resource-driver"},
	{role: DRADriver, family: "efa", image: "dranet"},
	{role: DRADriver, family: "example", image: "dra-example-driver"},
}

// Classification is what ClassifyPod found.
type Classification struct {
	Role     Role
	Family   string
	Evidence string
}

// ClassifyPod recognises a device plugin or DRA kubelet plugin from a pod
// spec, its labels and its owning DaemonSet's name ("" when none). It
// returns ok=false for other pods. Signatures (image, label, name) win over
// hostPath mounts; a pod mounting only the kubelet plugin directories is a
// DRA driver only when its name or image says so (CSI drivers mount them
// too).
func ClassifyPod(spec *corev1.PodSpec, labels map[string]string, name string) (Classification, bool) {
	images := imagesOf(spec)
	// GPU feature discovery ships in the device plugin's image (and Helm
	// labels) but serves no devices; it may run next to a DRA driver.
	if featureDiscovery(spec, name) {
		return Classification{}, false
	}
	for _, s := range signatures {
		switch {
		case s.image != "":
			for _, img := range images {
				if strings.Contains(imageRepo(img), s.image) {
					return Classification{s.role, s.family, "image " + img}, true
				}
			}
		case s.label != "":
			k, v, _ := strings.Cut(s.label, "=")
			if labels[k] == v {
				return Classification{s.role, s.family, "label " + s.label}, true
			}
		case s.name != "":
			if name == s.name {
				return Classification{s.role, s.family, "name " + s.name}, true
			}
		}
	}
	var devicePlugins, plugins bool
	for _, v := range spec.Volumes {
		if v.HostPath == nil {
			continue
		}
		p := path.Clean(v.HostPath.Path)
		switch {
		case within(p, DevicePluginDir):
			devicePlugins = true
		case within(p, PluginsRegistryDir), within(p, PluginsDir):
			plugins = true
		}
	}
	if devicePlugins {
		return Classification{DevicePlugin, "", "hostPath " + DevicePluginDir}, true
	}
	if plugins && draName.MatchString(name+" "+strings.Join(images, " ")) {
		return Classification{DRADriver, "", "hostPath " + PluginsDir + " and name " + name}, true
	}
	return Classification{}, false
}

// draName matches names of DRA kubelet plugins that no signature knows.
var draName = regexp.MustCompile(`(^|[-/_ .])(dra|dranet|resource-driver|kubelet-plugin)([-/_ .:]|$)`)

func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func imagesOf(spec *corev1.PodSpec) []string {
	var out []string
	for _, c := range spec.InitContainers {
		out = append(out, c.Image)
	}
	for _, c := range spec.Containers {
		out = append(out, c.Image)
	}
	return out
}

// imageRepo strips the tag and digest of an image reference.
func imageRepo(img string) string {
	if i := strings.IndexByte(img, '@'); i >= 0 {
		img = img[:i]
	}
	if i := strings.LastIndexByte(img, ':'); i > strings.LastIndexByte(img, '/') {
		img = img[:i]
	}
	return img
}

// PoolLabels are the node labels that name a node pool, in order of
// preference: audit's pools and bundle's pools are both named by the first
// of them a node carries. A Karpenter NodePool comes before the GKE and AKS
// labels because on a cloud where Karpenter provisions (AKS node
// auto-provisioning) nodes can carry both, and the NodePool is the unit the
// operator configures; a managed node group and a Karpenter NodePool never
// share a node.
var PoolLabels = []string{
	"eks.amazonaws.com/nodegroup",
	"karpenter.sh/nodepool",
	"cloud.google.com/gke-nodepool",
	"kubernetes.azure.com/agentpool",
}

// InstanceTypeLabel names a node's instance type; audit falls back to it
// as the pool of a node that carries none of PoolLabels.
const InstanceTypeLabel = "node.kubernetes.io/instance-type"

// markNode fills pool and platform markers from labels, OS image and provider ID.
func markNode(n *Node) {
	n.InstanceType = n.Labels[InstanceTypeLabel]
	for _, l := range PoolLabels {
		if v := n.Labels[l]; v != "" {
			n.Pool, n.PoolLabel = v, l
			break
		}
	}
	if n.Pool == "" && n.InstanceType != "" {
		n.Pool, n.PoolLabel = n.InstanceType, InstanceTypeLabel
	}
	_, n.Karpenter = n.Labels["karpenter.sh/nodepool"]
	n.EKSAutoMode = n.Labels["eks.amazonaws.com/compute-type"] == "auto"
	n.Bottlerocket = strings.Contains(strings.ToLower(n.OSImage), "bottlerocket")
	switch {
	case strings.HasPrefix(n.ProviderID, "aws://"), n.Labels["eks.amazonaws.com/nodegroup"] != "", n.EKSAutoMode:
		n.Provider = "eks"
	case strings.HasPrefix(n.ProviderID, "gce://"), n.Labels["cloud.google.com/gke-nodepool"] != "":
		n.Provider = "gke"
	case strings.HasPrefix(n.ProviderID, "azure://"), n.Labels["kubernetes.azure.com/agentpool"] != "":
		n.Provider = "aks"
	}
}

// driverInSelector finds `device.driver == "x"` in CEL selectors.
var driverInSelector = regexp.MustCompile(`device\.driver\s*==\s*["']([^"']+)["']`)

func trimGroup(resource string) string {
	if i := strings.IndexByte(resource, '.'); i >= 0 {
		return resource[:i]
	}
	return resource
}

// featureDiscovery recognises GPU feature discovery (GFD) pods by their
// DaemonSet name or container name or command.
func featureDiscovery(spec *corev1.PodSpec, name string) bool {
	if strings.Contains(name, "feature-discovery") {
		return true
	}
	for _, c := range spec.Containers {
		if strings.Contains(c.Name, "feature-discovery") ||
			(len(c.Command) > 0 && strings.Contains(c.Command[0], "feature-discovery")) {
			return true
		}
	}
	return false
}

// Node images whose device plugin and DRA driver are run differently
// (Node.Image).
const (
	ImageAutoMode     = "EKS Auto Mode"
	ImageBottlerocket = "Bottlerocket"
	ImageAL2023       = "AL2023"
	ImageAL2          = "AL2"
	ImageCOS          = "Container-Optimized OS"
	ImageUbuntu       = "Ubuntu"
)

// Image is the node's image, as far as it decides where a device plugin
// and a DRA driver run: EKS Auto Mode (its own node runtime), Bottlerocket
// and AKS managed GPU nodes (both host services), AL2023, AL2, Ubuntu and
// COS (both pods, GKE's plugin managed by GKE); "" when the OS image says
// none of these.
func (n Node) Image() string {
	os := strings.ToLower(n.OSImage)
	switch {
	case n.EKSAutoMode:
		return ImageAutoMode
	case n.Bottlerocket:
		return ImageBottlerocket
	case strings.Contains(os, "amazon linux 2023"):
		return ImageAL2023
	case strings.Contains(os, "amazon linux 2"):
		return ImageAL2
	case strings.Contains(os, "container-optimized os"):
		return ImageCOS
	case strings.Contains(os, "ubuntu"):
		return ImageUbuntu
	}
	return ""
}
