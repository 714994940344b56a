package action

import (
	"cmp"
	"context"
	"slices"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
	"github.com/kubedra/kubedra/stream"
)

// ScanOptions steer Scan.
type ScanOptions struct {
	// Rules map requests to DRA (nil: the built-in rules).
	Rules  *rules.Set
	Target rules.Version
	// Strict parses every document, so that a syntax error anywhere is
	// reported; otherwise documents that cannot hold a device request
	// (detect.MayRequest) are counted but not parsed.
	Strict bool
	// Ignore opts findings out (.kubedra.yaml), besides annotations.
	Ignore *plan.Ignores
	// OnFile, when set, is called as each file (each batch of a large
	// one) is read, in input order, with the number of findings in it (a
	// progress line).
	OnFile func(findings int)
}

// ScanResult is a finished scan.
type ScanResult struct {
	// Report is every finding with its mapping, what was not read, and the
	// counts: the envelope of scan's machine formats.
	Report plan.Report
	// Diagnostics are what the sources could not read (listed in
	// Report.Skipped too): errors for unreadable and unparseable input,
	// warnings for templates and symlinks skipped by design.
	Diagnostics inventory.Diagnostics
	// Failed counts inputs that could not be read or parsed.
	Failed int
}

// Scan finds every device request in the input and decides its DRA
// mapping. Files are read and detected in parallel; only findings and
// diagnostics are kept, so memory does not grow with the number of files.
func Scan(ctx context.Context, in Input, opts ScanOptions) (*ScanResult, error) {
	if in.Documents != nil {
		ds := newDocumentScan(opts)
		ds.add(in.Documents)
		return ds.result(), nil
	}
	set := loadRules(opts.Rules)
	dopts := detect.Options{TemplatePaths: set.TemplatePaths()}
	iopts := plan.ItemOptions{Rules: rules.Options{Target: opts.Target}, Ignore: opts.Ignore}

	var (
		found     detect.Result
		diags     inventory.Diagnostics
		nFiles    int
		documents int
		failed    int
	)
	runs := in.charts(ctx, chartOptions{target: opts.Target, set: set, dopts: dopts, installed: true})
	fopts := files.Options{Dir: in.Dir, Workers: readers(), Batch: batchSize, Skip: owned(runs)}
	if !opts.Strict {
		fopts.Filter = detect.May
	}
	type detected struct {
		found detect.Result
		bug   error
	}
	prepare := func(f *files.File) (p detected) {
		p.bug = guard(func() { p.found = detect.All(f.Docs, dopts) })
		return p
	}
	step := func(f *files.File, p detected) (stream.Job, error) {
		if p.bug != nil {
			p.found = detect.Result{}
			diags = append(diags, inventory.Diagnostic{Severity: inventory.Error, Rule: plan.RuleInternal, File: f.Path, Message: p.bug.Error()})
			failed++
		}
		found.Add(p.found)
		diags = append(diags, f.Diagnostics...)
		documents += f.Documents
		failed += f.ParseErrors
		if f.Err != nil {
			failed++
		}
		if f.Last && f.Err == nil && !f.NotFollowed {
			nFiles++
		}
		if opts.OnFile != nil {
			opts.OnFile(p.found.Len())
		}
		return stream.Job{}, nil
	}
	err := stream.Run(ctx, in.Paths, in.Stdin, fopts, stream.Stages[detected]{Prepare: prepare, Step: step})
	if err != nil {
		return nil, err
	}
	pf, kd := kustomizeFindings(in, dopts, set, cmp.Or(opts.Target, rules.DefaultTarget))
	found.Findings = append(found.Findings, pf...)
	failed += kustomize.FailedFiles(kd)
	diags = append(diags, kd...)
	cfs, cdiags, charts := chartFindings(runs)
	found.Add(cfs)
	for _, d := range cdiags {
		if d.Severity == inventory.Error {
			failed++
		}
	}
	diags = append(diags, cdiags...)
	for _, cr := range runs {
		if cr.Rendered != nil {
			nFiles += len(cr.Rendered.Files)
			documents += len(cr.Rendered.Docs)
		}
	}
	items, bugs := plan.AllItems(found, set, iopts)
	diags = append(diags, bugs...)
	failed += len(bugs)
	slices.SortStableFunc(diags, func(a, b inventory.Diagnostic) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	if in.StdinName != "" {
		for i := range items {
			items[i].File = in.name(items[i].File)
			items[i].Origin.Path = items[i].File
		}
		for i := range diags {
			diags[i].File = in.name(diags[i].File)
		}
	}
	rep := plan.NewReport(items, diags, nFiles, documents)
	rep.Charts = charts
	return &ScanResult{Report: rep, Diagnostics: diags, Failed: failed}, nil
}

// documentScan scans documents in memory (Input.Documents), given at once
// or a batch at a time (a KRM function's items): what detection finds in
// each is kept, in order, and judged once all have come, so the result is
// the same however the documents were batched.
type documentScan struct {
	set       *rules.Set
	opts      ScanOptions
	found     detect.Result
	documents int
}

func newDocumentScan(opts ScanOptions) *documentScan {
	return &documentScan{set: loadRules(opts.Rules), opts: opts}
}

// add detects what the documents hold.
func (ds *documentScan) add(docs []*inventory.Document) {
	ds.found.Add(detect.All(docs, detect.Options{TemplatePaths: ds.set.TemplatePaths()}))
	ds.documents += len(docs)
}

// result judges everything found, and lets go of it (the items hold what
// the result needs).
func (ds *documentScan) result() *ScanResult {
	iopts := plan.ItemOptions{Rules: rules.Options{Target: ds.opts.Target}, Ignore: ds.opts.Ignore}
	items, bugs := plan.AllItems(ds.found, ds.set, iopts)
	ds.found = detect.Result{}
	return &ScanResult{Report: plan.NewReport(items, bugs, 0, ds.documents), Diagnostics: bugs, Failed: len(bugs)}
}

// kustomizeFindings are the kustomize patches migrate cannot make exact,
// device requests no workload shows: a JSON 6902 operation that sets one
// is a finding at its line (so check's gate fails on it, as on any
// request; migrate says it leaves its units), any other an error here as
// in migrate (an input that cannot be checked).
func kustomizeFindings(in Input, dopts detect.Options, set *rules.Set, target rules.Version) ([]inventory.Finding, inventory.Diagnostics) {
	tree, kd := kustomizeTree(in, dopts, set, target)
	pf := tree.PatchFindings()
	kd = slices.DeleteFunc(kd, func(d inventory.Diagnostic) bool {
		return slices.ContainsFunc(pf, func(f inventory.Finding) bool { return f.Origin.Path == d.File && f.Line == d.Line })
	})
	return pf, kd
}
