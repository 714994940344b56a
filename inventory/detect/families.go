package detect

import "strings"

// resourceFamilies maps extended-resource names to device families, by
// exact name or prefix (reference dra.md §6.1 and §10).
var resourceFamilies = []struct{ prefix, family string }{
	{"nvidia.com/", "nvidia"},
	{"aws.amazon.com/neuron", "neuron"},
	{"vpc.amazonaws.com/efa", "efa"},
	{"amd.com/", "amd"},
	{"gpu.intel.com/", "intel-gpu"},
	{"intel.com/gpu", "intel-gpu"},
	{"habana.ai/", "gaudi"},
	{"intel.com/gaudi", "gaudi"},
	{"google.com/tpu", "tpu"},
	{"example.com/gpu", "example"},
}

// driverFamilies maps DRA driver names to device families.
var driverFamilies = map[string]string{
	"gpu.nvidia.com":  "nvidia",
	"neuron.aws.com":  "neuron",
	"dra.net":         "efa", // DRANET serves EFA through efa.networking.k8s.aws (dra.md §5.6)
	"gpu.amd.com":     "amd",
	"gpu.intel.com":   "intel-gpu",
	"gaudi.intel.com": "gaudi",
	"tpu.google.com":  "tpu",
	"gpu.example.com": "example",
}

// FamilyOfResource returns the device family of an extended-resource name,
// or "" when it is not a known device resource.
func FamilyOfResource(name string) string {
	for _, rf := range resourceFamilies {
		if strings.HasPrefix(name, rf.prefix) {
			return rf.family
		}
	}
	return ""
}

// FamilyOfDriver returns the device family of a DRA driver name, or "".
func FamilyOfDriver(driver string) string { return driverFamilies[driver] }
