package app

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync/atomic"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rules"
)

// ScanOptions are scan's flags and dependencies.
type ScanOptions struct {
	IO IOStreams
	// Context cancels a run; nil means context.Background().
	Context context.Context

	Paths      []string
	Output     report.Format
	Strict     bool
	RulesFiles []string
	Target     rules.Version
	Example    bool
	Color      string
	Quiet      bool
	// Config names the config file ("" finds .kubedra.yaml, "none" skips).
	Config string
	cfg    *action.Config

	// ProgressAfter is how long a run goes before a progress line appears
	// on a terminal's stderr.
	ProgressAfter time.Duration
}

// NewCmdScan builds `kubedra scan`. runF replaces scanRun in tests.
func NewCmdScan(streams IOStreams, runF func(*ScanOptions) error) *cobra.Command {
	opts := &ScanOptions{IO: streams, Target: rules.DefaultTarget, ProgressAfter: time.Second}
	cmd := &cobra.Command{
		Use:   "scan [PATH|-]...",
		Short: "Find device-plugin requests in manifests",
		Long: heredoc.Doc(`
			Scan manifests for containers that request devices through device plugins
			(extended resources such as nvidia.com/gpu, aws.amazon.com/neuron,
			vpc.amazonaws.com/efa) and show, per request, where it is, the scheduling
			hints next to it, and how it maps to Dynamic Resource Allocation:
			mappable, lossy, unmapped or dra-backed.

			Inputs are files, directories (recursive: .yaml, .yml, .json; hidden
			directories are not entered) and - for stdin. Multi-document YAML, JSON and
			kind: List are read. Unrendered Helm templates, broken documents and symlinks
			leaving the scanned directory are listed as skipped, never dropped silently.

			Exit codes:
			  0  the inputs were scanned (with or without findings)
			  1  an input could not be read or parsed, or a usage error; every other
			     input is still scanned and reported first. With --strict, any
			     skipped input (a template, a symlink) also exits 1.
		`),
		Example: heredoc.Doc(`
			# what the built-in example contains
			kubedra scan --example

			# a GitOps repository, as a table
			kubedra scan ./manifests

			# machine output for several inputs
			kubedra scan -o json ./a.yaml ./dir

			# rendered Helm charts
			helm template x ./chart | kubedra scan -
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = args
			opts.Context = cmd.Context()
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
			return scanRun(opts)
		},
	}
	report.AddFormatFlag(cmd, &opts.Output, report.ScanFormats, "")
	f := cmd.Flags()
	f.BoolVar(&opts.Strict, "strict", false, "exit 1 when any input is skipped (templates, symlinks), and parse every document")
	f.StringArrayVar(&opts.RulesFiles, "rules", nil, "rules file overlaid on the built-in rules (repeatable; later files win)")
	f.Var(&opts.Target, "target-version", fmt.Sprintf("Kubernetes version the DRA mapping must work on (%s to %s)", rules.MinTarget, rules.MaxTarget))
	f.BoolVar(&opts.Example, "example", false, "scan the built-in example manifest")
	f.StringVar(&opts.Color, "color", report.ColorAuto, "colour the table: auto, always or never (NO_COLOR is honoured)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stderr (no progress line, no error message)")
	f.StringVar(&opts.Config, "config", "", "config file (default: .kubedra.yaml in the working folder or above; none to disable)")
	return cmd
}

func (o *ScanOptions) validate() error {
	if _, err := report.ColorProfile(o.Color, false, nil); err != nil {
		return &FlagError{Err: fmt.Errorf("unknown --color %q: use auto, always or never", o.Color)}
	}
	if o.Example && len(o.Paths) > 0 {
		return FlagErrorf("--example takes no paths")
	}
	if !o.Example && len(o.Paths) == 0 {
		return FlagErrorf("no input: give files or directories, - for stdin, or --example")
	}
	if n := len(slices.DeleteFunc(slices.Clone(o.Paths), func(p string) bool { return p != "-" })); n > 1 {
		return FlagErrorf("- (stdin) can be given only once")
	}
	return nil
}

// scanRun scans, renders the report on stdout and maps problems to exit
// codes.
func scanRun(opts *ScanOptions) error {
	// A soft memory limit 64 MiB above the heap already held, through
	// report encoding too (a 10,000-finding JSON report is the last peak of
	// a big run): the GC catches up before a 50 MB stream of documents
	// grows the heap, whose live part is findings, not documents. A lazier
	// GC (GOGC=400, reference/perf.md) pushed that file's peak RSS to
	// ~155-190 MB; with this limit it is ~120-130 MB. Relative to what is
	// held, so an in-process scan after other work does not thrash.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit(64 << 20)))
	ctx := cmp.Or[context.Context](opts.Context, context.Background())
	set, err := loadRules(opts.IO, opts.RulesFiles)
	if err != nil {
		return fmt.Errorf("loading rules: %w", err)
	}
	profile, err := report.ColorProfile(opts.Color, opts.IO.OutTTY, opts.IO.Getenv)
	if err != nil {
		return &FlagError{Err: err}
	}
	in := inputOf(opts.IO, opts.Paths, opts.Example)
	var files, findings atomic.Int64
	sopts := action.ScanOptions{Rules: set, Target: opts.Target, Strict: opts.Strict, Ignore: opts.cfg.Ignores(workdir(opts.IO)),
		OnFile: func(n int) { files.Add(1); findings.Add(int64(n)) }}
	var prog *report.Progress
	if opts.IO.ErrTTY && !opts.Quiet && opts.IO.ErrOut != nil {
		prog = report.StartProgress(opts.IO.ErrOut, opts.ProgressAfter, func() string {
			return fmt.Sprintf("scanning: %d files, %d requests", files.Load(), findings.Load())
		})
	}
	res, err := action.Scan(ctx, in, sopts)
	prog.Stop()
	if err != nil {
		return err
	}
	if err := report.Scan(opts.IO.Out, res.Report, opts.Output, report.Style{Profile: profile}); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	var msg error
	switch {
	case res.Failed > 0:
		msg = fmt.Errorf("%d %s could not be read or parsed (listed under skipped)", res.Failed, report.Plural(res.Failed, "input", "inputs"))
	case opts.Strict && len(res.Report.Skipped) > 0:
		n := len(res.Report.Skipped)
		msg = fmt.Errorf("%d %s skipped (--strict)", n, report.Plural(n, "input", "inputs"))
	default:
		return nil
	}
	if opts.Quiet {
		msg = nil
	}
	return &ExitCodeError{Code: ExitError, Err: msg}
}

// memoryLimit is a soft memory limit extra bytes above the heap the
// process holds.
func memoryLimit(extra int64) int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc) + extra
}

// inputOf is what a manifest command reads: its paths from the working
// folder, or the embedded example.
func inputOf(streams IOStreams, paths []string, example bool) action.Input {
	in := action.Input{Paths: paths, Stdin: streams.In, Dir: workdir(streams)}
	if example {
		in.Paths, in.Stdin, in.StdinName = []string{"-"}, bytes.NewReader(ExampleManifest()), ExamplePath
	}
	return in
}
