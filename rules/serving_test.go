package rules

import (
	"strings"
	"testing"
)

// TestResourceServing is the table of dra.md section 1.1, asked of the
// model: how each release of the supported range serves each version.
func TestResourceServing(t *testing.T) {
	t.Parallel()
	v := func(minor int) Version { return Version{1, minor} }
	for _, tc := range []struct {
		version, kind string
		target        int
		want          Serving
	}{
		{"v1alpha1", "ResourceClaim", 32, NotServed},
		{"v1alpha2", "ResourceClass", 32, NotServed},
		{"v1alpha3", "ResourceClaim", 33, ServedWhenEnabled},
		{"v1alpha3", "ResourceClaim", 34, NotServed},
		{"v1alpha3", "PodSchedulingContext", 32, NotServed},
		{"v1alpha3", "DeviceTaintRule", 38, ServedWhenEnabled},
		{"v1beta1", "ResourceClaim", 32, ServedWhenEnabled},
		{"v1beta1", "ResourceClaim", 37, ServedWhenEnabled},
		{"v1beta1", "ResourceClaim", 38, NotServed},
		{"v1beta2", "ResourceClaimTemplate", 32, NotServed},
		{"v1beta2", "ResourceClaimTemplate", 38, ServedWhenEnabled},
		{"v1", "ResourceClaim", 33, NotServed},
		{"v1", "ResourceClaim", 34, ServedByDefault},
		{"v1", "DeviceTaintRule", 36, NotServed},
		{"v1", "DeviceTaintRule", 37, ServedByDefault},
	} {
		lc, ok := ResourceLifecycle(tc.version, tc.kind)
		if !ok {
			t.Fatalf("%s unknown", tc.version)
		}
		if got := lc.Serves(v(tc.target)); got != tc.want {
			t.Errorf("%s %s on 1.%d: %s, want %s", tc.version, tc.kind, tc.target, got, tc.want)
		}
	}
	if _, ok := ResourceLifecycle("v2", "ResourceClaim"); ok {
		t.Error("v2 is not a version of the group")
	}
}

func TestResourceUpgrade(t *testing.T) {
	t.Parallel()
	v := func(minor int) Version { return Version{1, minor} }
	for _, tc := range []struct {
		apiVersion, kind string
		classic          bool
		target           int
		// want is "rule from->to serving removedIn", or "" for no finding.
		want string
	}{
		{"resource.k8s.io/v1beta1", "ResourceClaimTemplate", false, 38, "api-version resource.k8s.io/v1beta1->resource.k8s.io/v1 not-served 1.38"},
		{"resource.k8s.io/v1beta1", "ResourceClaimTemplate", false, 37, "api-version resource.k8s.io/v1beta1->resource.k8s.io/v1 runtime-config 1.38"},
		{"resource.k8s.io/v1beta1", "ResourceClaimTemplate", false, 32, ""}, // what 1.32 wants
		{"resource.k8s.io/v1beta2", "ResourceClaim", false, 34, "api-version resource.k8s.io/v1beta2->resource.k8s.io/v1 runtime-config 1.39"},
		{"resource.k8s.io/v1beta2", "ResourceClaim", false, 33, ""},
		{"resource.k8s.io/v1", "ResourceClaim", false, 38, ""},
		{"resource.k8s.io/v1alpha2", "ResourceClaim", true, 34, "classic resource.k8s.io/v1alpha2->resource.k8s.io/v1 not-served 1.31"},
		{"resource.k8s.io/v1alpha2", "ResourceClass", false, 38, "classic resource.k8s.io/v1alpha2->resource.k8s.io/v1 not-served 1.31"},
		{"resource.k8s.io/v1alpha3", "PodSchedulingContext", false, 38, "classic resource.k8s.io/v1alpha3-> not-served 1.32"},
		{"resource.k8s.io/v1alpha3", "DeviceTaintRule", false, 36, "api-version resource.k8s.io/v1alpha3->resource.k8s.io/v1beta2 runtime-config "},
		{"resource.k8s.io/v1alpha3", "ResourcePoolStatusRequest", false, 38, ""},
		{"apps/v1", "Deployment", false, 38, ""},
	} {
		u := ResourceUpgrade(tc.apiVersion, tc.kind, tc.classic, v(tc.target))
		got := ""
		if u != nil {
			got = u.Rule + " " + u.From + "->" + u.To + " " + string(u.Serving) + " " + u.RemovedIn
		}
		if got != tc.want {
			t.Errorf("%s %s on 1.%d: %q, want %q", tc.apiVersion, tc.kind, tc.target, got, tc.want)
		}
	}
}

func TestGateUpgrade(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		gate, value string
		target      int
		want        string // "" no finding, else a word of the description
	}{
		{"DynamicResourceAllocation", "true", 38, "removed in 1.38"},
		{"DynamicResourceAllocation", "true", 37, "does nothing, and it is removed in 1.38"}, // accepted, one release from removal
		{"DynamicResourceAllocation", "true", 35, "does nothing"},
		{"DynamicResourceAllocation", "true", 34, ""}, // GA, not locked
		{"DynamicResourceAllocation", "false", 37, "locked to true"},
		{"DynamicResourceAllocation", "false", 34, ""},
		{"DRAControlPlaneController", "true", 32, "removed in 1.32"},
		{"DRAAdminAccess", "true", 38, ""},
	} {
		target := Version{1, tc.target}
		u := GateUpgrade(tc.gate, tc.value, target)
		switch {
		case tc.want == "" && u != nil:
			t.Errorf("%s=%s on %s: unexpected %s", tc.gate, tc.value, target, u.Describe(target))
		case tc.want != "" && (u == nil || !strings.Contains(u.Describe(target), tc.want)):
			t.Errorf("%s=%s on %s: want %q, got %+v", tc.gate, tc.value, target, tc.want, u)
		}
	}
}

func TestParseVersionRange(t *testing.T) {
	t.Parallel()
	if v, err := ParseVersion("1.38"); err != nil || v != (Version{1, 38}) {
		t.Errorf("1.38: %v %v", v, err)
	}
	if _, err := ParseVersion("1.39"); err == nil || !strings.Contains(err.Error(), "1.32 to 1.38") {
		t.Errorf("1.39: %v", err)
	}
}
