package rewrite_test

import (
	"strings"
	"testing"

	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

const classicTemplate = `apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaimTemplate
metadata: {name: two, namespace: ml}
spec:
  spec:
    resourceClassName: gpu.nvidia.com
    parametersRef: {apiGroup: gpu.resource.nvidia.com, kind: GpuClaimParameters, name: two}
---
apiVersion: gpu.resource.nvidia.com/v1alpha1
kind: GpuClaimParameters
metadata: {name: two, namespace: ml}
spec: {count: 2}
`

// TestUpgradeTargets: the upgrade writes the version the target serves by
// default, in that version's layout: flat requests for 1.32 (v1beta1),
// exactly for 1.33 (v1beta2) and 1.34+ (v1).
func TestUpgradeTargets(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		target      int
		apiVersion  string
		exactly     bool
		requestLine string
	}{
		{32, "resource.k8s.io/v1beta1", false, "      - name: gpu\n        deviceClassName: gpu.nvidia.com\n        count: 2\n"},
		{33, "resource.k8s.io/v1beta2", true, "        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 2\n"},
		{38, "resource.k8s.io/v1", true, "        exactly:\n          deviceClassName: gpu.nvidia.com\n          count: 2\n"},
	} {
		r := runStdin(t, []byte(classicTemplate), plan.Options{Strategy: plan.Claims, Target: rules.Version{Major: 1, Minor: tc.target}})
		out := string(r.out)
		if r.failed || !strings.HasPrefix(out, "apiVersion: "+tc.apiVersion+"\n") || strings.Contains(out, "exactly") != tc.exactly || !strings.Contains(out, tc.requestLine) {
			t.Errorf("target 1.%d:\n%s", tc.target, out)
		}
	}
}

// TestUpgradeList: a List's classic items are upgraded in the List, and
// folded parameters leave it.
func TestUpgradeList(t *testing.T) {
	t.Parallel()
	in := `apiVersion: v1
kind: List
items:
- apiVersion: gpu.resource.nvidia.com/v1alpha1
  kind: MigDeviceClaimParameters
  metadata: {name: m, namespace: ml}
  spec: {profile: 3g.40gb}
- apiVersion: resource.k8s.io/v1alpha2
  kind: ResourceClaim
  metadata: {name: m, namespace: ml}
  spec:
    resourceClassName: gpu.nvidia.com
    parametersRef: {apiGroup: gpu.resource.nvidia.com, kind: MigDeviceClaimParameters, name: m}
`
	r := runStdin(t, []byte(in), plan.Options{Strategy: plan.Claims, Target: rules.Version{Major: 1, Minor: 38}})
	out := string(r.out)
	if r.failed || strings.Contains(out, "MigDeviceClaimParameters") || !strings.Contains(out, `profile == "3g.40gb"`) ||
		!strings.Contains(out, "- apiVersion: resource.k8s.io/v1\n  kind: ResourceClaim\n") {
		t.Errorf("got:\n%s\n%s", out, diagnostics(r.res))
	}
}

// TestUpgradeJSON: a JSON document stays JSON.
func TestUpgradeJSON(t *testing.T) {
	t.Parallel()
	in := `{"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
 "spec": {"devices": {"requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com"}]}}}
`
	r := runStdin(t, []byte(in), plan.Options{Strategy: plan.Claims, Target: rules.Version{Major: 1, Minor: 38}})
	out := string(r.out)
	if r.failed || !strings.HasPrefix(strings.TrimSpace(out), "{") || !strings.Contains(out, `"exactly"`) || !strings.Contains(out, `"resource.k8s.io/v1"`) {
		t.Errorf("got:\n%s", out)
	}
}
