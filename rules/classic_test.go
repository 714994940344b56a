package rules

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules/selector"
)

func TestClassicClaim(t *testing.T) {
	t.Parallel()
	nv := func(kind string) *inventory.ParametersRef {
		return &inventory.ParametersRef{APIGroup: "gpu.resource.nvidia.com", Kind: kind, Name: "p"}
	}
	for _, tc := range []struct {
		name   string
		class  string
		ref    *inventory.ParametersRef
		params map[string]any
		// class, count, selectors and config as JSON, or the error's words.
		class2, config string
		count          int64
		selectors      []string
		err            string
	}{
		{name: "class only", class: "example.com", class2: "example.com"},
		{name: "gpu count", class: "gpu.nvidia.com", ref: nv("GpuClaimParameters"), params: map[string]any{"count": 2}, class2: "gpu.nvidia.com", count: 2},
		{name: "selectors", class: "gpu.nvidia.com", ref: nv("GpuClaimParameters"), params: map[string]any{"selector": map[string]any{
			"andExpression": []any{
				map[string]any{"memory": map[string]any{"value": "16G", "operator": "LessThanOrEqualTo"}},
				map[string]any{"cudaComputeCapability": map[string]any{"value": "7.5", "operator": "GreaterThanOrEqualTo"}},
				map[string]any{"productName": "*a100*"},
			}}}, class2: "gpu.nvidia.com", selectors: []string{
			`(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("16G")) <= 0) && (device.attributes["gpu.nvidia.com"].cudaComputeCapability.compareTo(semver("7.5.0")) >= 0) && (device.attributes["gpu.nvidia.com"].productName.lowerAscii().matches("^.*a100.*$"))`}},
		{name: "time slicing", class: "gpu.nvidia.com", ref: nv("GpuClaimParameters"), params: map[string]any{"sharing": map[string]any{
			"strategy": "TimeSlicing", "timeSlicingConfig": map[string]any{"timeSlice": "Long"}}}, class2: "gpu.nvidia.com",
			config: `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"GpuConfig","sharing":{"strategy":"TimeSlicing","timeSlicingConfig":{"interval":"Long"}}}`},
		{name: "mig mps", class: "gpu.nvidia.com", ref: nv("MigDeviceClaimParameters"), params: map[string]any{"profile": "1g.10gb", "sharing": map[string]any{
			"strategy": "MPS", "mpsConfig": map[string]any{"defaultActiveThreadPercentage": 50}}}, class2: "mig.nvidia.com",
			selectors: []string{`device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`},
			config:    `{"apiVersion":"resource.nvidia.com/v1beta1","kind":"MigDeviceConfig","sharing":{"strategy":"MPS","mpsConfig":{"defaultActiveThreadPercentage":50}}}`},
		{name: "parameters not found", class: "gpu.nvidia.com", ref: nv("MigDeviceClaimParameters"), class2: "mig.nvidia.com"},
		{name: "index", class: "gpu.nvidia.com", ref: nv("GpuClaimParameters"), params: map[string]any{"selector": map[string]any{"index": 0}}, err: "index has no equivalent"},
		{name: "gpu claim name", class: "gpu.nvidia.com", ref: nv("MigDeviceClaimParameters"), params: map[string]any{"profile": "1g.5gb", "gpuClaimName": "g"}, err: "gpuClaimName"},
		{name: "compute instance", class: "gpu.nvidia.com", ref: nv("ComputeInstanceClaimParameters"), err: "compute-instance profiles"},
		{name: "unknown kind", class: "x", ref: &inventory.ParametersRef{APIGroup: "x.example.com", Kind: "Params", Name: "p"}, err: "knows no mapping for the parameters kind Params of x.example.com"},
		{name: "bad sharing", class: "gpu.nvidia.com", ref: nv("GpuClaimParameters"), params: map[string]any{"sharing": map[string]any{"strategy": "Spatial"}}, err: "neither TimeSlicing nor MPS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ClassicClaim(tc.class, tc.ref, tc.params)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Devices.Requests) != 1 {
				t.Fatalf("requests %+v", got.Devices.Requests)
			}
			ex := got.Devices.Requests[0].Exactly
			var sels []string
			for _, s := range ex.Selectors {
				sels = append(sels, s.CEL.Expression)
				if _, err := selector.Compile(s.CEL.Expression, selector.Features{}); err != nil {
					t.Errorf("%s does not compile: %v", s.CEL.Expression, err)
				}
			}
			if ex.DeviceClassName != tc.class2 || ex.Count != tc.count || !cmp.Equal(sels, tc.selectors) {
				t.Errorf("got class %s count %d selectors %q", ex.DeviceClassName, ex.Count, sels)
			}
			config := ""
			if len(got.Devices.Config) > 0 {
				c := got.Devices.Config[0]
				if c.Opaque.Driver != "gpu.nvidia.com" || !cmp.Equal(c.Requests, []string{got.Devices.Requests[0].Name}) {
					t.Errorf("config %+v", c)
				}
				config = string(c.Opaque.Parameters.Raw)
				if !json.Valid(c.Opaque.Parameters.Raw) {
					t.Errorf("parameters are not JSON: %s", config)
				}
			}
			if config != tc.config {
				t.Errorf("config %s, want %s", config, tc.config)
			}
			if tc.params == nil && tc.ref != nil && len(got.Notes) == 0 {
				t.Error("no note that the parameters were not found")
			}
		})
	}
}

func TestClassicDeviceClass(t *testing.T) {
	t.Parallel()
	for driver, want := range map[string]string{
		"gpu.resource.nvidia.com": `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`,
		"gpu.resource.intel.com":  `device.driver == "gpu.intel.com"`,
		"fpga.example.com":        `device.driver == "fpga.example.com"`,
	} {
		spec := ClassicDeviceClass(driver)
		if got := spec.Selectors[0].CEL.Expression; got != want {
			t.Errorf("%s: %s, want %s", driver, got, want)
		}
		if _, err := selector.Compile(want, selector.Features{}); err != nil {
			t.Error(err)
		}
	}
}
