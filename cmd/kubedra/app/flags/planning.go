package flags

import (
	"github.com/spf13/pflag"

	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Planning are migrate's flags that steer the plan (--strategy,
// --allow-lossy, --share, ...), as plan.Options; simulate binds two of
// them for its in-memory migration.
type Planning struct {
	Strategy, ClaimsFile                                                            string
	AllowLossy, Share, ConsumableShares, KeepNodeSelectors, Force, KueueMapsClasses bool
}

// Bind binds migrate's planning flags.
func (p *Planning) Bind(f *pflag.FlagSet) {
	f.StringVar(&p.ClaimsFile, "claims-file", "", "put new claim templates into this sibling file (added to kustomization.yaml when there is one) instead of after each workload")
	f.StringVar(&p.Strategy, "strategy", string(plan.Claims), "claims, extended-resource or auto")
	f.BoolVar(&p.AllowLossy, "allow-lossy", false, "apply documented lossy mappings (sharing, rounding) instead of leaving them")
	f.BoolVar(&p.Share, "share", false, "with --allow-lossy: map time-slicing/MPS sharing to one shared ResourceClaim instead of exclusive per-pod claims")
	f.BoolVar(&p.ConsumableShares, "consumable-shares", false, "with --allow-lossy: map time-slicing to per-pod claims that take shares of one GPU (NVIDIA DRA driver v0.5.0+ with --consumable-shares=N; Kubernetes 1.36+)")
	f.BoolVar(&p.KeepNodeSelectors, "keep-node-selectors", false, "keep device-label nodeSelector and affinity terms that became CEL selectors")
	f.BoolVar(&p.KueueMapsClasses, "kueue-maps-classes", false, "the cluster's Kueue Configuration maps the DeviceClasses claims use (deviceClassMappings): migrate workloads in Kueue queues even when no Kueue Configuration is among the inputs (else they are left as they are)")
	f.BoolVar(&p.Force, "force", false, "allow --strategy extended-resource on targets where DRAExtendedResource is off by default")
}

// CheckStrategy checks --strategy (and --force) for the target.
func (p *Planning) CheckStrategy(target rules.Version) error {
	if err := plan.CheckStrategy(plan.Strategy(p.Strategy), target, p.Force); err != nil {
		return &Error{Err: err}
	}
	return nil
}

// Options are the flags as plan.Options for target, with the ignores.
func (p *Planning) Options(target rules.Version, ignore *plan.Ignores) plan.Options {
	return plan.Options{Strategy: plan.Strategy(p.Strategy), Target: target, AllowLossy: p.AllowLossy, Share: p.Share, ConsumableShares: p.ConsumableShares,
		KeepNodeSelectors: p.KeepNodeSelectors, KueueMapsClasses: p.KueueMapsClasses, Force: p.Force, ClaimsFile: p.ClaimsFile, Ignore: ignore}
}
