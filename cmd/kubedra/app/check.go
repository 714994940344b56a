package app

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rules"
)

// CheckOptions are check's flags and dependencies.
type CheckOptions struct {
	IO IOStreams

	Paths     []string
	Filenames []string
	Output    report.Format
	FailOn    string
	Rules     []string
	Target    rules.Version
	Reports   []string
	Color     string
	Config    string
	Strict    bool
	Quiet     bool

	// cfg is the loaded .kubedra.yaml (its ignores are a planning option).
	cfg *action.Config
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
			if _, err := action.ParseGate(opts.FailOn); err != nil {
				return &FlagError{Err: err}
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
			return checkRun(cmd, opts)
		},
	}
	report.AddFormatFlag(cmd, &opts.Output, report.CheckFormats, "")
	f := cmd.Flags()
	f.StringArrayVarP(&opts.Filenames, "filename", "f", nil, "file, folder or - to check (repeatable; same as a PATH argument)")
	f.StringVar(&opts.FailOn, "fail-on", string(action.FailOnAny), "what fails the gate: any, lossy or unmapped")
	f.StringArrayVar(&opts.Rules, "rules", nil, "user rules file, overlaid on the built-in rules (repeatable)")
	f.Var(&opts.Target, "target-version", fmt.Sprintf("Kubernetes version the DRA mapping must work on (%s to %s)", rules.MinTarget, rules.MaxTarget))
	f.StringArrayVar(&opts.Reports, "report", nil, "also write a report: FORMAT=PATH, e.g. sarif=kubedra.sarif (repeatable)")
	f.StringVar(&opts.Config, "config", "", "config file (default: .kubedra.yaml in the working folder or above; none to disable)")
	f.BoolVar(&opts.Strict, "strict", false, "fail (exit 1) on inputs skipped by design too: unrendered templates, symlinks out of the tree")
	f.StringVar(&opts.Color, "color", report.ColorAuto, "colour the table: auto, always or never (NO_COLOR is honoured)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no summary line on stderr")
	gates := make([]string, len(action.Gates))
	for i, g := range action.Gates {
		gates[i] = string(g)
	}
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions(gates, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{report.ColorAuto, report.ColorAlways, report.ColorNever}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// parseReportFlag splits FORMAT=PATH.
func parseReportFlag(s string) (report.Format, string, error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return "", "", FlagErrorf("--report %q: want FORMAT=PATH, e.g. sarif=kubedra.sarif", s)
	}
	format, err := report.CheckFormats.Parse(name)
	if err != nil {
		return "", "", FlagErrorf("--report %q: %v", s, err)
	}
	return format, path, nil
}

func checkRun(cmd *cobra.Command, opts *CheckOptions) error {
	set, err := loadRules(opts.IO, opts.Rules)
	if err != nil {
		return fmt.Errorf("loading rules: %w", err)
	}
	gate, _ := action.ParseGate(opts.FailOn)
	res, err := action.Check(cmd.Context(), inputOf(opts.IO, opts.Paths, false), action.CheckOptions{
		ScanOptions: action.ScanOptions{Rules: set, Target: opts.Target, Ignore: opts.cfg.Ignores(workdir(opts.IO))},
		FailOn:      gate, SkipsFail: opts.Strict,
	})
	if err != nil {
		return err
	}
	profile, err := report.ColorProfile(opts.Color, opts.IO.OutTTY, opts.IO.Getenv)
	if err != nil {
		return &FlagError{Err: err}
	}
	c := report.Check{Report: res.Report, FailOn: string(res.FailOn), Failing: res.Failing,
		Tool: report.Tool{Name: "kubedra", Version: Build().Version, InformationURI: "https://github.com/kubedra/kubedra"}}

	var errs []error
	for _, r := range opts.Reports {
		format, path, _ := parseReportFlag(r)
		// Report files are for machines and CI viewers: never coloured, and
		// written atomically, so a CI step never reads half a report.
		var buf bytes.Buffer
		err := report.RenderCheck(&buf, format, c, report.Style{})
		if dst := path; err == nil {
			if !filepath.IsAbs(dst) {
				dst = filepath.Join(workdir(opts.IO), dst)
			}
			err = emit.WriteFileMode(dst, buf.Bytes(), 0o644)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("writing %s report %s: %w", format, path, err))
		}
	}
	if err := report.RenderCheck(opts.IO.Out, opts.Output, c, report.Style{Profile: profile}); err != nil {
		errs = append(errs, err)
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
		fmt.Fprintf(opts.IO.ErrOut, "%s: %s\n", opts.name, report.CheckSummary(c, res.FailedInputs))
	}
	switch {
	case len(errs) > 0:
		return &ExitCodeError{Code: ExitError, Err: errors.Join(errs...)}
	case res.FailedInputs > 0:
		return &ExitCodeError{Code: ExitError}
	case res.Failures > 0:
		return &ExitCodeError{Code: ExitFindings}
	}
	return nil
}
