package rules

import (
	"testing"

	"github.com/kubedra/kubedra/internal/fuzzstat"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules/selector"
)

// FuzzResolve: whatever the requests, hints and target, Resolve does not
// fail or panic, decides every request, and every claim it builds encodes
// for the target with selectors the API server accepts.
func FuzzResolve(f *testing.F) {
	seeds := [][5]string{
		{"nvidia.com/gpu", "2", "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", "vpc.amazonaws.com/efa"},
		{"nvidia.com/mig-1g.10gb.me.all", "1", "nvidia.com/mig.config", "all-1g.10gb", ""},
		{"aws.amazon.com/neuroncore", "7", "node.kubernetes.io/instance-type", "trn2.48xlarge", "vpc.amazonaws.com/efa"},
		{"nvidia.com/gpumem", "1000", "karpenter.k8s.aws/instance-gpu-name", `a"b`, "nvidia.com/gpu"},
		{"amd.com/cpx_nps4", "1e3", "nvidia.com/gpu.memory", "99999999999999", ""},
		{"deviceclass.resource.kubernetes.io/x", "$N", "nvidia.com/gpu.family", "rubin", ""},
		{"nvidia.com/gpu", "1", "nvidia.com/gpu.product", "X-MIG-1g.5gb-SHARED", "nvidia.com/gpu.shared"},
	}
	for i, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3], s[4], true, uint8(i))
	}
	set := Default()
	// The input picks the target (one a run, not all six: resolving,
	// compiling and strictly decoding for each cost 15 ms an input, and the
	// fuzzer ran 170 inputs a second), and a selector's verdict is the same
	// each time it is compiled for a target: each distinct one is compiled
	// once.
	compiled := map[[2]string]error{}
	compile := func(x string, target Version) error {
		key := [2]string{x, target.String()}
		err, ok := compiled[key]
		if !ok {
			_, err = selector.Compile(x, features(target))
			compiled[key] = err
		}
		return err
	}
	f.Fuzz(func(t *testing.T, res, qty, key, val, other string, share bool, which uint8) {
		fuzzstat.Count()
		pod := Pod{
			Requests: []PodRequest{req("a", res, qty), req("a", other, "1"), req("b", res, qty)},
			Hints:    []inventory.Hint{nodeSel(key, val), affinity(key, "Gt", val), affinity(key, "NotIn", val, "x")},
		}
		for _, target := range []Version{allTargets[int(which)%len(allTargets)]} {
			r, err := set.Resolve(pod, Options{Target: target, AllowLossy: true, Share: share})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Decisions) != len(pod.Requests) {
				t.Fatalf("%d decisions for %d requests", len(r.Decisions), len(pod.Requests))
			}
			for _, d := range r.Decisions {
				if d.Claim >= len(r.Claims) || d.Claim >= 0 && d.Request == "" {
					t.Fatalf("bad claim reference %+v", d)
				}
				for _, x := range d.Selectors {
					if err := compile(x, target); err != nil {
						t.Fatalf("selector %q: %v", x, err)
					}
				}
			}
			for _, c := range r.Claims {
				enc := EncodeClaimTemplate
				if c.Shared {
					enc = EncodeClaim
				}
				n, err := enc(c.Name, "ns", c, target)
				if err != nil {
					t.Fatalf("encode %s: %v", target, err)
				}
				strictDecode(t, n)
			}
			for _, h := range r.UsedHints {
				if h < 0 || h >= len(pod.Hints) {
					t.Fatalf("UsedHints index %d out of range", h)
				}
			}
		}
	})
}
