package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// ScanOptions are scan's flags and dependencies.
type ScanOptions struct {
	IO IOStreams
	// Context cancels a run; nil means context.Background().
	Context context.Context

	Paths      []string
	Output     string
	Strict     bool
	RulesFiles []string
	Target     rules.Version
	Example    bool
	Color      string
	Quiet      bool
	// Config names the config file ("" finds .kubedra.yaml, "none" skips).
	Config string
	cfg    *Config

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
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "table", "output format: "+strings.Join(report.ScanFormats, ", "))
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
	if !slices.Contains(report.ScanFormats, o.Output) {
		return FlagErrorf("unknown output format %q: use %s", o.Output, strings.Join(report.ScanFormats, ", "))
	}
	switch o.Color {
	case report.ColorAuto, report.ColorAlways, report.ColorNever:
	default:
		return FlagErrorf("unknown --color %q: use auto, always or never", o.Color)
	}
	if o.Example && len(o.Paths) > 0 {
		return FlagErrorf("--example takes no paths")
	}
	if !o.Example && len(o.Paths) == 0 {
		return FlagErrorf("no input: give files or directories, - for stdin, or --example")
	}
	if n := strings.Count(strings.Join(o.Paths, "\x00")+"\x00", "-\x00"); n > 1 {
		return FlagErrorf("- (stdin) can be given only once")
	}
	return nil
}

// scanResult is a finished scan: the report and how many inputs failed.
type scanResult struct {
	Report plan.Report
	// Errors counts inputs that could not be read or parsed.
	Errors int
}

// scanRun scans, renders the report on stdout and maps problems to exit
// codes.
func scanRun(opts *ScanOptions) error {
	// Keep the soft memory limit of scanInputs while the report is encoded
	// too: a 10,000-finding JSON report is the last peak of a big run.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(scanMemoryLimit()))
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	set, err := rules.Load(opts.RulesFiles...)
	if err != nil {
		return fmt.Errorf("loading rules: %w", err)
	}
	profile, err := report.ColorProfile(opts.Color, opts.IO.OutTTY, opts.IO.Getenv)
	if err != nil {
		return &FlagError{Err: err}
	}
	errOut := opts.IO.ErrOut
	if opts.Quiet || errOut == nil {
		errOut = io.Discard
	}

	paths, stdin := opts.Paths, opts.IO.In
	if opts.Example {
		paths, stdin = []string{"-"}, bytes.NewReader(ExampleManifest())
	}
	var prog *progress
	if opts.IO.ErrTTY && !opts.Quiet {
		prog = startProgress(errOut, opts.ProgressAfter)
	}
	res, err := scanInputs(ctx, paths, stdin, scanConfig{
		detect:  detect.Options{TemplatePaths: set.TemplatePaths()},
		strict:  opts.Strict,
		rename:  map[bool]string{true: ExamplePath}[opts.Example],
		resolve: set, target: opts.Target, progress: prog,
	})
	prog.stop()
	if err != nil {
		return err
	}
	opts.cfg.ignoreIn(&res.Report, opts.IO)
	if err := report.Scan(opts.IO.Out, res.Report, opts.Output, report.Style{Profile: profile}); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}

	var msg error
	switch {
	case res.Errors > 0:
		msg = fmt.Errorf("%d input%s could not be read or parsed (listed under skipped)", res.Errors, pluralS(res.Errors))
	case opts.Strict && len(res.Report.Skipped) > 0:
		n := len(res.Report.Skipped)
		msg = fmt.Errorf("%d input%s skipped (--strict)", n, pluralS(n))
	default:
		return nil
	}
	if opts.Quiet {
		msg = nil
	}
	return &ExitCodeError{Code: ExitError, Err: msg}
}

func pluralS(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// scanConfig is what scanInputs needs besides the inputs.
type scanConfig struct {
	detect detect.Options
	// strict parses every document (no prefilter), so that syntax errors
	// anywhere are reported.
	strict bool
	// rename, when set, is reported instead of "-" (the embedded example).
	rename   string
	resolve  plan.Resolver
	target   rules.Version
	progress *progress
}

// scanMemoryLimit is the soft heap limit of a scan (see scanInputs): 64 MiB
// above what the process already holds, so that a scan run in-process after
// other work (tests, benchmarks) does not spend its time collecting.
func scanMemoryLimit() int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc) + 64<<20
}

// scanInputs is the scan pipeline: files -> detect -> plan.Items. Files are
// read and detected in parallel; only findings and skips are kept, so
// memory does not grow with the number of files.
func scanInputs(ctx context.Context, paths []string, stdin io.Reader, c scanConfig) (scanResult, error) {
	// The soft memory limit makes the GC catch up before a huge input (a
	// 50 MB stream of documents) grows the heap past 64 MB (the live heap
	// of such a run is ~10-40 MB: findings, not documents). A lazier GC
	// (GOGC=400, reference/perf.md) saved CPU but measured no faster here and
	// pushed the 50 MB file's peak RSS to ~155-190 MB, over the 150 MB
	// budget (issue 2); with the default and this limit it is ~120-130 MB.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(scanMemoryLimit()))

	var (
		mu        sync.Mutex
		findings  []inventory.Finding
		skips     []inventory.Skip
		nFiles    int
		documents int
		errs      int
	)
	fopts := files.Options{Batch: 256}
	if !c.strict {
		fopts.Filter = detect.MayRequest
	}
	err := files.Read(ctx, paths, stdin, fopts, func(f *files.File) error {
		fs := detect.Documents(f.Docs, c.detect)
		if c.rename != "" && f.Path == "-" {
			for i := range fs {
				fs[i].Origin.Path = c.rename
			}
			for i := range f.Skips {
				f.Skips[i].File = c.rename
			}
		}
		mu.Lock()
		defer mu.Unlock()
		findings = append(findings, fs...)
		skips = append(skips, f.Skips...)
		documents += f.Documents
		errs += f.ParseErrors
		if f.Err != nil {
			errs++
		}
		if f.Last && f.Err == nil && !f.NotFollowed {
			nFiles++
		}
		c.progress.add(f.Last, len(fs))
		return nil
	})
	if err != nil {
		return scanResult{}, err
	}
	slices.SortStableFunc(skips, func(a, b inventory.Skip) int {
		if a.File != b.File {
			return strings.Compare(a.File, b.File)
		}
		return a.Line - b.Line
	})
	items := plan.Items(findings, c.resolve, rules.Options{Target: c.target})
	return scanResult{Report: plan.NewReport(items, skips, nFiles, documents), Errors: errs}, nil
}

// progress prints a line on a terminal's stderr once a run has taken more
// than a moment, and clears it at the end (kind's logger does the same
// for its spinner: only on a smart terminal).
type progress struct {
	w        io.Writer
	files    atomic.Int64
	findings atomic.Int64
	done     chan struct{}
	wg       sync.WaitGroup
	shown    bool
}

func startProgress(w io.Writer, after time.Duration) *progress {
	p := &progress{w: w, done: make(chan struct{})}
	p.wg.Go(func() {
		select {
		case <-p.done:
			return
		case <-time.After(after):
		}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			p.shown = true
			fmt.Fprintf(p.w, "\r\x1b[Kscanning: %d files, %d requests", p.files.Load(), p.findings.Load())
			select {
			case <-p.done:
				fmt.Fprint(p.w, "\r\x1b[K")
				return
			case <-tick.C:
			}
		}
	})
	return p
}

func (p *progress) add(fileDone bool, findings int) {
	if p == nil {
		return
	}
	if fileDone {
		p.files.Add(1)
	}
	p.findings.Add(int64(findings))
}

func (p *progress) stop() {
	if p == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
}
