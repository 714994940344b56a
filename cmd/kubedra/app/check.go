package app

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// CheckOptions are check's flags and dependencies.
type CheckOptions struct {
	flags.Inputs
	Output  report.Format
	FailOn  string
	Reports []string
	Strict  bool
	// AllowEmpty lets an input without manifests pass.
	AllowEmpty bool
	// Baseline is --baseline.
	Baseline string
	// name is the command as invoked ("kubedra check", "kubectl dra check").
	name string
}

// NewCmdCheck builds `kubedra check`.
func NewCmdCheck(streams IOStreams, runF func(*CheckOptions) error) *cobra.Command {
	opts := &CheckOptions{Inputs: flags.NewInputs(streams)}
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
			opts.name = cmd.CommandPath()
			if err := opts.Setup(cmd, args, "give a path, a folder or - for stdin"); err != nil {
				return err
			}
			if _, err := plan.ParseGate(opts.FailOn); err != nil {
				return &flags.Error{Err: err}
			}
			for _, r := range opts.Reports {
				if _, _, err := parseReportFlag(r); err != nil {
					return err
				}
			}
			return runOr(cmd, opts, runF, checkRun)
		},
	}
	report.AddFormatFlag(cmd, &opts.Output, report.CheckFormats, "")
	opts.Bind(cmd, "check", "table", "no summary line on stderr")
	f := cmd.Flags()
	f.StringVar(&opts.FailOn, "fail-on", string(plan.FailOnAny), "what fails the gate: any, lossy or unmapped")
	f.StringArrayVar(&opts.Reports, "report", nil, "also write a report: FORMAT=PATH, e.g. sarif=kubedra.sarif (repeatable)")
	f.StringVar(&opts.Baseline, "baseline", "", "prove every kustomize unit and folder of plain manifests against the same repository at `DIR` (a checkout of the base revision, e.g. git worktree add DIR origin/main): a unit whose pods would get other devices fails the gate (docs/ci.md)")
	f.BoolVar(&opts.AllowEmpty, "allow-empty", false, "pass on an input without any manifest (by default that fails: exit 1, no manifests found)")
	f.BoolVar(&opts.Strict, "strict", false, "fail (exit 1) on inputs skipped by design too: unrendered templates, symlinks out of the tree")
	gates := make([]string, len(plan.Gates))
	for i, g := range plan.Gates {
		gates[i] = string(g)
	}
	_ = cmd.RegisterFlagCompletionFunc("fail-on", cobra.FixedCompletions(gates, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// parseReportFlag splits FORMAT=PATH.
func parseReportFlag(s string) (report.Format, string, error) {
	name, path, ok := strings.Cut(s, "=")
	if !ok || name == "" || path == "" {
		return "", "", flags.Errorf("--report %q: want FORMAT=PATH, e.g. sarif=kubedra.sarif", s)
	}
	format, err := report.CheckFormats.Parse(name)
	if err != nil {
		return "", "", flags.Errorf("--report %q: %v", s, err)
	}
	return format, path, nil
}

func checkRun(ctx context.Context, opts *CheckOptions) error {
	if done, err := answerResourceList(&opts.IO, opts.Paths, "check"); done {
		return err
	}
	in, set, profile, ignore, err := opts.Resolve()
	if err != nil {
		return err
	}
	gate, _ := plan.ParseGate(opts.FailOn)
	res, err := action.Check(ctx, in, action.CheckOptions{
		ScanOptions: action.ScanOptions{Rules: set, Target: opts.Target, Ignore: ignore},
		FailOn:      gate, SkipsFail: opts.Strict, AllowEmpty: opts.AllowEmpty, Baseline: opts.IO.Path(opts.Baseline),
	})
	if err != nil {
		return err
	}
	c := report.Check{Report: res.Report, FailOn: string(res.FailOn), Failing: res.Failing, Units: res.Units, UnitProblems: res.UnitProblems,
		Tool: report.Tool{Name: "kubedra", Version: Build().Version, InformationURI: "https://github.com/kubedra/kubedra"}}

	var errs []error
	for _, r := range opts.Reports {
		format, path, _ := parseReportFlag(r)
		if err := report.WriteCheckFile(opts.IO.Path(path), format, c); err != nil {
			errs = append(errs, fmt.Errorf("writing %s report %s: %w", format, path, err))
		}
	}
	if err := report.RenderCheck(opts.IO.Out, opts.Output, c, report.Style{Profile: profile}); err != nil {
		errs = append(errs, err)
	}
	report.CheckLog(opts.IO.ErrOut, opts.name, c, res.FailedInputs, opts.Quiet, opts.Strict)
	if res.Err != nil {
		errs = append(errs, res.Err)
	}
	if len(errs) > 0 {
		return &ExitCodeError{Code: ExitError, Err: errors.Join(errs...)}
	}
	return exit(res.FailedInputs > 0, res.Failures > 0)
}
