package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/config"
	"github.com/kubedra/kubedra/internal/confine"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
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
	// in migrate mode. Of a run a batch at a time (FnStream), they are
	// those that follow the last batch's (migrate's DeviceClasses).
	Items []*yaml.RNode
	// Check is check mode's result; nil in migrate mode.
	Check *CheckResult
	// Diagnostics are migrate mode's, and Origins where each input object
	// came from (the file and index its annotations give), so that a
	// diagnostic can name the item's file.
	Diagnostics inventory.Diagnostics
	Origins     map[inventory.ObjectRef]inventory.Origin
}

// fnRun is what a functionConfig asks for: the mode and its options, the
// rules, the target and check's gate.
type fnRun struct {
	cfg    config.Fn
	set    *rules.Set
	target rules.Version
	gate   plan.Gate
}

// setup reads the functionConfig fc and the rules it names.
func (fn Fn) setup(fc *yaml.RNode) (fnRun, error) {
	cfg, err := config.ParseFn(fc, fn.Mode)
	if err != nil {
		return fnRun{}, err
	}
	roots := confine.New("", cmp.Or(fn.Dir, "."))
	for _, r := range cfg.Rules {
		if _, err := roots.Within(inventory.Resolve(fn.Dir, r)); err != nil {
			return fnRun{}, fmt.Errorf("functionConfig: rules file %w", err)
		}
	}
	run := fnRun{cfg: cfg, target: rules.DefaultTarget}
	if run.set, err = rules.LoadFrom(fn.Dir, cfg.Rules...); err != nil {
		return fnRun{}, fmt.Errorf("loading rules: %w", err)
	}
	if cfg.TargetVersion != "" {
		if run.target, err = rules.ParseVersion(cfg.TargetVersion); err != nil {
			return fnRun{}, fmt.Errorf("functionConfig: %w", err)
		}
	}
	if cfg.Mode != "migrate" {
		if run.gate, err = plan.ParseGate(cfg.FailOn); err != nil {
			return fnRun{}, fmt.Errorf("functionConfig: %w", err)
		}
	}
	return run, nil
}

func (r fnRun) migrateOptions() MigrateOptions {
	return MigrateOptions{Rules: r.set, Plan: r.cfg.PlanOptions(r.target), Output: emit.Stream}
}

func (r fnRun) checkOptions() CheckOptions {
	return CheckOptions{ScanOptions: ScanOptions{Rules: r.set, Target: r.target}, FailOn: r.gate}
}

// Run checks or migrates items as functionConfig fc says.
func (fn Fn) Run(items []*yaml.RNode, fc *yaml.RNode) (*FnResult, error) {
	run, err := fn.setup(fc)
	if err != nil {
		return nil, err
	}
	docs := files.Items(items, 0)
	ctx := context.Background()
	if run.cfg.Mode == "migrate" {
		res, err := Migrate(ctx, Input{Documents: docs}, run.migrateOptions())
		if err != nil {
			return nil, fmt.Errorf("functionConfig: %w", err)
		}
		where := map[inventory.ObjectRef]inventory.Origin{}
		for _, d := range docs {
			where[*objectOf(d.Node)] = d.Origin
		}
		return &FnResult{Items: res.Documents, Diagnostics: res.Diagnostics, Origins: where}, nil
	}
	cr, err := Check(ctx, Input{Documents: docs}, run.checkOptions())
	if err != nil {
		return nil, err
	}
	return &FnResult{Items: items, Check: cr}, nil
}

func objectOf(n *yaml.RNode) *inventory.ObjectRef {
	return &inventory.ObjectRef{APIVersion: n.GetApiVersion(), Kind: n.GetKind(), Namespace: n.GetNamespace(), Name: n.GetName()}
}

// FnStream is one run of Fn on a ResourceList's items given a batch at a
// time (Fn.Stream), with the result Run gives on them all: check mode
// keeps what detection finds in each batch and judges it at the end;
// migrate mode plans, rewrites and proves each batch as Run does the whole
// list, keeping what naming needs across batches. No batch's nodes are
// kept.
type FnStream struct {
	run   fnRun
	items int // the items given so far
	// check mode
	scan *documentScan
	// migrate mode
	m *migration
	// where are the origins of the items given so far that name a file
	// (FnResult.Origins: the last item of an object names it).
	where map[inventory.ObjectRef]inventory.Origin
}

// ErrWhole is FnStream's answer when the run's result on the whole list
// might differ from what the batches give: the caller runs Fn.Run on it.
var ErrWhole = errors.New("the items must be checked or migrated as one list")

// Stream starts a run of fn on the items of a list whose functionConfig is
// fc, a batch at a time, when that gives what Run gives on the whole list;
// text is the text of all the items. It returns ErrWhole when it might
// not, or when Run fails on fc (its error is Run's to report): in migrate
// mode, items that may be tied to others (text detection cannot rule out
// for objects the plans or the proof of other items depend on:
// detect.MayConcernOthers, DRA objects and claims, objects that count or
// govern devices; each is planned after every device request of a batch),
// shared claims, and the auto strategy (whose DeviceClasses, added after
// the last item, serve claims of earlier batches in the proof).
func (fn Fn) Stream(fc *yaml.RNode, text []byte) (*FnStream, error) {
	run, err := fn.setup(fc)
	if err != nil {
		return nil, ErrWhole
	}
	s := &FnStream{run: run}
	if run.cfg.Mode != "migrate" {
		sopts := run.checkOptions().ScanOptions
		sopts.Strict = true
		s.scan = newDocumentScan(sopts)
		return s, nil
	}
	popts := run.migrateOptions().Plan
	if popts.Share || popts.Strategy == plan.Auto || detect.MayConcernOthers(text) || detect.MayDRA(text) || detect.MayGovern(text) {
		return nil, ErrWhole
	}
	if s.m, err = newMigration(Input{Documents: []*inventory.Document{}}, run.migrateOptions()); err != nil {
		return nil, ErrWhole
	}
	s.where = map[inventory.ObjectRef]inventory.Origin{}
	return s, nil
}

// Batch checks or migrates the next items and returns those to write in
// their place: the items themselves in check mode; in migrate mode each
// migrated and followed by its new objects. ErrWhole says the run cannot
// go on a batch at a time: a batch's migration fails the proof, or could
// not be applied at all.
func (s *FnStream) Batch(items []*yaml.RNode) ([]*yaml.RNode, error) {
	docs := files.Items(items, s.items)
	first := s.items
	s.items += len(items)
	if s.scan != nil {
		s.scan.add(docs)
		return items, nil
	}
	for _, d := range docs {
		if ref := *objectOf(d.Node); d.Origin.Path != "" {
			s.where[ref] = d.Origin
		} else {
			delete(s.where, ref)
		}
	}
	out := s.m.documentBatch(docs, first)
	if s.m.cur != nil && s.m.cur.failed != nil || !s.m.proved(docs, out) {
		return nil, ErrWhole
	}
	return out, nil
}

// Finish ends the run and returns its result.
func (s *FnStream) Finish() (*FnResult, error) {
	if s.scan != nil {
		cr, err := gate(context.Background(), Input{}, s.scan.result(), s.run.checkOptions())
		if err != nil {
			return nil, err
		}
		return &FnResult{Check: cr}, nil
	}
	classes := s.m.endDocuments()
	return &FnResult{Items: classes, Diagnostics: s.m.done().Diagnostics, Origins: s.where}, nil
}
