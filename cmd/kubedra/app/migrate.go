package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// MigrateOptions are migrate's flags and dependencies.
type MigrateOptions struct {
	IO IOStreams

	Paths             []string
	Filenames         []string
	Write             bool
	Out               string
	ClaimsFile        string
	Strategy          string
	Target            rules.Version
	AllowLossy        bool
	Share             bool
	KeepNodeSelectors bool
	Force             bool
	Rules             []string
	Plan              bool
	Example           bool
	Quiet             bool
	Config            string

	// ExampleManifest is what --example migrates.
	ExampleManifest []byte
	// Color is --color: auto, always or never.
	Color string

	cfg *Config
}

// NewCmdMigrate builds `kubedra migrate`.
func NewCmdMigrate(streams IOStreams, runF func(*MigrateOptions) error) *cobra.Command {
	opts := &MigrateOptions{IO: streams, Target: rules.DefaultTarget, Strategy: string(plan.Claims), ExampleManifest: ExampleManifest()}
	cmd := &cobra.Command{
		Use:   "migrate [PATH|-]...",
		Short: "Rewrite workloads from device-plugin requests to DRA resource claims",
		Long: heredoc.Doc(`
			Rewrite every device-plugin request a rule maps (nvidia.com/gpu: 2, ...) into
			Dynamic Resource Allocation: the resource leaves limits and requests, the pod
			template gains resourceClaims that reference a new ResourceClaimTemplate, and
			each container gains resources.claims. Device-label nodeSelector and affinity
			terms become CEL selectors and are removed (--keep-node-selectors keeps them).

			Nothing else changes: comments, key order, quoting and indentation are kept,
			files and documents without device requests stay byte-identical, and running
			migrate twice changes nothing the second time. Lossy and unmapped requests are
			left as they are and reported on stderr with file:line, why, and what to do.
			Helm templates ({{ }}) are never rewritten; device resources set in Helm
			values files are reported.

			Output: a unified diff on stdout (default), the files rewritten in place
			(-w, atomically, modes kept), a migrated copy of the tree (--out DIR), or, for
			- (stdin), the migrated stream on stdout. A file that fails to parse or rewrite
			is left untouched and reported; the others proceed, and the exit code is 1.

			Strategies: claims (default) rewrites workloads; extended-resource leaves them
			unchanged and writes DeviceClasses with extendedResourceName (KEP-5004; needs
			DRAExtendedResource, on by default from 1.36, or --force); auto picks per
			workload and says why.
		`),
		Example: heredoc.Doc(`
			# review the change as a diff
			$ kubedra migrate ./manifests

			# rewrite in place, or into a copy of the tree
			$ kubedra migrate -w ./manifests
			$ kubedra migrate --out ./migrated ./manifests

			# a rendered stream
			$ kustomize build overlays/prod | kubedra migrate - | kubectl apply --dry-run=server -f -

			# choose per workload for a 1.37 cluster
			$ kubedra migrate --strategy auto --target-version 1.37 ./manifests
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = append(args, opts.Filenames...)
			cfg, err := configure(cmd.Flags(), opts.IO, opts.Config)
			if err != nil {
				return err
			}
			opts.cfg = cfg
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			if !opts.Example {
				if done, err := answerResourceList(&opts.IO, opts.Paths, "migrate"); done {
					return err
				}
			}
			return migrateRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.Filenames, "filename", "f", nil, "file, folder or - to migrate (repeatable; same as a PATH argument)")
	f.BoolVarP(&opts.Write, "write", "w", false, "rewrite the files in place (atomically)")
	f.StringVar(&opts.Out, "out", "", "write a migrated copy of the input tree into this folder")
	f.StringVar(&opts.ClaimsFile, "claims-file", "", "put new claim templates into this sibling file (added to kustomization.yaml when there is one) instead of after each workload")
	f.StringVar(&opts.Strategy, "strategy", string(plan.Claims), "claims, extended-resource or auto")
	f.Var(&opts.Target, "target-version", "Kubernetes version the output must work on (1.32 to 1.37)")
	f.Var(&opts.Target, "target", "same as --target-version")
	_ = f.MarkHidden("target")
	f.BoolVar(&opts.AllowLossy, "allow-lossy", false, "apply documented lossy mappings (sharing, rounding) instead of leaving them")
	f.BoolVar(&opts.Share, "share", false, "with --allow-lossy: map time-slicing/MPS sharing to one shared ResourceClaim instead of exclusive per-pod claims")
	f.BoolVar(&opts.KeepNodeSelectors, "keep-node-selectors", false, "keep device-label nodeSelector and affinity terms that became CEL selectors")
	f.BoolVar(&opts.Force, "force", false, "allow --strategy extended-resource on targets where DRAExtendedResource is off by default")
	f.StringArrayVar(&opts.Rules, "rules", nil, "user rules file, overlaid on the built-in rules (repeatable)")
	f.BoolVar(&opts.Plan, "plan", false, "print the migration plan as YAML on stdout and change nothing")
	f.BoolVar(&opts.Example, "example", false, "migrate the built-in example manifest")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no summary on stderr")
	f.StringVar(&opts.Color, "color", report.ColorAuto, "colour the diff: auto, always or never (NO_COLOR is honoured)")
	f.StringVar(&opts.Config, "config", "", "config file (default: .kubedra.yaml in the working folder or above; none to disable)")
	return cmd
}

func (o *MigrateOptions) validate() error {
	if o.Example {
		if len(o.Paths) > 0 {
			return FlagErrorf("--example takes no paths")
		}
		o.Paths = []string{"-"}
	}
	if len(o.Paths) == 0 {
		return FlagErrorf("no input: give a path, a folder or - for stdin")
	}
	if o.Write && o.Out != "" {
		return FlagErrorf("-w and --out do not go together")
	}
	if slices.Contains(o.Paths, "-") {
		if len(o.Paths) > 1 {
			return FlagErrorf("- (stdin) cannot be mixed with other paths: its migrated stream goes to stdout")
		}
		if o.Write || o.Out != "" {
			return FlagErrorf("stdin is migrated to stdout: -w and --out need paths")
		}
		if o.ClaimsFile != "" {
			return FlagErrorf("--claims-file needs paths: stdin is migrated to one stream")
		}
	}
	if o.ClaimsFile != "" && (strings.ContainsRune(o.ClaimsFile, '/') || strings.ContainsRune(o.ClaimsFile, filepath.Separator) || o.ClaimsFile == "." || o.ClaimsFile == "..") {
		return FlagErrorf("--claims-file %q: give a file name, not a path (it is created beside each migrated file)", o.ClaimsFile)
	}
	if _, err := report.ColorProfile(o.Color, false, nil); err != nil {
		return &FlagError{Err: err}
	}
	if err := plan.CheckStrategy(plan.Strategy(o.Strategy), o.Target, o.Force); err != nil {
		return &FlagError{Err: err}
	}
	return nil
}

// input is what migrate keeps of one file between reading and writing.
type input struct {
	path string
	data []byte
	bad  bool // parse errors or unreadable: never written
	skip bool // has parts not read (templates): never written
}

// migrateRun runs the pipeline: read -> detect -> plan -> rewrite -> emit.
func migrateRun(ctx context.Context, opts *MigrateOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	set, err := rules.Load(opts.rulesFiles()...)
	if err != nil {
		return err
	}
	errOut := opts.IO.ErrOut
	if opts.Quiet {
		errOut = io.Discard
	}
	stdin := opts.IO.In
	if opts.Example {
		stdin = bytes.NewReader(opts.ExampleManifest)
	}

	// Read and detect. Only files with findings keep their bytes.
	var (
		inputs   []*input
		byPath   = map[string]*input{}
		findings []inventory.Finding
		existing []plan.ObjectRef
		diags    []plan.Diagnostic
		failed   int
	)
	dopts := detect.Options{TemplatePaths: set.TemplatePaths()}
	// No prefilter: every document is parsed, so that a broken file is
	// reported (and fails the run) even when it holds no device request.
	fopts := files.Options{KeepData: true, Ordered: true}
	err = files.Read(ctx, opts.Paths, stdin, fopts, func(f *files.File) error {
		in := &input{path: f.Path}
		if f.Err != nil || f.ParseErrors > 0 {
			in.bad = true
			failed++
		}
		in.skip = len(f.Skips) > 0
		for _, s := range f.Skips {
			sev := plan.Warning
			if in.bad {
				sev = plan.Error
			}
			diags = append(diags, plan.Diagnostic{Severity: sev, File: s.File, Line: s.Line, Message: "not migrated: " + s.Reason})
		}
		var fs []inventory.Finding
		for _, d := range f.Docs {
			k := d.Node.GetKind()
			if k == "ResourceClaimTemplate" || k == "ResourceClaim" {
				existing = append(existing, plan.ObjectRef{Kind: k, Namespace: d.Node.GetNamespace(), Name: d.Node.GetName()})
			}
			if emit.IsHelmValues(f.Path) && d.Node.GetKind() == "" {
				diags = append(diags, emit.HelmValues(d)...)
				continue
			}
			fs = append(fs, detect.Document(d, dopts)...)
		}
		if len(fs) > 0 || f.Path == "-" {
			in.data = f.Data
		}
		if len(fs) > 0 && (in.bad || in.skip) {
			for _, x := range fs {
				diags = append(diags, plan.Diagnostic{Severity: plan.Warning, File: x.Origin.Path, Line: x.Line, Object: x.Kind + "/" + x.Name,
					Container: x.Container, Resource: x.Resource, Message: "left unchanged: the file has parts kubedra could not read (see above)",
					Fix: "render templates first (helm template, kustomize build) and migrate the output"})
			}
			fs = nil
		}
		findings = append(findings, fs...)
		inputs = append(inputs, in)
		byPath[in.path] = in
		return nil
	})
	if err != nil {
		return err
	}
	opts.applyIgnores(findings)

	// Plan.
	p, err := plan.Build(findings, set, plan.Options{
		Strategy: plan.Strategy(opts.Strategy), Target: opts.Target, AllowLossy: opts.AllowLossy, Share: opts.Share,
		KeepNodeSelectors: opts.KeepNodeSelectors, Force: opts.Force, ClaimsFile: opts.ClaimsFile,
		DeviceClassFile: deviceClassFile(opts.Paths), Kustomization: kustomization, Existing: existing,
		Encoder: encoder{Set: set, force: opts.Force},
	})
	if err != nil {
		return &FlagError{Err: err}
	}
	p.Diagnostics = append(diags, p.Diagnostics...)
	if opts.Plan {
		enc := yaml.NewEncoder(opts.IO.Out)
		if err := enc.Encode(p); err != nil {
			return err
		}
		summarize(errOut, p, 0, failed, opts.stdinName())
		return exitFor(failed)
	}

	// Rewrite and emit.
	// The diff is coloured by report's single colour decision (STYLE §4).
	prof, err := report.ColorProfile(opts.Color, opts.IO.OutTTY, opts.IO.Getenv)
	if err != nil {
		return &FlagError{Err: err}
	}
	e := &emit.Emitter{Mode: emit.Diff, Out: opts.IO.Out, Color: prof != colorprofile.NoTTY, Dir: opts.Out, Roots: opts.Paths}
	switch {
	case opts.Write:
		e.Mode = emit.Write
	case opts.Out != "":
		e.Mode = emit.Tree
	}
	planFor := map[string]*plan.FilePlan{}
	for _, fp := range p.Files {
		planFor[fp.Path] = fp
	}
	claims := map[string][]*yaml.RNode{}
	var claimOrder []string
	kustom := map[string][]string{}
	var kustomOrder []string
	changed := 0
	fail := func(path string, err error) {
		failed++
		p.Diagnostics = append(p.Diagnostics, plan.Diagnostic{Severity: plan.Error, File: path, Message: "left unchanged: " + err.Error()})
	}
	var dcs []*yaml.RNode
	for _, o := range p.DeviceClasses {
		dcs = append(dcs, o.Node)
	}
	for _, in := range inputs {
		fp := planFor[in.path]
		if in.path == "-" {
			out := in.data
			if fp != nil {
				res, err := rewrite.File(in.data, fp)
				if err != nil {
					fail(in.path, err)
				} else {
					out = res.Content
				}
			}
			if len(dcs) > 0 {
				if out, err = rewrite.AppendObjects(out, dcs); err != nil {
					return err
				}
			}
			if _, err := opts.IO.Out.Write(out); err != nil {
				return err
			}
			if !bytes.Equal(out, in.data) {
				changed++
			}
			continue
		}
		if fp == nil || in.bad || in.skip {
			continue
		}
		res, err := rewrite.File(in.data, fp)
		if err != nil {
			fail(in.path, err)
			continue
		}
		if err := e.Emit(emit.Change{Path: in.path, Old: in.data, New: res.Content}); err != nil {
			fail(in.path, err)
			continue
		}
		if res.Changed(in.data) {
			changed++
		}
		if fp.ClaimsFile != "" && len(res.Objects) > 0 {
			if _, ok := claims[fp.ClaimsFile]; !ok {
				claimOrder = append(claimOrder, fp.ClaimsFile)
			}
			claims[fp.ClaimsFile] = append(claims[fp.ClaimsFile], res.Objects...)
			if fp.Kustomization != "" {
				if _, ok := kustom[fp.Kustomization]; !ok {
					kustomOrder = append(kustomOrder, fp.Kustomization)
				}
				rel, _ := filepath.Rel(filepath.Dir(fp.Kustomization), fp.ClaimsFile)
				if !slices.Contains(kustom[fp.Kustomization], rel) {
					kustom[fp.Kustomization] = append(kustom[fp.Kustomization], rel)
				}
			}
		}
	}
	// New and edited side files: claims files, kustomizations, DeviceClasses.
	side := func(path string, edit func(old []byte) ([]byte, error)) {
		old, err := readSide(path, byPath)
		isNew := errors.Is(err, os.ErrNotExist)
		if err != nil && !isNew {
			fail(path, err)
			return
		}
		nw, err := edit(old)
		if err != nil {
			fail(path, err)
			return
		}
		if !isNew && bytes.Equal(old, nw) {
			return
		}
		if err := e.Emit(emit.Change{Path: path, Old: old, New: nw, IsNew: isNew}); err != nil {
			fail(path, err)
			return
		}
		changed++
	}
	for _, path := range claimOrder {
		side(path, func(old []byte) ([]byte, error) { return rewrite.AppendObjects(old, claims[path]) })
	}
	for _, path := range kustomOrder {
		side(path, func(old []byte) ([]byte, error) {
			for _, r := range kustom[path] {
				var err error
				if old, err = rewrite.AddResource(old, r); err != nil {
					return nil, err
				}
			}
			return old, nil
		})
	}
	if len(dcs) > 0 && p.DeviceClassFile != "" {
		side(p.DeviceClassFile, func(old []byte) ([]byte, error) { return rewrite.AppendObjects(old, dcs) })
	}
	if err := e.CopyRest(); err != nil {
		return err
	}
	summarize(errOut, p, changed, failed, opts.stdinName())
	return exitFor(failed)
}

// readSide reads a side file; one migrate already holds is taken from
// memory (its original bytes: side files are only appended to).
func readSide(path string, byPath map[string]*input) ([]byte, error) {
	if in, ok := byPath[path]; ok && in.data != nil {
		return in.data, nil
	}
	return os.ReadFile(path)
}

func exitFor(failed int) error {
	if failed > 0 {
		return &ExitCodeError{Code: ExitError}
	}
	return nil
}

// stdinName is how reports name stdin: the example's file name for
// --example (as scan --example does), else "-".
func (o *MigrateOptions) stdinName() string {
	if o.Example {
		return ExamplePath
	}
	return ""
}

func (o *MigrateOptions) rulesFiles() []string {
	return o.Rules
}

// applyIgnores applies .kubedra.yaml ignores to findings.
func (o *MigrateOptions) applyIgnores(fs []inventory.Finding) {
	if o.cfg == nil {
		return
	}
	items := make([]plan.Item, len(fs))
	for i, f := range fs {
		items[i] = plan.Item{File: f.Origin.Path, Index: f.Origin.Index, Finding: f, Ignored: f.Ignore}
	}
	o.cfg.ApplyIgnores(items, workdir(o.IO))
	for i := range fs {
		fs[i].Ignore = items[i].Ignored
	}
}

// deviceClassFile is where extended-resource DeviceClasses go: beside the
// first input (in it, when it is a folder); "" for stdin (the stream).
func deviceClassFile(paths []string) string {
	if len(paths) == 0 || paths[0] == "-" {
		return ""
	}
	dir := paths[0]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	return filepath.Join(dir, "kubedra-deviceclasses.yaml")
}

// kustomization returns the kustomization file in dir, or "".
func kustomization(dir string) string {
	for _, n := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		p := filepath.Join(dir, n)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// encoder adapts *rules.Set to plan.Encoder; --force lets DeviceClasses be
// written for targets where the gate is off by default.
type encoder struct {
	*rules.Set
	force bool
}

func (e encoder) DeviceClass(d rules.Decision, target rules.Version) (*yaml.RNode, error) {
	if e.force {
		return e.Set.DeviceClassForced(d, target)
	}
	return e.Set.DeviceClass(d, target)
}

// summarize prints what happened, for people, on stderr.
// stdinName names "-" in locations (the embedded example's file name for
// --example).
func summarize(w io.Writer, p *plan.Plan, changed, failed int, stdinName string) {
	name := func(f string) string {
		if f == "-" && stdinName != "" {
			return stdinName
		}
		return f
	}
	for _, d := range p.Diagnostics {
		d.File = name(d.File)
		loc := d.File
		if d.Line > 0 {
			loc = fmt.Sprintf("%s:%d", d.File, d.Line)
		}
		what := ""
		if d.Object != "" && d.Object != "/" {
			what = " " + d.Object
			if d.Container != "" {
				what += " container " + d.Container
			}
		}
		if d.Resource != "" {
			what += " " + d.Resource
		}
		if what != "" {
			what += ":"
		}
		fmt.Fprintf(w, "%s: %s:%s %s\n", loc, d.Severity, what, d.Message)
		if d.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", d.Fix)
		}
	}
	for _, c := range p.Workloads {
		fmt.Fprintf(w, "%s:%d: %s: %s (%s)\n", name(c.File), c.Line, c.Object, c.Strategy, c.Why)
	}
	workloads, objects := 0, 0
	for _, f := range p.Files {
		workloads += len(f.Docs)
		for _, d := range f.Docs {
			objects += len(d.Objects)
		}
	}
	fmt.Fprintf(w, "migrate: %d %s migrated, %d %s added, %d %s changed",
		workloads, plural(workloads, "workload", "workloads"), objects+len(p.DeviceClasses), plural(objects+len(p.DeviceClasses), "object", "objects"),
		changed, plural(changed, "file", "files"))
	if failed > 0 {
		fmt.Fprintf(w, ", %d %s failed", failed, plural(failed, "file", "files"))
	}
	fmt.Fprintln(w)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
