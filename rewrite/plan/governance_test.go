package plan_test

import (
	"testing"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// TestGovernanceVerdicts: what a quota key on a device resource does after
// migration depends on the class, the target and the strategy, as migrate
// decides the workloads.
func TestGovernanceVerdicts(t *testing.T) {
	t.Parallel()
	set, err := rules.Load()
	if err != nil {
		t.Fatal(err)
	}
	quota := func(key, resource string) inventory.GovFinding {
		return inventory.GovFinding{What: inventory.GovQuota, Kind: "ResourceQuota", Name: "q", Field: "spec.hard", Key: key,
			Resource: resource, Quantity: "8", Keys: []string{key}}
	}
	v136, v135 := rules.Version{Major: 1, Minor: 36}, rules.Version{Major: 1, Minor: 35}
	tests := []struct {
		name     string
		f        inventory.GovFinding
		strategy plan.Strategy
		target   rules.Version
		lossy    bool
		breaks   bool
		action   string
		path     string
	}{
		{"class declares the name, gate on", quota("requests.nvidia.com/gpu", "nvidia.com/gpu"), plan.Claims, v136, false, false, "", `spec.hard.requests\.nvidia\.com/gpu`},
		{"gate off", quota("requests.nvidia.com/gpu", "nvidia.com/gpu"), plan.Claims, v135, false, true, plan.GovAddKey, ""},
		{"class without the name", quota("requests.aws.amazon.com/neuron", "aws.amazon.com/neuron"), plan.Claims, v136, false, true, plan.GovAddKey, ""},
		{"extended-resource strategy keeps the pods' requests", quota("requests.aws.amazon.com/neuron", "aws.amazon.com/neuron"), plan.ExtendedResource, v136, false, false, "", ""},
		{"auto serves a count through KEP-5004", quota("requests.aws.amazon.com/neuron", "aws.amazon.com/neuron"), plan.Auto, v136, false, false, "", ""},
		{"auto before the gate is on uses claims", quota("requests.aws.amazon.com/neuron", "aws.amazon.com/neuron"), plan.Auto, v135, false, true, plan.GovAddKey, ""},
		{"lossy stays without --allow-lossy", quota("requests.nvidia.com/gpu.shared", "nvidia.com/gpu.shared"), plan.Claims, v136, false, false, "", ""},
		{"unmapped stays", quota("requests.example.org/fpga", "example.org/fpga"), plan.Claims, v136, false, false, "", ""},
		{"limits. counts nothing", quota("limits.nvidia.com/gpu", "nvidia.com/gpu"), plan.Claims, v135, false, false, "", ""},
		{"DRA key", inventory.GovFinding{What: inventory.GovQuota, Key: "gpu.nvidia.com.deviceclass.resource.k8s.io/devices", Class: "gpu.nvidia.com"}, plan.Claims, v135, false, false, "", ""},
		{"implicit name before the gate", inventory.GovFinding{What: inventory.GovQuota, Key: "requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com", Class: "gpu.nvidia.com"}, plan.Claims, v135, false, true, plan.GovWarn, ""},
		{"implicit name with the gate", inventory.GovFinding{What: inventory.GovQuota, Key: "requests.deviceclass.resource.kubernetes.io/gpu.nvidia.com", Class: "gpu.nvidia.com"}, plan.Claims, v136, false, false, "", ""},
		{"scoped DRA key counts nothing", inventory.GovFinding{What: inventory.GovQuota, Key: "count/resourceclaims.resource.k8s.io", Scoped: true}, plan.Claims, v135, false, true, plan.GovWarn, ""},
		{"LimitRange default", inventory.GovFinding{What: inventory.GovLimitRange, Field: "spec.limits[0].default", Key: "nvidia.com/gpu", Resource: "nvidia.com/gpu", LimitType: "Container"},
			plan.Claims, v136, false, true, plan.GovRemove, `spec.limits[0].default.nvidia\.com/gpu`},
		{"LimitRange under extended-resource", inventory.GovFinding{What: inventory.GovLimitRange, Field: "spec.limits[0].max", Key: "nvidia.com/gpu", Resource: "nvidia.com/gpu", LimitType: "Container"},
			plan.ExtendedResource, v136, false, false, "", ""},
		{"NodePool", inventory.GovFinding{What: inventory.GovNodePool, Field: "spec.limits", Key: "nvidia.com/gpu", Resource: "nvidia.com/gpu"}, plan.Claims, v136, false, false, plan.GovWarn, ""},
	}
	for _, tt := range tests {
		items := plan.GovernanceItems([]inventory.GovFinding{tt.f}, plan.GovOptions{Resolver: set, Strategy: tt.strategy, Target: tt.target, AllowLossy: tt.lossy})
		if len(items) != 1 || items[0].Status != rules.Governance || items[0].Mapping.Govern == nil {
			t.Fatalf("%s: items %+v", tt.name, items)
		}
		g := items[0].Mapping.Govern
		if g.Breaks != tt.breaks || g.Action != tt.action {
			t.Errorf("%s: breaks %v action %q, want %v %q: %s", tt.name, g.Breaks, g.Action, tt.breaks, tt.action, items[0].Message())
		}
		if tt.path != "" && items[0].FieldPath() != tt.path {
			t.Errorf("%s: field path %s, want %s", tt.name, items[0].FieldPath(), tt.path)
		}
	}
}
