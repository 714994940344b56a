package config

import (
	"cmp"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Fn is kubedra fn's functionConfig: its fields at the top level,
// under spec:, or as a ConfigMap's data:.
type Fn struct {
	// Mode is "check" (items pass through unchanged and every finding
	// becomes a result) or "migrate" (items are migrated like `kubedra
	// migrate -` and what stays on device plugins becomes results).
	Mode          string   `yaml:"mode,omitempty"`
	FailOn        string   `yaml:"failOn,omitempty"`
	TargetVersion string   `yaml:"targetVersion,omitempty"`
	Rules         []string `yaml:"rules,omitempty"`
	// Migrate mode only, as migrate's flags of the same names.
	Strategy          string `yaml:"strategy,omitempty"`
	AllowLossy        bool   `yaml:"allowLossy,omitempty"`
	Share             bool   `yaml:"share,omitempty"`
	KeepNodeSelectors bool   `yaml:"keepNodeSelectors,omitempty"`
	KueueMapsClasses  bool   `yaml:"kueueMapsClasses,omitempty"`
}

// ParseFn decodes a functionConfig; mode is the default mode.
func ParseFn(fc *yaml.RNode, mode string) (Fn, error) {
	cfg := Fn{Mode: mode, FailOn: string(plan.FailOnAny)}
	if fc == nil || fc.IsNilOrEmpty() {
		return cfg, nil
	}
	src := fc
	for _, f := range []string{"spec", "data"} {
		if n := fc.Field(f); n != nil && n.Value != nil {
			src = n.Value
			break
		}
	}
	s, err := src.String()
	if err != nil {
		return cfg, err
	}
	if err := yaml.Unmarshal([]byte(s), &cfg); err != nil {
		return cfg, fmt.Errorf("functionConfig: %w", err)
	}
	switch cfg.Mode {
	case "":
		cfg.Mode = mode
	case "check", "migrate":
	default:
		return cfg, fmt.Errorf("functionConfig: mode %q: use check or migrate", cfg.Mode)
	}
	cfg.FailOn = cmp.Or(cfg.FailOn, string(plan.FailOnAny))
	if _, err := plan.ParseGate(cfg.FailOn); err != nil {
		return cfg, fmt.Errorf("functionConfig: failOn %q: use any, lossy or unmapped", cfg.FailOn)
	}
	return cfg, nil
}

// PlanOptions are migrate mode's planning options for target.
func (cfg Fn) PlanOptions(target rules.Version) plan.Options {
	return plan.Options{Strategy: plan.Strategy(cmp.Or(cfg.Strategy, string(plan.Claims))), Target: target,
		AllowLossy: cfg.AllowLossy, Share: cfg.Share, KeepNodeSelectors: cfg.KeepNodeSelectors, KueueMapsClasses: cfg.KueueMapsClasses}
}
