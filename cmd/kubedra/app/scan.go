package app

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
)

// ScanOptions are scan's flags and dependencies.
type ScanOptions struct {
	flags.Inputs
	Output report.Format
	Strict bool
	// ProgressAfter is how long a run goes before a progress line appears
	// on a terminal's stderr.
	ProgressAfter time.Duration
}

// NewCmdScan builds `kubedra scan`. runF replaces scanRun in tests.
func NewCmdScan(streams IOStreams, runF func(*ScanOptions) error) *cobra.Command {
	opts := &ScanOptions{Inputs: flags.NewInputs(streams), ProgressAfter: time.Second}
	cmd := &cobra.Command{
		Use:   "scan [PATH|-]...",
		Short: "Find device-plugin requests in manifests",
		Long: heredoc.Doc(`
			Scan manifests for containers that request devices through device plugins
			(extended resources such as nvidia.com/gpu, aws.amazon.com/neuron,
			vpc.amazonaws.com/efa) and show, per request, where it is, the scheduling
			hints next to it, and how it maps to Dynamic Resource Allocation:
			mappable, lossy, unmapped or dra-backed. Objects that count or govern devices
			(ResourceQuota, LimitRange, Kueue, Karpenter NodePool, Volcano Queue) have the
			status governance, with what migration does to them.

			Inputs are files, directories (recursive: .yaml, .yml, .json; hidden
			directories are not entered) and - for stdin. Multi-document YAML, JSON and
			kind: List are read. A directory with Chart.yaml is rendered as helm template
			would (--values, --set), and its findings point at the template line and the
			values key that fed them. Templates of charts that do not render, broken
			documents and symlinks leaving the scanned directory are listed as skipped,
			never dropped silently.

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
			if err := opts.Setup(cmd, args, "give files or directories, - for stdin, or --example"); err != nil {
				return err
			}
			if n := len(slices.DeleteFunc(slices.Clone(opts.Paths), func(p string) bool { return p != "-" })); n > 1 {
				return flags.Errorf("- (stdin) can be given only once")
			}
			return runOr(cmd, opts, runF, scanRun)
		},
	}
	report.AddFormatFlag(cmd, &opts.Output, report.ScanFormats, "")
	opts.Bind(cmd, "scan", "table", "print nothing on stderr (no progress line, no error message)")
	cmd.Flags().BoolVar(&opts.Strict, "strict", false, "exit 1 when any input is skipped (templates, symlinks), and parse every document")
	cmd.Flags().BoolVar(&opts.Example, "example", false, "scan the built-in example manifest")
	return cmd
}

// scanRun scans, renders the report on stdout and maps problems to exit
// codes.
func scanRun(ctx context.Context, opts *ScanOptions) error {
	// The live heap of a scan is findings, not documents: a soft limit
	// 64 MiB above it (through report encoding) keeps a 50 MB file's peak
	// RSS at ~120-130 MB (GOGC=400 gave ~155-190, reference/perf.md).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit(64 << 20)))
	in, set, profile, ignore, err := opts.Resolve()
	if err != nil {
		return err
	}
	sopts := action.ScanOptions{Rules: set, Target: opts.Target, Strict: opts.Strict, Ignore: ignore}
	var prog *report.Progress
	if opts.IO.ErrTTY && !opts.Quiet && opts.IO.ErrOut != nil {
		prog, sopts.OnFile = report.StartScanProgress(opts.IO.ErrOut, opts.ProgressAfter)
	}
	res, err := action.Scan(ctx, in, sopts)
	prog.Stop()
	if err != nil {
		return err
	}
	if err := report.Scan(opts.IO.Out, res.Report, opts.Output, report.Style{Profile: profile}); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	switch msg := report.ScanProblem(res.Failed, len(res.Report.Skipped), opts.Strict); {
	case msg == "":
		return nil
	case opts.Quiet:
		return &ExitCodeError{Code: ExitError}
	default:
		return &ExitCodeError{Code: ExitError, Err: errors.New(msg)}
	}
}

// memoryLimit is a soft memory limit extra bytes above the heap the
// process holds.
func memoryLimit(extra int64) int64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc) + extra
}
