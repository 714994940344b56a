package action

import (
	"cmp"
	"context"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/config"
	"github.com/kubedra/kubedra/internal/confine"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Fn is kubedra as a KRM function (kyaml fn/framework): it checks or
// migrates a ResourceList's items with Check and Migrate, called on the
// items directly. Mode is the mode when the functionConfig names none.
// Fn does the work; cmd/kubedra/app/report turns the FnResult into the
// ResourceList's results.
type Fn struct {
	Mode string
	// Dir is the working folder: a functionConfig comes with the
	// repository, so the rules files it names are read only when they lie
	// under Dir (relative ones resolved there).
	Dir string
}

// FnResult is what Fn made of a ResourceList's items.
type FnResult struct {
	// Items are the items to write back: unchanged in check mode, migrated
	// in migrate mode.
	Items []*yaml.RNode
	// Check is check mode's result; nil in migrate mode.
	Check *CheckResult
	// Diagnostics are migrate mode's, and Origins where each input object
	// came from (the file and index its annotations give), so that a
	// diagnostic can name the item's file.
	Diagnostics inventory.Diagnostics
	Origins     map[inventory.ObjectRef]inventory.Origin
}

// Run checks or migrates items as functionConfig fc says.
func (fn Fn) Run(items []*yaml.RNode, fc *yaml.RNode) (*FnResult, error) {
	cfg, err := config.ParseFn(fc, fn.Mode)
	if err != nil {
		return nil, err
	}
	roots := confine.New("", cmp.Or(fn.Dir, "."))
	for _, r := range cfg.Rules {
		if _, err := roots.Within(inventory.Resolve(fn.Dir, r)); err != nil {
			return nil, fmt.Errorf("functionConfig: rules file %w", err)
		}
	}
	set, err := rules.LoadFrom(fn.Dir, cfg.Rules...)
	if err != nil {
		return nil, fmt.Errorf("loading rules: %w", err)
	}
	target := rules.DefaultTarget
	if cfg.TargetVersion != "" {
		if target, err = rules.ParseVersion(cfg.TargetVersion); err != nil {
			return nil, fmt.Errorf("functionConfig: %w", err)
		}
	}
	docs := files.Items(items)
	ctx := context.Background()
	if cfg.Mode == "migrate" {
		res, err := Migrate(ctx, Input{Documents: docs}, MigrateOptions{Rules: set, Plan: cfg.PlanOptions(target), Output: emit.Stream})
		if err != nil {
			return nil, fmt.Errorf("functionConfig: %w", err)
		}
		where := map[inventory.ObjectRef]inventory.Origin{}
		for _, d := range docs {
			where[*objectOf(d.Node)] = d.Origin
		}
		return &FnResult{Items: res.Documents, Diagnostics: res.Diagnostics, Origins: where}, nil
	}
	gate, err := plan.ParseGate(cfg.FailOn)
	if err != nil {
		return nil, fmt.Errorf("functionConfig: %w", err)
	}
	cr, err := Check(ctx, Input{Documents: docs}, CheckOptions{ScanOptions: ScanOptions{Rules: set, Target: target}, FailOn: gate})
	if err != nil {
		return nil, err
	}
	return &FnResult{Items: items, Check: cr}, nil
}

func objectOf(n *yaml.RNode) *inventory.ObjectRef {
	return &inventory.ObjectRef{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
}
