package rules

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules/selector"
)

// whenHints are scheduling hints that satisfy the When condition of the
// built-in rules that have one.
var whenHints = map[string]inventory.Hint{
	"nvidia-mig-single":         {Kind: inventory.HintNodeSelector, Key: "nvidia.com/gpu.product", Values: []string{"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"}},
	"nvidia-mig-single-shared":  {Kind: inventory.HintNodeSelector, Key: "nvidia.com/gpu.product", Values: []string{"NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"}},
	"nvidia-mig-single-unknown": {Kind: inventory.HintNodeSelector, Key: "nvidia.com/mig.strategy", Values: []string{"single"}},
	"nvidia-gpu-mps":            {Kind: inventory.HintNodeSelector, Key: "nvidia.com/gpu.sharing-strategy", Values: []string{"mps"}},
	"nvidia-gpu-time-slicing":   {Kind: inventory.HintNodeSelector, Key: "nvidia.com/gpu.sharing-strategy", Values: []string{"time-slicing"}},
	"nvidia-gpu-product-shared": {Kind: inventory.HintNodeSelector, Key: "nvidia.com/gpu.product", Values: []string{"Tesla-T4-SHARED"}},
}

// companions are requests a rule needs next to it in the same container.
var companions = map[string]PodRequest{
	"hami-gpumem":            {Container: "main", Resource: "nvidia.com/gpu", Quantity: "1"},
	"hami-gpumem-percentage": {Container: "main", Resource: "nvidia.com/gpu", Quantity: "1"},
	"hami-gpucores":          {Container: "main", Resource: "nvidia.com/gpu", Quantity: "1"},
}

var allTargets = []Version{{1, 32}, {1, 33}, {1, 34}, {1, 35}, {1, 36}, {1, 37}}

// TestBuiltinRules resolves every built-in rule (each example name, on every
// target, exclusive and shared), encodes its claims, decodes them strictly
// into the target's resource.k8s.io types and compiles every selector.
func TestBuiltinRules(t *testing.T) {
	t.Parallel()
	s := Default()
	seen := map[string]bool{}
	for _, r := range s.rules {
		if r.disabled {
			t.Errorf("built-in rule %s is disabled: every built-in rule should apply", r.ID)
			continue
		}
		names := r.Examples
		if r.Resource != "" {
			names = append(names, r.Resource)
		}
		if len(names) == 0 {
			t.Errorf("rule %s has a pattern but no examples", r.ID)
		}
		for _, name := range names {
			for _, target := range allTargets {
				for _, share := range []bool{false, true} {
					t.Run(fmt.Sprintf("%s/%s/%s/share=%v", r.ID, name, target, share), func(t *testing.T) {
						seen[r.ID] = true
						pod := Pod{Requests: []PodRequest{{Container: "main", Resource: name, Quantity: "4"}}}
						if c, ok := companions[r.ID]; ok {
							pod.Requests = append(pod.Requests, c)
							pod.Requests[0].Quantity = "3000"
						}
						if h, ok := whenHints[r.ID]; ok {
							pod.Hints = append(pod.Hints, h)
						}
						res, err := s.Resolve(pod, Options{Target: target, AllowLossy: true, Share: share})
						if err != nil {
							t.Fatal(err)
						}
						d := res.Decisions[0]
						if d.Rule == nil || d.Rule.ID != r.ID {
							t.Fatalf("decided by %+v, want rule %s", d.Rule, r.ID)
						}
						wantStatus := r.Status
						if target.Less(r.minimum) {
							wantStatus = Unmapped
						}
						if d.Status != wantStatus {
							t.Fatalf("status = %s (%s), want %s", d.Status, d.Reason, wantStatus)
						}
						switch d.Status {
						case Unmapped, DRABacked:
							if d.Reason == "" || d.Claim != -1 {
								t.Fatalf("decision %+v: want a reason and no claim", d)
							}
							return
						case Lossy:
							if d.Loss == "" || d.Fix == "" {
								t.Fatalf("lossy decision without loss or fix: %+v", d)
							}
						}
						if d.Claim < 0 || d.Claim >= len(res.Claims) || d.Request == "" {
							t.Fatalf("decision %+v has no claim", d)
						}
						c := res.Claims[d.Claim]
						if share && r.Sharing != nil && !c.Shared {
							t.Fatalf("share requested, rule has sharing, claim is not shared")
						}
						if !share && c.Shared {
							t.Fatalf("claim is shared without --share")
						}
						found := false
						for _, req := range c.Spec.Devices.Requests {
							if req.Name == d.Request {
								found = true
								if req.Exactly == nil || req.Exactly.DeviceClassName == "" || req.Exactly.Count < 1 {
									t.Fatalf("request %s: %+v", req.Name, req.Exactly)
								}
								for _, sel := range req.Exactly.Selectors {
									if _, err := selector.Compile(sel.CEL.Expression, features(target)); err != nil {
										t.Fatalf("selector %q: %v", sel.CEL.Expression, err)
									}
								}
							}
						}
						if !found {
							t.Fatalf("claim has no request %q", d.Request)
						}
						enc := EncodeClaimTemplate
						if c.Shared {
							enc = EncodeClaim
						}
						n, err := enc(c.Name, "default", c, target)
						if err != nil {
							t.Fatal(err)
						}
						if got, want := n.GetApiVersion(), ResourceAPIVersion(target); got != want {
							t.Fatalf("apiVersion %s, want %s", got, want)
						}
						strictDecode(t, n)
						if d.ExtendedResource && target.AtLeast(ExtendedResourceOn) {
							dc, err := s.DeviceClass(d, target)
							if err != nil {
								t.Fatal(err)
							}
							strictDecode(t, dc)
						}
					})
				}
			}
		}
	}
	for _, id := range []string{"nvidia-gpu", "nvidia-mig", "nvidia-mig-single", "nvidia-gpu-shared", "neuron", "neuroncore", "efa",
		"amd-gpu", "amd-gpu-partition", "intel-gpu-i915", "intel-gpu-xe", "habana-gaudi", "example-gpu", "google-tpu",
		"hami-gpumem", "hami-gpucores", "kep5004-implicit"} {
		if !slices.ContainsFunc(s.rules, func(r *rule) bool { return r.ID == id }) {
			t.Errorf("built-in rule %s is missing", id)
		}
	}
}

// TestBuiltinHints compiles every built-in hint translation for each
// operator it supports.
func TestBuiltinHints(t *testing.T) {
	t.Parallel()
	s := Default()
	samples := map[string]string{
		"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559", "nvidia.com/gpu.family": "hopper",
		"nvidia.com/gpu.compute.major": "9", "nvidia.com/gpu.compute.minor": "0", "nvidia.com/cuda.driver-version.major": "570",
		"nvidia.com/cuda.driver.major": "570", "nvidia.com/cuda.driver-version.full": "570.124.06", "nvidia.com/cuda.runtime-version.major": "12",
		"nvidia.com/mig.config": "all-1g.10gb", "nvidia.com/gpu.present": "true", "nvidia.com/mig.strategy": "mixed",
		"nvidia.com/gpu.sharing-strategy": "none", "karpenter.k8s.aws/instance-gpu-name": "h100",
		"cloud.google.com/gke-accelerator": "nvidia-tesla-a100", "node.kubernetes.io/instance-type": "trn2.48xlarge",
		"gpu.intel.com/family": "Flex",
	}
	for _, h := range s.hints {
		v, ok := samples[h.Label]
		if !ok {
			t.Errorf("no sample value for hint %s", h.Label)
			continue
		}
		for _, op := range []string{"In", "NotIn", "Gt", "Lt", "Exists", "DoesNotExist"} {
			tmpl := map[string]string{"In": h.In, "NotIn": h.In, "Gt": h.Gt, "Lt": h.Lt, "Exists": h.Exists, "DoesNotExist": h.Exists}[op]
			if tmpl == "" {
				continue
			}
			x, ok := s.translate(inventory.Hint{Kind: inventory.HintNodeAffinity, Key: h.Label, Operator: op, Values: []string{v}}, h.Drivers[0])
			if !ok {
				if h.In == "true" || h.Exists == "true" {
					continue
				}
				t.Errorf("%s %s %s: not translated", h.Label, op, v)
				continue
			}
			if x.expr == "" {
				continue
			}
			for _, target := range allTargets {
				if err := checkCEL(x.expr, target); err != nil {
					t.Errorf("%s %s on %s: %v", h.Label, op, target, err)
				}
			}
		}
	}
}
