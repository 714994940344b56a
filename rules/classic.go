package rules

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules/selector"
)

// Classic DRA's NVIDIA names (dra.md section 1.9) and what replaced them.
const (
	classicNVIDIAGroup  = "gpu.resource.nvidia.com"
	classicNVIDIADriver = "gpu.resource.nvidia.com"
	classicIntelGroup   = "gpu.resource.intel.com"
	nvidiaDriver        = "gpu.nvidia.com"
	nvidiaConfigVersion = "resource.nvidia.com/v1beta1"
)

// classicDrivers are classic drivers' names and the driver that replaced
// each: a ResourceClass's driverName becomes a DeviceClass selecting it.
var classicDrivers = map[string]string{
	classicNVIDIADriver:      nvidiaDriver,
	"gpu.resource.intel.com": "gpu.intel.com",
}

// CurrentDriver is the driver that replaced a classic driver name (the name
// itself when kubedra knows no rename).
func CurrentDriver(classic string) string {
	if d, ok := classicDrivers[classic]; ok {
		return d
	}
	return classic
}

// ParametersMapping says what becomes of a classic parameters kind.
type ParametersMapping string

// Parameters mappings.
const (
	// ParametersFolded: the parameters become the claim's request and
	// opaque config (NVIDIA GpuClaimParameters, MigDeviceClaimParameters).
	ParametersFolded ParametersMapping = "folded"
	// ParametersDropped: class parameters with no v1 equivalent; the
	// object goes and the class works without it.
	ParametersDropped ParametersMapping = "dropped"
	// ParametersUnmapped: kubedra knows no mapping; claims that use it are
	// left as they are.
	ParametersUnmapped ParametersMapping = "unmapped"
)

// ClassicParameters says what a classic parameters kind becomes, with the
// reason when it is unmapped.
func ClassicParameters(apiGroup, kind string) (ParametersMapping, string) {
	switch {
	case apiGroup == classicNVIDIAGroup && (kind == "GpuClaimParameters" || kind == "MigDeviceClaimParameters"):
		return ParametersFolded, ""
	case apiGroup == classicNVIDIAGroup && kind == "DeviceClassParameters":
		return ParametersDropped, "NVIDIA's DeviceClassParameters (sharable) has no v1 equivalent: whether a device is shared is the claim's (one ResourceClaim referenced by several pods)"
	case apiGroup == classicNVIDIAGroup && kind == "ComputeInstanceClaimParameters":
		return ParametersUnmapped, "NVIDIA's ComputeInstanceClaimParameters has no mapping: compute-instance profiles (e.g. 1c.2g.20gb) are MIG devices of their own in the current driver; request mig.nvidia.com with a profile selector by hand"
	case apiGroup == classicIntelGroup:
		return ParametersUnmapped, "Intel's classic " + kind + " (count, memory, millicores, type) has no known mapping: the current Intel driver's class is gpu.intel.com; write the v1 request by hand"
	case apiGroup == ResourceGroup && (kind == "ResourceClaimParameters" || kind == "ResourceClassParameters"):
		return ParametersUnmapped, "the 1.30 structured-parameter kind " + kind + " (named resources) has no v1 equivalent: write a v1 request with CEL selectors by hand"
	}
	group := apiGroup
	if group == "" {
		group = "the core group"
	}
	return ParametersUnmapped, fmt.Sprintf("kubedra knows no mapping for the parameters kind %s of %s: write the v1 request and the driver's opaque config by hand", kind, group)
}

// ClassicRequest is what a classic claim's class and parameters become in
// resource.k8s.io/v1.
type ClassicRequest struct {
	// Devices is the claim spec's new devices field.
	Devices resourcev1.DeviceClaim
	// Notes say what changed on the way, for the record (driver feature
	// gates the config needs, parameters not found).
	Notes []string
}

// ClassicClaim maps a classic claim (resourceClassName, parametersRef) to
// v1 devices: the parameters' kind picks the NVIDIA DeviceClass, their
// count and selector become the request, their sharing the opaque
// GpuConfig or MigDeviceConfig the current driver expects. params is the
// parameters object's spec (nil when it is not among the inputs: the
// request then has only the kind's defaults, and a note says so). An error
// means no mapping: the claim is left as it is.
func ClassicClaim(className string, ref *inventory.ParametersRef, params map[string]any) (ClassicRequest, error) {
	var out ClassicRequest
	if ref == nil {
		out.Devices.Requests = []resourcev1.DeviceRequest{{Name: requestName(className),
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: className}}}
		return out, nil
	}
	if m, reason := ClassicParameters(ref.APIGroup, ref.Kind); m != ParametersFolded {
		if m == ParametersDropped {
			reason = "a claim cannot take class parameters: " + reason
		}
		return out, fmt.Errorf("%s", reason)
	}
	if params == nil {
		out.Notes = append(out.Notes, fmt.Sprintf("the %s %s is not among the inputs: the request asks for one device of the class without the parameters' count, selector or sharing; migrate the parameters together with the claim", ref.Kind, ref.Name))
	}
	spec := params
	ex := &resourcev1.ExactDeviceRequest{}
	req := resourcev1.DeviceRequest{Exactly: ex}
	var cfg *deviceConfig
	var notes []string
	var err error
	switch ref.Kind {
	case "GpuClaimParameters":
		req.Name, ex.DeviceClassName = "gpu", "gpu.nvidia.com"
		cfg, notes, err = gpuParameters(ref.Name, spec, ex)
	case "MigDeviceClaimParameters":
		req.Name, ex.DeviceClassName = "mig", "mig.nvidia.com"
		cfg, notes, err = migParameters(ref.Name, spec, ex)
	}
	out.Notes = append(out.Notes, notes...)
	if err != nil {
		return out, err
	}
	for _, s := range ex.Selectors {
		if _, err := selector.Compile(s.CEL.Expression, selector.Features{}); err != nil {
			return out, fmt.Errorf("%s %s: the selector does not compile (%v): %s", ref.Kind, ref.Name, err, s.CEL.Expression)
		}
	}
	out.Devices.Requests = []resourcev1.DeviceRequest{req}
	if cfg != nil {
		raw, err := json.Marshal(cfg)
		if err != nil {
			return out, err
		}
		out.Devices.Config = []resourcev1.DeviceClaimConfiguration{{Requests: []string{req.Name},
			DeviceConfiguration: resourcev1.DeviceConfiguration{Opaque: &resourcev1.OpaqueDeviceConfiguration{
				Driver: nvidiaDriver, Parameters: runtime.RawExtension{Raw: raw}}}}}
	}
	return out, nil
}

// gpuParameters puts the count and selector of the GpuClaimParameters name
// (spec) into ex, and returns the GpuConfig its sharing becomes, if any,
// with notes on the sharing.
func gpuParameters(name string, spec map[string]any, ex *resourcev1.ExactDeviceRequest) (*deviceConfig, []string, error) {
	if n, ok, err := intField(spec, "count"); err != nil {
		return nil, nil, err
	} else if ok && n != 1 {
		ex.Count = n
	}
	if sel, ok := spec["selector"]; ok && sel != nil {
		expr, err := classicSelector(sel)
		if err != nil {
			return nil, nil, fmt.Errorf("GpuClaimParameters %s: selector: %w", name, err)
		}
		ex.Selectors = append(ex.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: expr}})
	}
	sharing, notes, err := classicSharing(spec["sharing"], true)
	if err != nil {
		return nil, nil, fmt.Errorf("GpuClaimParameters %s: %w", name, err)
	}
	if sharing == nil {
		return nil, notes, nil
	}
	return &deviceConfig{APIVersion: nvidiaConfigVersion, Kind: "GpuConfig", Sharing: sharing}, notes, nil
}

// migParameters puts the profile of the MigDeviceClaimParameters name
// (spec, nil when not among the inputs) into ex, and returns the
// MigDeviceConfig its sharing becomes, if any, with notes on the profile
// and sharing (the notes so far also with an error).
func migParameters(name string, spec map[string]any, ex *resourcev1.ExactDeviceRequest) (*deviceConfig, []string, error) {
	if g, ok := spec["gpuClaimName"].(string); ok && g != "" {
		return nil, nil, fmt.Errorf("MigDeviceClaimParameters %s: gpuClaimName (a MIG device on the GPU of claim %s) has no v1 equivalent: claims cannot constrain each other; put both requests in one claim with a matchAttribute gpu.nvidia.com/parentUUID constraint by hand", name, g)
	}
	var notes []string
	if p, ok := spec["profile"].(string); ok && p != "" {
		ex.Selectors = append(ex.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf(`device.attributes["gpu.nvidia.com"].profile == %s`, strconv.Quote(p))}})
	} else if spec != nil {
		notes = append(notes, fmt.Sprintf("MigDeviceClaimParameters %s has no profile: the request takes any MIG device", name))
	}
	sharing, more, err := classicSharing(spec["sharing"], false)
	if err != nil {
		return nil, notes, fmt.Errorf("MigDeviceClaimParameters %s: %w", name, err)
	}
	notes = append(notes, more...)
	if sharing == nil {
		return nil, notes, nil
	}
	return &deviceConfig{APIVersion: nvidiaConfigVersion, Kind: "MigDeviceConfig", Sharing: sharing}, notes, nil
}

// requestName is a request name derived from a class name: its first DNS
// label ("gpu" for gpu.nvidia.com).
func requestName(class string) string {
	first, _, _ := strings.Cut(class, ".")
	return DNSLabel(first, "device")
}

// deviceConfig is NVIDIA's GpuConfig / MigDeviceConfig, in the field order
// people write.
type deviceConfig struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Sharing    *sharing `json:"sharing,omitempty"`
}

type sharing struct {
	Strategy          string         `json:"strategy"`
	TimeSlicingConfig map[string]any `json:"timeSlicingConfig,omitempty"`
	MpsConfig         map[string]any `json:"mpsConfig,omitempty"`
}

// classicSharing maps classic sharing {strategy, timeSlicingConfig
// {timeSlice}, mpsConfig} to the current driver's: timeSlice is renamed
// interval; MPS settings keep their names. MIG devices have no time-slice
// setting.
func classicSharing(v any, gpu bool) (*sharing, []string, error) {
	if v == nil {
		return nil, nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, fmt.Errorf("sharing is not a map")
	}
	s := &sharing{}
	s.Strategy, _ = m["strategy"].(string)
	var notes []string
	switch s.Strategy {
	case "TimeSlicing":
		notes = append(notes, "TimeSlicing sharing needs the driver feature gate TimeSlicingSettings (alpha, off by default in dra-driver-nvidia-gpu)")
		if tc, ok := m["timeSlicingConfig"].(map[string]any); ok && gpu {
			out := map[string]any{}
			for k, val := range tc {
				if k == "timeSlice" {
					k = "interval"
				}
				out[k] = val
			}
			if len(out) > 0 {
				s.TimeSlicingConfig = out
			}
		}
	case "MPS":
		notes = append(notes, "MPS sharing needs the driver feature gate MPSSupport (alpha, off by default in dra-driver-nvidia-gpu)")
		if mc, ok := m["mpsConfig"].(map[string]any); ok && len(mc) > 0 {
			s.MpsConfig = mc
		}
	case "":
		return nil, nil, fmt.Errorf("sharing has no strategy")
	default:
		return nil, nil, fmt.Errorf("sharing strategy %q is neither TimeSlicing nor MPS", s.Strategy)
	}
	return s, notes, nil
}

// classicOperators are classic selector comparisons as compareTo results.
var classicOperators = map[string]string{
	"Equals": "== 0", "LessThan": "< 0", "LessThanOrEqualTo": "<= 0", "GreaterThan": "> 0", "GreaterThanOrEqualTo": ">= 0",
}

// classicSelector turns a classic NVIDIA GpuClaimParameters selector into
// one CEL expression over the current driver's attributes (dra.md section
// 1.9).
func classicSelector(v any) (string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", fmt.Errorf("not a map")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var terms []string
	attr := func(name string) string { return `device.attributes["gpu.nvidia.com"].` + name }
	for _, k := range keys {
		val := m[k]
		switch k {
		case "andExpression", "orExpression":
			list, ok := val.([]any)
			if !ok || len(list) == 0 {
				return "", fmt.Errorf("%s is not a non-empty list", k)
			}
			var parts []string
			for _, x := range list {
				e, err := classicSelector(x)
				if err != nil {
					return "", err
				}
				parts = append(parts, "("+e+")")
			}
			op := " && "
			if k == "orExpression" {
				op = " || "
			}
			terms = append(terms, strings.Join(parts, op))
		case "memory":
			value, op, err := comparison(k, val)
			if err != nil {
				return "", err
			}
			if _, err := resource.ParseQuantity(value); err != nil {
				return "", fmt.Errorf("memory %q is not a quantity", value)
			}
			terms = append(terms, fmt.Sprintf(`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity(%s)) %s`, strconv.Quote(value), op))
		case "cudaComputeCapability", "driverVersion", "cudaDriverVersion":
			value, op, err := comparison(k, val)
			if err != nil {
				return "", err
			}
			sv, err := semver(value)
			if err != nil {
				return "", fmt.Errorf("%s: %w", k, err)
			}
			terms = append(terms, fmt.Sprintf(`%s.compareTo(semver(%s)) %s`, attr(k), strconv.Quote(sv), op))
		case "productName", "brand", "architecture":
			s, ok := val.(string)
			if !ok {
				return "", fmt.Errorf("%s is not a string", k)
			}
			terms = append(terms, globTerm(attr(k), s))
		case "uuid":
			s, ok := val.(string)
			if !ok {
				return "", fmt.Errorf("uuid is not a string")
			}
			terms = append(terms, fmt.Sprintf(`%s == %s`, attr("uuid"), strconv.Quote(s)))
		case "index":
			return "", fmt.Errorf("index has no equivalent: the driver stopped publishing GPU indexes in 2025; select by uuid or productName instead")
		case "migEnabled":
			return "", fmt.Errorf("migEnabled has no equivalent: a MIG-enabled GPU is published only through its MIG devices (class mig.nvidia.com)")
		default:
			return "", fmt.Errorf("unknown property %q", k)
		}
	}
	if len(terms) == 0 {
		return "", fmt.Errorf("empty")
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	for i, t := range terms {
		terms[i] = "(" + t + ")"
	}
	return strings.Join(terms, " && "), nil
}

func comparison(name string, v any) (value, op string, err error) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", "", fmt.Errorf("%s is not {value, operator}", name)
	}
	value = fmt.Sprint(m["value"])
	if m["value"] == nil || value == "" {
		return "", "", fmt.Errorf("%s has no value", name)
	}
	o, _ := m["operator"].(string)
	if o == "" {
		o = "Equals"
	}
	op, ok = classicOperators[o]
	if !ok {
		return "", "", fmt.Errorf("%s: unknown operator %q", name, o)
	}
	return value, op, nil
}

// semver pads a version like "7.5" to "7.5.0".
func semver(v string) (string, error) {
	parts := strings.Split(strings.TrimPrefix(v, "v"), ".")
	if len(parts) > 3 {
		return "", fmt.Errorf("%q is not a version", v)
	}
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			return "", fmt.Errorf("%q is not a version", v)
		}
	}
	for len(parts) < 3 {
		parts = append(parts, "0")
	}
	return strings.Join(parts, "."), nil
}

// globTerm matches a classic glob (* and ?, case-insensitive) against a
// string attribute.
func globTerm(attr, glob string) string {
	if !strings.ContainsAny(glob, "*?") {
		return fmt.Sprintf(`%s.lowerAscii() == %s`, attr, strconv.Quote(strings.ToLower(glob)))
	}
	var re strings.Builder
	re.WriteString("^")
	for _, r := range strings.ToLower(glob) {
		switch r {
		case '*':
			re.WriteString(".*")
		case '?':
			re.WriteString(".")
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	return fmt.Sprintf(`%s.lowerAscii().matches(%s)`, attr, strconv.Quote(re.String()))
}

// ClassicDeviceClass is the DeviceClass spec that replaces a ResourceClass
// of driverName: it selects the devices of the driver that replaced it (for
// NVIDIA's classic class, full GPUs, as the chart's gpu.nvidia.com class
// does).
func ClassicDeviceClass(driverName string) resourcev1.DeviceClassSpec {
	d := CurrentDriver(driverName)
	expr := fmt.Sprintf("device.driver == %s", strconv.Quote(d))
	if driverName == classicNVIDIADriver {
		expr += ` && device.attributes["gpu.nvidia.com"].type == "gpu"`
	}
	return resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: expr}}}}
}

// ToRNode encodes an API value (a DeviceClaim, a DeviceClassSpec) as a
// block-style YAML node in the Go types' field order.
func ToRNode(v any) (*yaml.RNode, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonToRNode(raw)
}

func intField(m map[string]any, key string) (int64, bool, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	switch n := v.(type) {
	case int:
		return int64(n), true, nil
	case int64:
		return n, true, nil
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true, nil
		}
	}
	return 0, false, fmt.Errorf("%s %v is not a whole number", key, v)
}
