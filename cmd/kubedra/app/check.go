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
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Gates for --fail-on.
const (
	FailOnAny      = "any"
	FailOnUnmapped = "unmapped"
	FailOnLossy    = "lossy"
)

// checkFormats are the formats check renders itself; the scan formats
// (table, wide, json, yaml) go through the scan renderers.
var checkFormats = []string{"sarif", "junit", "markdown", "github"}

// CheckOptions are check's flags and dependencies.
type CheckOptions struct {
	IO IOStreams

	Paths     []string
	Filenames []string
	Output    string
	FailOn    string
	Rules     []string
	Target    rules.Version
	Reports   []string
	Color     string
	Config    string
	Strict    bool
	Quiet     bool

	// cfg is the loaded .kubedra.yaml (ignores apply after planning).
	cfg *Config
	// name is the command as invoked ("kubedra check", "kubectl dra check").
	name string
}

// NewCmdCheck builds `kubedra check`.
func NewCmdCheck(streams IOStreams, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{IO: streams, Target: rules.DefaultTarget}
	cmd := &cobra.Command{
		Use:   "check [PATH|-]...",
		Short: "Fail CI when manifests still request devices through device plugins",
		Long: heredoc.Doc(`
			Scan manifests like kubedra scan and gate on the result: exit 0 when
			nothing fails the gate, 2 when a finding does, 1 when kubedra itself
			failed (an input could not be read or parsed; every other input is
			still checked and reported).

			--fail-on picks the gate:
			  any       every device-plugin request that is not ignored (default);
			            DRA-backed names (KEP-5004) never fail
			  lossy     requests that cannot move to DRA without loss: lossy or unmapped
			  unmapped  requests no rule maps

			A workload is opted out with the annotation kubedra.io/ignore: "<reason>"
			(the reason is required and shown in reports), or by an ignore entry in
			.kubedra.yaml. Flags can also be set with KUBEDRA_* environment variables
			(--fail-on is KUBEDRA_FAIL_ON) and in .kubedra.yaml; flags win over the
			environment, which wins over the file. See docs/config.md.

			A summary line goes to stderr; stdout carries the report only.
		`),
		Example: heredoc.Doc(`
			# the CI gate
			$ kubedra check ./manifests

			# several reports from one run, e.g. for code scanning and test views
			$ kubedra check --report sarif=kubedra.sarif --report junit=kubedra.xml ./manifests

			# annotations on a GitHub pull request
			$ kubedra check -o github ./manifests

			# rendered manifests
			$ kustomize build overlays/prod | kubedra check -
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Paths = append(args, opts.Filenames...)
			opts.name = cmd.CommandPath()
			cfg, err := configure(cmd.Flags(), opts.IO, opts.Config)
			if err != nil {
				return err
			}
			opts.cfg = cfg
			if len(opts.Paths) == 0 {
				return FlagErrorf("no input: give a path, a folder or - for stdin")
			}
			if !slices.Contains([]string{FailOnAny, FailOnUnmapped, FailOnLossy}, opts.FailOn) {
				return FlagErrorf("--fail-on %q: use any, unmapped or lossy", opts.FailOn)
			}
			if !validCheckFormat(opts.Output) {
				return FlagErrorf("unknown output format %q: use %s", opts.Output, strings.Join(allCheckFormats(), ", "))
			}
			for _, r := range opts.Reports {
				if _, _, err := parseReportFlag(r); err != nil {
					return err
				}
			}
			if runF != nil {
				return runF(opts)
			}
			if done, err := answerResourceList(&opts.IO, opts.Paths, "check"); done {
				return err
			}
			return checkRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&opts.Filenames, "filename", "f", nil, "file, folder or - to check (repeatable; same as a PATH argument)")
	f.StringVarP(&opts.Output, "output", "o", checkDefaultFormat(), "output format: "+strings.Join(allCheckFormats(), ", "))
	f.StringVar(&opts.FailOn, "fail-on", FailOnAny, "what fails the gate: any, lossy or unmapped")
	f.StringArrayVar(&opts.Rules, "rules", nil, "user rules file, overlaid on the built-in rules (repeatable)")
	f.Var(&opts.Target, "target-version", fmt.Sprintf("Kubernetes version the DRA mapping must work on (%s to %s)", rules.MinTarget, rules.MaxTarget))
	f.StringArrayVar(&opts.Reports, "report", nil, "also write a report: FORMAT=PATH, e.g. sarif=kubedra.sarif (repeatable)")
	f.StringVar(&opts.Config, "config", "", "config file (default: .kubedra.yaml in the working folder or above; none to disable)")
	f.BoolVar(&opts.Strict, "strict", false, "fail (exit 1) on inputs skipped by design too: unrendered templates, symlinks out of the tree")
	f.StringVar(&opts.Color, "color", report.ColorAuto, "colour the table: auto, always or never (NO_COLOR is honoured)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no summary line on stderr")
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions([]string{FailOnAny, FailOnLossy, FailOnUnmapped}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(allCheckFormats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{report.ColorAuto, report.ColorAlways, report.ColorNever}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func validCheckFormat(f string) bool { return slices.Contains(allCheckFormats(), f) }

// parseReportFlag splits FORMAT=PATH.
func parseReportFlag(s string) (format, path string, err error) {
	format, path, ok := strings.Cut(s, "=")
	if !ok || format == "" || path == "" {
		return "", "", FlagErrorf("--report %q: want FORMAT=PATH, e.g. sarif=kubedra.sarif", s)
	}
	if !validCheckFormat(format) {
		return "", "", FlagErrorf("--report %q: unknown format %q: use %s", s, format, strings.Join(allCheckFormats(), ", "))
	}
	return format, path, nil
}

// Fails reports whether an item fails the gate failOn. Ignored items never
// fail; an ignore annotation without a reason always does, whatever the
// gate, because it does not ignore anything.
func Fails(it plan.Item, failOn string) bool {
	if it.IgnoreInvalid {
		return true
	}
	if it.Ignored != "" {
		return false
	}
	switch failOn {
	case FailOnUnmapped:
		return it.Status == rules.Unmapped
	case FailOnLossy:
		return it.Status == rules.Unmapped || it.Status == rules.Lossy
	default:
		return it.Status != rules.DRABacked
	}
}

func checkRun(ctx context.Context, opts *CheckOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	set, err := checkLoadRules(opts.Rules)
	if err != nil {
		return err
	}
	res, err := checkCollect(ctx, opts.IO, opts.Paths, set, rules.Options{Target: opts.Target})
	if err != nil {
		return err
	}
	opts.cfg.ignoreIn(&res.Report, opts.IO)
	profile, err := report.ColorProfile(opts.Color, opts.IO.OutTTY, opts.IO.Getenv)
	if err != nil {
		return &FlagError{Err: err}
	}
	c := report.Check{Report: res.Report, FailOn: opts.FailOn, Failing: make([]bool, len(res.Report.Findings)),
		Tool: report.Tool{Name: "kubedra", Version: Build().Version, InformationURI: "https://github.com/kubedra/kubedra"}}
	for i, it := range res.Report.Findings {
		c.Failing[i] = Fails(it, opts.FailOn)
	}

	var errs []error
	for _, r := range opts.Reports {
		format, path, _ := parseReportFlag(r)
		// Report files are for machines and CI viewers: never coloured.
		if err := writeFileAtomic(opts.IO, path, func(w io.Writer) error { return renderCheck(w, format, c, report.Style{}) }); err != nil {
			errs = append(errs, fmt.Errorf("writing %s report %s: %w", format, path, err))
		}
	}
	if err := renderCheck(opts.IO.Out, opts.Output, c, report.Style{Profile: profile}); err != nil {
		errs = append(errs, err)
	}

	failedInputs := res.Errors
	if opts.Strict {
		failedInputs = len(res.Report.Skipped)
	}
	// Unread inputs are listed on stderr even with -q: they make the exit code.
	for _, sk := range res.Report.Skipped {
		loc := sk.File
		if sk.Line > 0 {
			loc = fmt.Sprintf("%s:%d", loc, sk.Line)
		}
		fmt.Fprintf(opts.IO.ErrOut, "%s: skipped %s: %s\n", opts.name, loc, sk.Reason)
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.ErrOut, "%s: %s\n", opts.name, checkSummary(c, failedInputs))
	}
	switch {
	case len(errs) > 0:
		return &ExitCodeError{Code: ExitError, Err: errors.Join(errs...)}
	case failedInputs > 0:
		return &ExitCodeError{Code: ExitError}
	case c.Failures() > 0:
		return &ExitCodeError{Code: ExitFindings}
	}
	return nil
}

// checkSummary is the line people read in a CI log.
func checkSummary(c report.Check, failedInputs int) string {
	s := c.Report.Summary
	var b strings.Builder
	if n := c.Failures(); n > 0 {
		fmt.Fprintf(&b, "failed: %d of %d %s %s the gate (--fail-on %s)", n, s.Findings, checkPlural(s.Findings, "finding", "findings"), checkPlural(n, "fails", "fail"), c.FailOn)
	} else {
		fmt.Fprintf(&b, "passed: no finding fails the gate (--fail-on %s)", c.FailOn)
	}
	fmt.Fprintf(&b, "; %d mappable, %d lossy, %d unmapped, %d dra-backed, %d ignored in %d %s",
		s.Mappable, s.Lossy, s.Unmapped, s.DRABacked, s.Ignored, s.Files, checkPlural(s.Files, "file", "files"))
	if s.Skipped > 0 {
		fmt.Fprintf(&b, "; %d %s not read", s.Skipped, checkPlural(s.Skipped, "input", "inputs"))
	}
	if failedInputs > 0 {
		fmt.Fprintf(&b, "; %d could not be checked (exit 1)", failedInputs)
	}
	return b.String()
}

func checkPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// renderCheck writes c in format to w; style colours the table formats.
func renderCheck(w io.Writer, format string, c report.Check, style report.Style) error {
	switch format {
	case "sarif":
		return report.SARIF(w, c)
	case "junit":
		return report.JUnit(w, c)
	case "markdown":
		return report.Markdown(w, c)
	case "github":
		return report.GitHub(w, c)
	}
	return checkRenderScan(w, format, c.Report, style)
}

func allCheckFormats() []string { return append(slices.Clone(checkScanFormats()), checkFormats...) }

// writeFileAtomic writes a report next to its destination and renames it
// into place, so that a CI step never reads half a report. Relative paths
// are relative to the working folder.
func writeFileAtomic(streams IOStreams, name string, write func(io.Writer) error) error {
	if !filepath.IsAbs(name) && streams.Getwd != nil {
		wd, err := streams.Getwd()
		if err != nil {
			return err
		}
		name = filepath.Join(wd, name)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
