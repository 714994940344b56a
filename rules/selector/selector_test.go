package selector

import (
	"context"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func str(s string) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{StringValue: &s} }
func ver(s string) resourceapi.DeviceAttribute { return resourceapi.DeviceAttribute{VersionValue: &s} }

func TestCompile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		expr    string
		f       Features
		wantErr string
	}{
		{name: "plain", expr: `device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'`},
		{name: "replace with has guard", expr: `has(device.attributes["gpu.nvidia.com"].productName) && device.attributes["gpu.nvidia.com"].productName.replace(" ", "-") == "X"`},
		{name: "quantity", expr: `device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0`},
		{name: "semver", expr: `device.attributes['gpu.nvidia.com'].cudaComputeCapability.compareTo(semver('9.0.0')) >= 0`},
		{name: "orValue plain comparison", expr: `device.attributes['gpu.nvidia.com'].?architecture.orValue('') == 'Hopper'`},
		{name: "orValue with string function is too costly", expr: `device.attributes["gpu.nvidia.com"].?productName.orValue("").replace(" ", "-") == "X"`, wantErr: "too complex"},
		{name: "not bool", expr: `1 + 1`, wantErr: "bool"},
		{name: "dyn attribute is not bool", expr: `device.attributes['gpu.nvidia.com'].type`, wantErr: "must evaluate to bool"},
		{name: "syntax", expr: `device.driver ==`, wantErr: "compilation failed"},
		{name: "multi alloc without gate", expr: `device.allowMultipleAllocations == false`, wantErr: "compilation failed"},
		{name: "multi alloc with gate", expr: `device.allowMultipleAllocations == false`, f: Features{ConsumableCapacity: true}},
		{name: "too long", expr: strings.Repeat(" ", resourceapi.CELSelectorExpressionMaxLength) + "true", wantErr: "characters long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := Compile(tt.expr, tt.f)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Compile: %v", err)
				}
				if e.MaxCost > resourceapi.CELSelectorExpressionMaxCost {
					t.Fatalf("cost %d", e.MaxCost)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Compile error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	t.Parallel()
	gpu := Device{Driver: "gpu.nvidia.com",
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{
			"type": str("gpu"), "productName": str("NVIDIA H100 80GB HBM3"), "cudaComputeCapability": ver("9.0.0"),
		},
		Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse("81559Mi")}},
	}
	e, err := Compile(`has(device.attributes["gpu.nvidia.com"].profile) && device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`, Features{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := e.Matches(context.Background(), gpu); ok || err != nil {
		t.Fatalf("guarded profile on full GPU = %v, %v; want false, nil", ok, err)
	}
	bare, err := Compile(`device.attributes["gpu.nvidia.com"].profile == "1g.10gb"`, Features{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bare.Matches(context.Background(), gpu); err == nil {
		t.Fatal("unguarded lookup of a missing attribute: want a runtime error")
	}
	mem, err := Compile(`device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("81559Mi")) >= 0`, Features{})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := mem.Matches(context.Background(), gpu); !ok || err != nil {
		t.Fatalf("memory >= 81559Mi = %v, %v; want true", ok, err)
	}
}
