package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// FnConfig is kubedra fn's functionConfig: its fields at the top level,
// under spec:, or as a ConfigMap's data:.
type FnConfig struct {
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
}

// Fn is kubedra as a KRM function (kyaml fn/framework): it checks or
// migrates a ResourceList's items with Check and Migrate, called on the
// items directly. Mode is the mode when the functionConfig names none.
type Fn struct {
	Mode string
}

// GateError is returned by Fn.Process when findings fail the gate (check
// mode): the function exits 2, which fails kustomize build.
type GateError struct{ Results framework.Results }

func (e *GateError) Error() string {
	return fmt.Sprintf("%d device-plugin request(s) fail the gate:\n%s", len(e.Results), e.Results.Error())
}

// Process implements framework.ResourceListProcessor.
func (fn Fn) Process(rl *framework.ResourceList) error {
	cfg, err := ParseFnConfig(rl.FunctionConfig, fn.Mode)
	if err != nil {
		return err
	}
	set, err := rules.Load(cfg.Rules...)
	if err != nil {
		return fmt.Errorf("loading rules: %w", err)
	}
	target := rules.DefaultTarget
	if cfg.TargetVersion != "" {
		if target, err = rules.ParseVersion(cfg.TargetVersion); err != nil {
			return fmt.Errorf("functionConfig: %w", err)
		}
	}
	docs := make([]*inventory.Document, len(rl.Items))
	for i, item := range rl.Items {
		path, idx := itemOrigin(item, i)
		docs[i] = &inventory.Document{Node: item, Origin: inventory.Origin{Path: path, Index: idx, Line: item.YNode().Line, ListIndex: -1}}
	}
	ctx := context.Background()
	if cfg.Mode == "migrate" {
		popts := plan.Options{Strategy: plan.Strategy(cmp.Or(cfg.Strategy, string(plan.Claims))), Target: target,
			AllowLossy: cfg.AllowLossy, Share: cfg.Share, KeepNodeSelectors: cfg.KeepNodeSelectors}
		res, err := Migrate(ctx, Input{Documents: docs}, MigrateOptions{Rules: set, Plan: popts, Output: emit.Stream})
		if err != nil {
			return fmt.Errorf("functionConfig: %w", err)
		}
		rl.Items = res.Documents
		where := map[inventory.ObjectRef]inventory.Origin{}
		for _, d := range docs {
			where[*objectOf(d.Node)] = d.Origin
		}
		for _, d := range res.Diagnostics {
			rl.Results = append(rl.Results, fnResult(d, where))
		}
		return nil
	}
	gate, err := ParseGate(cfg.FailOn)
	if err != nil {
		return fmt.Errorf("functionConfig: %w", err)
	}
	cr, err := Check(ctx, Input{Documents: docs}, CheckOptions{ScanOptions: ScanOptions{Rules: set, Target: target}, FailOn: gate})
	if err != nil {
		return err
	}
	var failing framework.Results
	for i, it := range cr.Report.Findings {
		r := &framework.Result{
			Message:     it.Message(),
			Severity:    framework.Info,
			ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: it.APIVersion, Kind: it.Kind}, NameMeta: yaml.NameMeta{Name: it.Name, Namespace: it.Namespace}},
			Field:       &framework.Field{Path: it.FieldPath()},
			Tags:        map[string]string{"rule": it.RuleID()},
		}
		if it.File != "" {
			r.File = &framework.File{Path: it.File, Index: it.Index}
		}
		switch {
		case cr.Failing[i]:
			r.Severity = framework.Error
			failing = append(failing, r)
		case it.Ignored != "":
			r.Message += " (ignored: " + it.Ignored + ")"
		case it.Status != rules.DRABacked:
			r.Severity = framework.Warning
		}
		if it.IgnoreInvalid {
			r.Message += "; " + plan.IgnoreReasonMessage
		}
		rl.Results = append(rl.Results, r)
	}
	if len(failing) > 0 {
		return &GateError{Results: failing}
	}
	return nil
}

// fnResult is a diagnostic as a KRM result, placed at the item it is
// about.
func fnResult(d inventory.Diagnostic, where map[inventory.ObjectRef]inventory.Origin) *framework.Result {
	r := &framework.Result{Message: d.Message, Severity: framework.Severity(d.Severity)}
	if d.Fix != "" {
		r.Message += ". Fix: " + d.Fix
	}
	if d.Rule != "" {
		r.Tags = map[string]string{"rule": d.Rule}
	}
	if d.Field != "" {
		r.Field = &framework.Field{Path: d.Field}
	}
	if o := d.Object; o != nil {
		r.ResourceRef = &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: o.APIVersion, Kind: o.Kind}, NameMeta: yaml.NameMeta{Name: o.Name, Namespace: o.Namespace}}
		if at, ok := where[*o]; ok && at.Path != "" {
			r.File = &framework.File{Path: at.Path, Index: at.Index}
		}
	}
	return r
}

func objectOf(n *yaml.RNode) *inventory.ObjectRef {
	return &inventory.ObjectRef{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
}

// itemOrigin reads the file path and index that kustomize, kpt or kio put
// in an item's annotations ("" and the item's position when there are none).
func itemOrigin(item *yaml.RNode, pos int) (string, int) {
	a := item.GetAnnotations()
	path := cmp.Or(a[kioutil.PathAnnotation], a[kioutil.LegacyPathAnnotation])
	idx := cmp.Or(a[kioutil.IndexAnnotation], a[kioutil.LegacyIndexAnnotation])
	if n, err := strconv.Atoi(idx); err == nil {
		return path, n
	}
	return path, pos
}

// ParseFnConfig decodes a functionConfig; mode is the default mode.
func ParseFnConfig(fc *yaml.RNode, mode string) (FnConfig, error) {
	cfg := FnConfig{Mode: mode, FailOn: string(FailOnAny)}
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
	cfg.FailOn = cmp.Or(cfg.FailOn, string(FailOnAny))
	if _, err := ParseGate(cfg.FailOn); err != nil {
		return cfg, fmt.Errorf("functionConfig: failOn %q: use any, lossy or unmapped", cfg.FailOn)
	}
	return cfg, nil
}

// IsGateError reports whether err is findings failing the gate.
func IsGateError(err error) bool {
	var ge *GateError
	return errors.As(err, &ge)
}

// resourceListHeader and resourceListKind match the top-level apiVersion
// and kind of a KRM ResourceList; documentEnd a document marker.
var (
	resourceListHeader = regexp.MustCompile(`(?m)^apiVersion: *["']?config\.kubernetes\.io/v1["']? *$`)
	resourceListKind   = regexp.MustCompile(`(?m)^kind: *["']?ResourceList["']? *$`)
	documentEnd        = regexp.MustCompile(`(?m)^(---|\.\.\.)[ \t]*$`)
)

// IsResourceList reports whether a stream that starts with head is a KRM
// ResourceList: its first document has the ResourceList apiVersion and
// kind at the top level (kustomize and kpt write them first).
func IsResourceList(head []byte) bool {
	if m := documentEnd.FindIndex(head); m != nil && m[0] == 0 {
		head = head[m[1]:] // a leading marker opens the first document
	}
	if m := documentEnd.FindIndex(head); m != nil {
		head = head[:m[0]]
	}
	return resourceListHeader.Match(head) && resourceListKind.Match(head)
}
