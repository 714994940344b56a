package config

import (
	"cmp"
	"fmt"
	"reflect"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Fn is kubedra fn's functionConfig: its fields at the top level,
// under spec:, or as a ConfigMap's data:.
type Fn struct {
	// Mode is "check" (items pass through unchanged and every finding
	// becomes a result) or "migrate" (items are migrated like `kubedra
	// migrate -` and what stays on device plugins becomes results).
	Mode          string   `json:"mode,omitempty" yaml:"mode,omitempty"`
	FailOn        string   `json:"failOn,omitempty" yaml:"failOn,omitempty"`
	TargetVersion string   `json:"targetVersion,omitempty" yaml:"targetVersion,omitempty"`
	Rules         []string `json:"rules,omitempty" yaml:"rules,omitempty"`
	// Migrate mode only, as migrate's flags of the same names.
	Strategy          string `json:"strategy,omitempty" yaml:"strategy,omitempty"`
	AllowLossy        bool   `json:"allowLossy,omitempty" yaml:"allowLossy,omitempty"`
	Share             bool   `json:"share,omitempty" yaml:"share,omitempty"`
	KeepNodeSelectors bool   `json:"keepNodeSelectors,omitempty" yaml:"keepNodeSelectors,omitempty"`
	KueueMapsClasses  bool   `json:"kueueMapsClasses,omitempty" yaml:"kueueMapsClasses,omitempty"`
}

// fnWrapper is a functionConfig's own fields around kubedra's: an object's
// type and metadata, and the spec or ConfigMap data that hold them.
type fnWrapper struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Spec       Fn             `json:"spec"`
	Data       Fn             `json:"data"`
}

// fnTopLevel is a functionConfig with kubedra's fields at the top level.
type fnTopLevel struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata"`
	Fn         `json:",inline"`
}

// ParseFn decodes a functionConfig; mode is the default mode. Its fields
// are read from one place: spec, else a ConfigMap's data (each string
// decoded once, as the YAML it holds), else the top level; a
// functionConfig with both spec and data is refused rather than one of
// them being read and the other ignored.
func ParseFn(fc *yaml.RNode, mode string) (Fn, error) {
	cfg := Fn{Mode: mode, FailOn: string(plan.FailOnAny)}
	if fc == nil || fc.IsNilOrEmpty() {
		return cfg, nil
	}
	src, shape := fc, reflect.TypeFor[fnTopLevel]()
	spec, data := fc.Field("spec"), fc.Field("data")
	switch {
	case spec != nil && data != nil:
		return cfg, fmt.Errorf("functionConfig: %w", inventory.AtLine(data.Key.YNode().Line,
			fmt.Errorf("both spec (line %d) and data (line %d) hold kubedra's fields: keep one", spec.Key.YNode().Line, data.Key.YNode().Line)))
	case spec != nil:
		src, shape = spec.Value, reflect.TypeFor[fnWrapper]()
	case data != nil:
		// A ConfigMap's data are strings: each is read as the YAML it
		// holds ("true", "[a.yaml, b.yaml]").
		src, shape = typedData(data.Value), reflect.TypeFor[fnWrapper]()
	}
	if err := checkKeys(fc.YNode(), shape, ""); err != nil {
		return cfg, fmt.Errorf("functionConfig: %w", err)
	}
	if err := src.YNode().Decode(&cfg); err != nil {
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

// typedData is a ConfigMap's data with each string value decoded as the
// YAML scalar or flow collection it holds, at its line.
func typedData(data *yaml.RNode) *yaml.RNode {
	m := yaml.CopyYNode(data.YNode())
	if m.Kind != yaml.MappingNode {
		return yaml.NewRNode(m)
	}
	for i := 1; i < len(m.Content); i += 2 {
		v := m.Content[i]
		if v.Kind != yaml.ScalarNode || v.Tag != "!!str" && v.Tag != "" {
			continue
		}
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(v.Value), &n); err == nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
			typed := n.Content[0]
			inventory.LineStarts(nil).Place(typed, v.Line-1)
			m.Content[i] = typed
		}
	}
	return yaml.NewRNode(m)
}

// PlanOptions are migrate mode's planning options for target.
func (cfg Fn) PlanOptions(target rules.Version) plan.Options {
	return plan.Options{Strategy: plan.Strategy(cmp.Or(cfg.Strategy, string(plan.Claims))), Target: target,
		AllowLossy: cfg.AllowLossy, Share: cfg.Share, KeepNodeSelectors: cfg.KeepNodeSelectors, KueueMapsClasses: cfg.KueueMapsClasses}
}
