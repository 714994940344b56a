package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/internal/confine"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rewrite"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
	"github.com/kubedra/kubedra/stream"
)

// MigrateOptions steer Migrate.
type MigrateOptions struct {
	// Rules map requests to DRA (nil: the built-in rules).
	Rules *rules.Set
	// Resolver and Encoder, when set, replace the decisions and objects of
	// Rules (tests use rewrite/plan/plantest).
	Resolver plan.Resolver
	Encoder  plan.Encoder
	// Plan holds the planning options: strategy, target, lossy mappings,
	// sharing, node selectors, force, claims file and ignores. Migrate
	// fills in its Encoder, Kustomization and DeviceClassFile.
	Plan plan.Options
	// Output is where the migration goes: a diff or the migrated stream on
	// Out, the files in place, or a copy of the tree in OutDir.
	Output emit.Mode
	Out    io.Writer
	Color  bool
	OutDir string
	// PlanOnly plans and changes nothing (migrate --plan): the result's
	// Plan holds every edit.
	PlanOnly bool
	// NoProof writes kustomize units without proving them first
	// (docs/migrate.md#the-proof).
	NoProof bool
	// WriteReadOnly rewrites files without write permission too
	// (--write-read-only); else they are refused (emit.Emitter.Writable).
	WriteReadOnly bool
	// MergeOut writes into an OutDir that is not empty (--out-merge);
	// else such an OutDir is refused.
	MergeOut bool
}

// MigrateResult is what Migrate did.
type MigrateResult struct {
	// Diagnostics say what was not migrated and why, file by file in input
	// order, then problems with the files migrate adds to.
	Diagnostics inventory.Diagnostics
	// Workloads are the choices of --strategy auto, with the reason.
	Workloads []plan.WorkloadChoice
	// Charts are the Helm charts among the inputs, each with its strategy
	// (charts.go); a values-file chart's file is written like the others.
	Charts []plan.ChartChoice
	// Upgraded counts documents written for an earlier DRA that were
	// rewritten to resource.k8s.io/v1 (or removed: classic parameters).
	Upgraded int
	// Governed counts objects that count or govern devices that were
	// edited (quota keys added, LimitRange entries removed, Kueue
	// deviceClassMappings added).
	Governed int
	// Migrated counts workloads rewritten, Added the objects made
	// (ResourceClaimTemplates, shared ResourceClaims, DeviceClasses),
	// Changed the files changed or created, Failed the inputs that could
	// not be read, parsed or rewritten (each left as it was), kustomize
	// patches that could not be migrated among them.
	Migrated, Added, Changed, Failed int
	// Plan is every edit, with PlanOnly.
	Plan *plan.Plan
	// Units are the proofs of the kustomize units a change reached, in
	// the order found (nil: nothing to prove).
	Units []proof.Result
	// Documents are Input.Documents migrated: new objects follow their
	// workload, DeviceClasses come last.
	Documents []*yaml.RNode
}

// Rule ids of Migrate's own diagnostics.
const (
	RuleRewrite = "migrate/rewrite-failed"
)

// batchSize bounds the documents of one file held at once.
const batchSize = 256

// Migrate rewrites the input's device-plugin requests to DRA. It streams:
// each file (each batch of documents of a large one) is read, detected,
// planned, rewritten and handed to the output before the next, and only
// what naming needs (the object names taken) is kept across files. A file
// that fails to parse or rewrite is left as it was and reported; the
// others proceed.
func Migrate(ctx context.Context, in Input, opts MigrateOptions) (*MigrateResult, error) {
	if in.Documents != nil {
		return migrateDocuments(in, opts)
	}
	m, err := newMigration(in, opts)
	if err != nil {
		return nil, err
	}
	m.charts = in.charts(ctx, chartOptions{target: m.planner.Target(), strategy: opts.Plan.Strategy, force: opts.Plan.Force, set: m.set, dopts: m.dopts})
	m.skip = owned(m.charts)
	if err := m.prepass(ctx); err != nil {
		return nil, err
	}
	fopts := files.Options{Dir: in.Dir, Workers: readers(), Batch: batchSize, KeepData: true,
		Temporary: func(p string) { m.stale = append(m.stale, p) }, Skip: m.skip}
	err = stream.Run(ctx, in.Paths, in.Stdin, fopts, stream.Stages[detected]{Prepare: m.prepare, Step: m.step})
	if err != nil {
		// Interrupted: nothing half written stays, no temporary file either.
		if m.cur != nil && m.cur.out != nil {
			m.cur.out.Abort()
		}
		return nil, err
	}
	m.res.Diagnostics = append(m.res.Diagnostics, m.emit.Stale(m.stale)...)
	m.chartResults()
	if m.emit != nil {
		m.sides.Compose(m.tree)
		m.sideFiles()
		if m.emit.Hold != nil {
			m.prove()
		}
		if err := m.emit.CopyRest(); err != nil {
			return nil, err
		}
	}
	return m.done(), nil
}

// readers is how many files are read at once: more than cores, so that a
// reader waiting for its turn to be written does not leave a core idle
// while a large file ahead is still parsed. Each holds at most a batch,
// and there are at most 8 of them.
func readers() int { return min(4*runtime.GOMAXPROCS(0), 8) }

// migrateDocuments migrates Input.Documents in memory: the migrate step of
// a KRM function and of the chart strategy (charts.go), which reads no
// file and no chart.
func migrateDocuments(in Input, opts MigrateOptions) (*MigrateResult, error) {
	m, err := newMigration(in, opts)
	if err != nil {
		return nil, err
	}
	m.documents()
	return m.done(), nil
}

// newMigration sets a run up: the rules, the planner with its options
// (the defaults set once, here), the result and the output.
func newMigration(in Input, opts MigrateOptions) (*migration, error) {
	set := loadRules(opts.Rules)
	var resolver plan.Resolver = set
	if opts.Resolver != nil {
		resolver = opts.Resolver
	}
	popts := opts.Plan
	if popts.Target == (rules.Version{}) {
		popts.Target = rules.DefaultTarget
	}
	popts.Encoder = opts.Encoder
	if popts.Encoder == nil {
		popts.Encoder = set
		if popts.Force {
			popts.Encoder = rules.Forced{Set: set}
		}
	}
	places := &sync.Map{}
	dopts := detect.Options{TemplatePaths: set.TemplatePaths()}
	var tree *kustomize.Tree
	var kdiags inventory.Diagnostics
	if in.Documents == nil {
		tree, kdiags = kustomizeTree(in, dopts, set, popts.Target)
		popts.Patch = tree.PatchOf
		popts.MapAdds = tree.MapAddsFor
		popts.Kustomization = in.kustomization
		popts.DeviceClassFile = deviceClassFile(in)
		popts.Place = func(path string) string {
			if v, ok := places.Load(path); ok {
				return v.(string)
			}
			return ""
		}
	}
	planner, err := plan.NewPlanner(resolver, popts)
	if err != nil {
		return nil, err
	}
	m := &migration{set: set, places: places, in: in, opts: opts, planner: planner, dopts: dopts, tree: tree,
		res:   &MigrateResult{Diagnostics: append(inventory.Diagnostics{}, kdiags...), Failed: kustomize.FailedFiles(kdiags)},
		sides: &plan.SideFiles{DeviceClassFile: popts.DeviceClassFile, Detect: dopts}}
	if opts.PlanOnly {
		m.res.Plan = plan.NewPlan(popts)
		if len(tree.Roots()) > 0 && !opts.NoProof {
			// --plan proves the kustomize units too: every file is
			// rewritten and held, and none is released (prove.go).
			m.emit = &emit.Emitter{Mode: emit.Diff, Out: io.Discard, Roots: in.Paths, WorkDir: in.Dir, Hold: func(string) bool { return true }}
		}
	} else {
		if opts.Output == emit.Tree {
			if err := checkOutDir(in, opts.OutDir, opts.MergeOut); err != nil {
				return nil, err
			}
		}
		m.emit = &emit.Emitter{Mode: opts.Output, Out: opts.Out, Color: opts.Color, Dir: opts.OutDir, Roots: in.Paths, WorkDir: in.Dir, WriteReadOnly: opts.WriteReadOnly}
		if len(tree.Roots()) > 0 && opts.Output != emit.Stream && !opts.NoProof {
			// Every kustomize unit a change reaches is proved before its
			// files are written (prove.go).
			m.emit.Hold = tree.Covers
		}
	}
	return m, nil
}

// migration is one run of Migrate.
type migration struct {
	set     *rules.Set
	in      Input
	opts    MigrateOptions
	planner *plan.Planner
	dopts   detect.Options
	emit    *emit.Emitter
	res     *MigrateResult
	places  *sync.Map // path -> path relative to its input root
	stale   []string  // temporary files of interrupted runs

	cur *fileState
	dcs []*plan.Object
	// sides are the files the run adds to besides its inputs (claims
	// files, kustomizations, the DeviceClass file).
	sides *plan.SideFiles
	// charts are the Helm charts among the inputs (charts.go); skip
	// leaves the files they render out of the file walk.
	charts []*chartRun
	skip   func(string) bool
	// tree are the kustomize build units of the input (kustomize.go);
	// pending the files held back for their proof (prove.go).
	tree    *kustomize.Tree
	pending []*fileState
	// outside are the side files of units that lead outside the input
	// roots (prove.go).
	outside []refused
	// memory is what the applier did to a batch of Input.Documents
	// (documentBatch), unchanged the diagnostics of the documents it left
	// as they were, batches how many batches came.
	memory    *rewrite.Applied
	unchanged inventory.Diagnostics
	batches   int
}

// detected is the order-free work on one batch, done on the goroutine
// that read it: everything detection finds in it.
type detected struct {
	found detect.Result
	err   error // detection hit a bug
}

func (m *migration) prepare(f *files.File) detected {
	m.place(f)
	var p detected
	if err := guard(func() { p.found = detect.All(f.Docs, m.dopts) }); err != nil {
		p = detected{err: err}
	}
	return p
}

// place records the path of f relative to its input root, which names
// depend on (not on where the tree is).
func (m *migration) place(f *files.File) {
	if f.Root == "" || f.Root == "-" {
		return
	}
	rel := filepath.Base(f.Path)
	if f.Path != f.Root {
		if r, err := filepath.Rel(f.Root, f.Path); err == nil {
			rel = r
		}
	}
	m.places.Store(f.Path, rel)
}

// prepass reads the files once before the stream, parsing only documents
// that matter to other files: a ResourceClaim or ResourceClaimTemplate, so
// that no new object takes the name of one that exists in a file migrated
// later, and classic DRA parameters, so that a claim finds its parameters
// in a file migrated later. Stdin is not read twice: there, parameters are
// found when they come before their claims.
func (m *migration) prepass(ctx context.Context) error {
	var paths []string
	for _, p := range m.in.Paths {
		if p != "-" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	var mu sync.Mutex
	opts := files.Options{Dir: m.in.Dir, Batch: batchSize, Filter: detect.MayConcernOthers, Skip: m.skip}
	return files.Read(ctx, paths, nil, opts, func(f *files.File) error {
		found := detect.All(f.Docs, m.dopts)
		mu.Lock()
		defer mu.Unlock()
		m.place(f)
		m.planner.Learn(f.Path, found)
		return nil
	})
}

// fileState is one input file in progress (its batches arrive in order).
// It holds what the file's plans did until the file commits, but never
// the plans or documents themselves: memory does not grow with the file.
type fileState struct {
	path string
	out  *emit.File
	// unread is set when part of the file could not be read (parse errors,
	// templates): the file is left as it was.
	unread, bad bool
	failed      error
	// planned counts the requests of batches planned before a later batch
	// turned out unreadable.
	planned int
	// What the file's plans did, merged into the result when it commits.
	diags         inventory.Diagnostics
	workloads     []plan.WorkloadChoice
	plans         []*plan.FilePlan // PlanOnly
	claimsFile    string
	kustomization string
	claims        []*yaml.RNode
	migrated      int
	upgraded      int
	governed      int
	added         int
	lastNew       []byte // Stream: the New text of the last batch (the stream's end)
	classes       []*inventory.Document
	// held marks a file held back for the proof (prove.go), findings its
	// requests (kept only for such files).
	held     bool
	findings []inventory.Finding
	// lists name the claims lists its plans write (plan.ClaimListKeys).
	lists []string
	// pods are the pod-template paths of planned batches' workloads, for
	// kustomize name references (only when the input has kustomizations).
	pods []string
}

// step handles one batch of one file, in input order: what reading the
// file said, the batch's plan, and its rewrite and write as the Job.
func (m *migration) step(f *files.File, p detected) (stream.Job, error) {
	st := m.cur
	if f.Batch == 0 || st == nil {
		st = &fileState{path: f.Path}
		m.cur = st
	}
	m.admit(st, f, p)
	fp := m.plan(st, f, p)
	if f.Last {
		m.cur = nil
	}
	b := &batch{st: st, f: f, fp: fp}
	// A file no kustomize unit covers is proved batch by batch: its
	// claims are written beside its workloads (prove.go).
	b.prove = m.emit != nil && fp != nil && len(fp.Docs) > 0 && !m.holds(f.Path) && !m.opts.Plan.Share
	var job stream.Job
	switch {
	case m.memory != nil:
		job.Finish = func() { m.keep(b) }
	case m.emit != nil:
		job.Finish = func() { m.write(b) }
	case f.Last: // --plan
		job.Finish = func() { m.end(st) }
	}
	if fp != nil && !st.unread && st.failed == nil && job.Finish != nil {
		b.rewritten = true
		job.Work = func() {
			if err := guard(func() { b.apply(m.memory != nil) }); err != nil {
				b.err = err
			}
		}
	}
	return job, nil
}

// apply runs the one applier on the batch: on its text (rewrite.File), or
// on documents without text (rewrite.Documents).
func (b *batch) apply(memory bool) {
	if memory {
		b.applied, b.err = rewrite.Documents(b.f.Docs, b.fp)
		return
	}
	var before map[int][]proof.Pod
	if b.prove {
		before = plannedPods(b.f.Docs, b.fp)
	}
	b.res, b.err = rewrite.File(b.f.Data, b.f.Offset, b.f.Docs, b.fp)
	if b.prove && b.err == nil {
		b.problems = proveBatch(b.f.Path, before, b.res)
	}
}

// admit records what reading the batch said: a file not read, with a
// document that does not parse (docs/exit-codes.md: a file that cannot be
// parsed is left untouched; scan still reads its other documents),
// holding a template, or held by a kustomize patch kubedra cannot migrate
// is left as it is, each request in it said so.
func (m *migration) admit(st *fileState, f *files.File, p detected) {
	for _, d := range f.Diagnostics {
		m.res.Diagnostics = append(m.res.Diagnostics, inventory.Diagnostic{Severity: d.Severity, Rule: d.Rule, File: d.File, Line: d.Line,
			Message: "not migrated: " + d.Message})
	}
	if f.ParseErrors > 0 || f.Err != nil {
		st.bad = true
	}
	if f.Err != nil || f.NotFollowed || len(f.Diagnostics) > 0 {
		st.unread = true
	}
	if by := m.tree.HeldBy(f.Path); by != "" && !st.unread {
		for _, x := range p.found.Findings {
			m.res.Diagnostics = append(m.res.Diagnostics, m.tree.HeldDiagnostic(x, by))
		}
		st.unread = true
	} else if st.unread {
		for _, x := range p.found.Findings {
			m.res.Diagnostics = append(m.res.Diagnostics, plan.Unread(x))
		}
	}
	st.classes = append(st.classes, p.found.Classes...)
}

// plan plans a batch of a file that can be migrated (plan.Planner.Batch:
// device edits, DRA upgrades and governance edits in one FilePlan) and
// keeps what the plan does until the file ends; nil: nothing to edit.
func (m *migration) plan(st *fileState, f *files.File, p detected) *plan.FilePlan {
	var r *plan.FileResult
	if p.err == nil && !st.unread && st.failed == nil {
		p.err = guard(func() { r = m.planner.Batch(f.Path, p.found) })
	}
	if p.err != nil && st.failed == nil {
		st.failed = p.err
	}
	if st.unread || st.failed != nil {
		m.planner.ReserveIn(f.Path, p.found.Claims...)
		return nil
	}
	st.diags = append(st.diags, r.Diagnostics...)
	st.workloads = append(st.workloads, r.Workloads...)
	m.dcs = append(m.dcs, r.DeviceClasses...)
	st.planned += len(p.found.Findings)
	if m.holds(f.Path) {
		st.findings = append(st.findings, p.found.Findings...)
	}
	fp := r.Plan
	if fp == nil {
		return nil
	}
	if m.res.Plan != nil {
		st.plans = append(st.plans, fp)
	}
	if fp.ClaimsFile != "" {
		st.claimsFile, st.kustomization = fp.ClaimsFile, fp.Kustomization
	}
	for _, dp := range fp.Docs {
		st.migrated++
		st.added += len(dp.Objects)
	}
	if len(fp.Docs) > 0 && m.tree != nil && len(m.tree.Kustomizations) > 0 {
		for _, x := range p.found.Findings {
			st.pods = append(st.pods, x.PodTemplatePath)
		}
		st.lists = append(st.lists, plan.ClaimListKeys(fp)...)
	}
	st.upgraded += len(fp.Upgrades)
	st.governed += len(fp.Governance)
	return fp
}

// batch is one planned batch on its way out: rewritten (when it has edits)
// in parallel with later batches, written in input order.
type batch struct {
	st        *fileState
	f         *files.File
	fp        *plan.FilePlan
	rewritten bool // res (applied, for documents without text) and err are set
	res       rewrite.Result
	applied   rewrite.Applied
	err       error
	// prove says the batch is proved on its own, problems what it found.
	prove    bool
	problems []proof.Problem
}

// write hands one batch's pieces to its file's output, and ends the file
// after its last batch.
func (m *migration) write(j *batch) {
	st, f := j.st, j.f
	stream := m.emit.Mode == emit.Stream
	// A file of several batches is written as it is read; a file of one
	// batch only when its plan changes it. A stream is always passed on.
	if st.out == nil && st.failed == nil && (stream || !st.unread && (j.fp != nil || f.Batch > 0 || !f.Last)) {
		out, err := m.emit.Begin(st.path, false)
		if err != nil {
			st.failed = err
		}
		st.out = out
	}
	if st.out != nil {
		if j.err != nil && st.failed == nil {
			st.failed = j.err
		}
		if len(j.problems) > 0 && st.failed == nil {
			for _, p := range j.problems {
				st.diags = append(st.diags, p.Diagnostic(proof.RuleProof, st.path, "left unchanged: migrated, the file would change what the pod gets: ", "see docs/migrate.md#the-proof"))
			}
			st.failed = errProof
		}
		pieces := []rewrite.Piece{{Old: f.Data, New: f.Data}}
		if j.rewritten && st.failed == nil {
			pieces = j.res.Pieces
			st.claims = append(st.claims, j.res.Objects...)
			m.failures(st, j.res.Failures)
		}
		// A failed file's stream is still passed on (Abort prints it).
		if st.failed == nil || stream {
			st.lastNew = st.lastNew[:0]
			for _, pc := range pieces {
				if err := st.out.Change(pc.Old, pc.New); err != nil && st.failed == nil {
					st.failed = err
				}
				if stream {
					st.lastNew = append(st.lastNew, pc.New...)
				}
			}
		}
	}
	if f.Last {
		m.end(st)
	}
}

// end finishes a file: it is committed, or left as it was with the reason.
func (m *migration) end(st *fileState) {
	res := m.res
	if !st.unread && st.failed == nil && st.out != nil && st.path == "-" && len(m.dcs) > 0 && deviceClassFile(m.in) == "" {
		// Stdin: the DeviceClasses go at the end of the stream.
		st.failed = m.appendClasses(st)
	}
	switch {
	case st.unread:
		if st.out != nil {
			st.out.Abort()
		}
		if st.bad {
			res.Failed++
		}
		if st.planned > 0 {
			// Earlier batches of a large file were planned before a later
			// one could not be read: nothing of the file is written.
			res.Diagnostics = append(res.Diagnostics, plan.UnreadParts(st.path, st.planned))
		}
		return
	case st.failed != nil:
		if st.out != nil {
			st.out.Abort()
		}
	case st.out != nil:
		changed, err := st.out.Commit()
		st.failed = err
		// A file held back for the proof counts when it is written.
		st.held = changed && m.holds(st.path)
		if changed && err == nil && !st.held {
			res.Changed++
		}
	}
	if st.failed != nil {
		res.Diagnostics = append(res.Diagnostics, st.diags...)
		m.fail(st.path, st.failed)
		return
	}
	if st.migrated > 0 && m.tree != nil {
		// Every kustomization listing the file gets the name references.
		for _, k := range m.tree.Listing(st.path) {
			m.sides.NeedNameReferences(k.Path)
		}
		m.sides.AddPods(st.pods...)
		m.sides.Wrote(st.path, st.lists...)
	}
	if st.claimsFile != "" && len(st.claims) > 0 {
		m.sides.AddClaims(st.claimsFile, st.kustomization, st.claims)
	}
	if st.held {
		m.pending = append(m.pending, st) // merged once proved (prove.go)
		return
	}
	m.merge(st)
}

// merge adds what a file's plans did to the result.
func (m *migration) merge(st *fileState) {
	res := m.res
	res.Diagnostics = append(res.Diagnostics, st.diags...)
	if st.bad {
		res.Failed++ // documents that do not parse, or could not be edited
	}
	res.Workloads = append(res.Workloads, st.workloads...)
	res.Migrated += st.migrated
	res.Upgraded += st.upgraded
	res.Governed += st.governed
	res.Added += st.added
	if res.Plan != nil {
		res.Plan.Files = append(res.Plan.Files, st.plans...)
	}
}

// failures records the documents of a batch that keep their text (the
// others go on), at the line of the problem.
func (m *migration) failures(st *fileState, fails []rewrite.Failure) {
	for _, fl := range fails {
		st.bad = true
		st.migrated -= fl.Workloads
		st.added -= fl.Objects
		line, msg := inventory.LineOf(fl.Err, fl.Line)
		st.diags = append(st.diags, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleRewrite, File: st.path, Line: line,
			Message: "document left unchanged: " + msg})
	}
}

// fail records that the file at path was left as it was, and why.
func (m *migration) fail(path string, err error) {
	m.res.Failed++
	m.res.Diagnostics = append(m.res.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: ruleOf(err, RuleRewrite), File: path,
		Message: "left unchanged: " + err.Error()})
}

// appendClasses adds the DeviceClasses to the end of the stdin stream,
// unless the stream holds them already.
func (m *migration) appendClasses(st *fileState) error {
	tail := append([]byte(nil), st.lastNew...)
	out, err := rewrite.AppendObjects(tail, st.classes, m.classNodes())
	if err != nil {
		return err
	}
	return st.out.Change(nil, out[len(tail):])
}

func (m *migration) classNodes() []*yaml.RNode {
	var out []*yaml.RNode
	for _, o := range m.dcs {
		out = append(out, o.Node)
	}
	return out
}

// sideFiles writes the files migrate adds to besides its inputs
// (plan.SideFiles), each edited as rewrite.Side says.
func (m *migration) sideFiles() {
	for _, e := range m.sides.Edits(m.classNodes()) {
		m.side(e.Path, func(old []byte) ([]byte, error) {
			var existing []*inventory.Document
			if len(e.Objects) > 0 {
				existing = files.Parse(e.Path, old).Docs
			}
			return rewrite.Side(old, existing, e)
		})
	}
}

// side edits (or creates) one file that is not an input, through emit.
func (m *migration) side(path string, edit func(old []byte) ([]byte, error)) {
	changed, err := m.emit.Edit(path, edit)
	if errors.Is(err, confine.ErrOutside) && m.holds(path) {
		// Its unit is refused whole before the proof (confineUnits).
		m.outside = append(m.outside, refused{path, err})
	} else if err != nil {
		m.fail(path, err)
	} else if changed && !m.holds(path) {
		m.res.Changed++
	}
}

// checkOutDir refuses an --out folder that is an input, or inside an
// input folder (its copy would rewrite the input in place, or be copied
// into itself), and one that is not empty unless merge says to write into
// it.
func checkOutDir(in Input, dir string, merge bool) error {
	out := confine.Real(in.open(dir))
	for _, p := range in.Paths {
		if p == "-" {
			continue
		}
		root := confine.Real(in.open(p))
		fi, err := os.Stat(root)
		if out == root || err == nil && fi.IsDir() && confine.Under(root, out) {
			return fmt.Errorf("--out %s is the input %s or inside it: refused (write the copy elsewhere, or use -w to migrate in place)", dir, p)
		}
	}
	entries, err := os.ReadDir(out)
	if err == nil && len(entries) > 0 && !merge {
		return fmt.Errorf("--out %s is not empty: refused (remove it, choose a new folder, or pass --out-merge to write into it)", dir)
	}
	return nil
}

// refused is a file migrate would write outside the input roots.
type refused struct {
	path string
	err  error
}

// documents migrates Input.Documents in memory (a KRM function's items,
// a chart's render): the same step as a file's batch (detection, one plan,
// one applier), on copies of the nodes, as one stream named "-".
func (m *migration) documents() {
	out := m.documentBatch(m.in.Documents, 0)
	out = append(out, m.endDocuments()...)
	m.res.Documents = append(m.res.Documents, m.proveDocuments(out)...)
}

// documentBatch migrates in, documents in memory whose first is the
// first-th of its stream, as one batch of the stream "-", and returns what
// takes their place: each migrated document followed by its new objects,
// one that cannot be edited as it was (in's node), none for one removed.
// The batches of a stream are given in order; endDocuments ends it.
func (m *migration) documentBatch(in []*inventory.Document, first int) []*yaml.RNode {
	docs := make([]*inventory.Document, len(in))
	for i, d := range in {
		// Positions in the stream: items of different files may carry the
		// same index annotation.
		docs[i] = &inventory.Document{Node: d.Node.Copy(), Origin: inventory.Origin{Path: "-", Index: first + i, Line: d.Origin.Line, ListIndex: -1}}
	}
	f := &files.File{Path: "-", Docs: docs, Batch: m.batches}
	m.batches++
	applied := &rewrite.Applied{}
	m.memory = applied
	_ = stream.One(f, stream.Stages[detected]{Prepare: func(f *files.File) detected {
		p := m.prepare(f)
		m.planner.LearnQueued(p.found.Findings)
		return p
	}, Step: m.step})
	failed := map[int]bool{}
	for _, fl := range applied.Failures {
		failed[fl.Index] = true
	}
	var out []*yaml.RNode
	for i, d := range docs {
		switch at := first + i; {
		case failed[at]:
			out = append(out, in[i].Node) // as it was
		case !applied.Removed[at]:
			out = append(out, d.Node)
			out = append(out, applied.Objects[at]...)
		}
	}
	return out
}

// endDocuments ends the stream of documents in memory: what its plans did
// goes into the result, the documents left unchanged said after every
// plan's diagnostics (as for one batch), and it returns the DeviceClasses
// that follow the stream.
func (m *migration) endDocuments() []*yaml.RNode {
	if m.cur != nil {
		m.end(m.cur)
		m.cur = nil
	}
	m.res.Diagnostics = append(m.res.Diagnostics, m.unchanged...)
	m.unchanged = nil
	return m.classNodes()
}

// keep records what the applier did to a batch of documents without text
// (documentBatch): what write does for a file's batch.
func (m *migration) keep(b *batch) {
	if st := b.st; b.rewritten && st.failed == nil {
		if b.err != nil {
			st.failed = b.err
		} else {
			*m.memory = b.applied
			n := len(st.diags)
			m.failures(st, b.applied.Failures)
			m.unchanged = append(m.unchanged, st.diags[n:]...)
			st.diags = st.diags[:n]
		}
	}
}

// done finishes the result.
func (m *migration) done() *MigrateResult {
	r := m.res
	if d := m.planner.KueueUnmapped(); d != nil {
		r.Diagnostics = append(r.Diagnostics, *d)
	}
	r.Added += len(m.dcs)
	if r.Plan != nil {
		r.Plan.Workloads = r.Workloads
		r.Plan.DeviceClasses = m.dcs
		if len(m.dcs) == 0 {
			r.Plan.DeviceClassFile = ""
		}
		r.Plan.Diagnostics = r.Diagnostics
		r.Plan.Units = r.Units
		if r.Plan.Units == nil {
			r.Plan.Units = []proof.Result{}
		}
	}
	if m.in.StdinName != "" {
		for i := range r.Diagnostics {
			r.Diagnostics[i].File = m.in.name(r.Diagnostics[i].File)
		}
		for i := range r.Workloads {
			r.Workloads[i].File = m.in.name(r.Workloads[i].File)
		}
	}
	return r
}

// kustomization returns the kustomization file in dir (as given), or "".
func (in Input) kustomization(dir string) string {
	return kustomize.KustomizationIn(dir, func(p string) (os.FileInfo, error) { return os.Stat(in.open(p)) })
}

// deviceClassFile is where extended-resource DeviceClasses go: beside the
// first input (in it, when it is a folder); "" for stdin (the stream).
func deviceClassFile(in Input) string {
	if len(in.Paths) == 0 || in.Paths[0] == "-" {
		return ""
	}
	dir := in.Paths[0]
	if !in.isDir(dir) {
		dir = filepath.Dir(dir)
	}
	return filepath.Join(dir, "kubedra-deviceclasses.yaml")
}
