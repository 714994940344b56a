package app

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rules"
)

// AuditOptions are audit's flags and dependencies.
type AuditOptions struct {
	IO IOStreams
	flags.Cluster

	AllNamespaces bool
	Dump          string
	Output        report.Format
	Color         string
	Quiet         bool
	RulesFiles    []string
	Bundle        string
	namespaceSet  bool
}

// NewCmdAudit builds `kubedra audit`. runF replaces auditRun in tests.
func NewCmdAudit(streams IOStreams, runF func(*AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{IO: streams}
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Report a cluster's DRA readiness and device-plugin conflicts, node pool by node pool",
		Long: heredoc.Doc(`
			Read a cluster (or a dump of one) and report, per node pool, where device
			plugins still serve workloads, where DRA drivers run, what conflicts and what
			blocks the cutover: a verdict per pool (ready, blocked, conflicting) and per
			check. docs/audit.md lists the checks; docs/rbac.yaml is the ClusterRole it
			needs (get and list only).

			Exit status: 0 no error-level finding, 2 an error-level finding, 1 the audit
			could not finish (cluster unreachable, unreadable dump) or some resource types
			could not be read (the report says which).
		`),
		Example: heredoc.Doc(`
			kubedra audit                               # current context, all namespaces
			kubedra audit --context prod -o json
			kubedra audit --dump snapshot.yaml          # also save what was read
			kubedra audit --from-dump snapshot.yaml     # same report, no cluster needed
			kubedra audit -o html --bundle ./cutover > audit.html   # one page: pools, conflicts, phases
			kubectl get nodes,daemonsets,pods,deviceclasses,resourceslices -A -o yaml | kubedra audit --from-dump -
		`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.namespaceSet = cmd.Flags().Changed("namespace")
			switch {
			case opts.FromDump != "" && opts.Dump != "":
				return flags.Errorf("--dump and --from-dump cannot be used together")
			case opts.Bundle != "" && opts.Output != "html":
				return flags.Errorf("--bundle is shown only by -o html")
			case opts.AllNamespaces && opts.namespaceSet:
				return flags.Errorf("-A and -n cannot be used together")
			}
			return runOr(cmd, opts, runF, auditRun)
		},
	}
	f := cmd.Flags()
	opts.Cluster.Bind(f, "read a dump `FILE` (or - for stdin) instead of a cluster; kubectl get -o yaml output works")
	f.BoolVarP(&opts.AllNamespaces, "all-namespaces", "A", false, "audit workloads in all namespaces (the default unless -n is given)")
	f.StringVar(&opts.Dump, "dump", "", "also write every object read to `FILE` (multi-document YAML), for --from-dump")
	report.AddFormatFlag(cmd, &opts.Output, report.AuditFormats, "")
	f.StringVar(&opts.Color, "color", report.ColorAuto, "colour the table: auto, always or never (NO_COLOR is honoured)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stderr (no progress, no error message)")
	f.StringVar(&opts.Bundle, "bundle", "", "with -o html, show the phases of the bundle in `DIR` (kubedra bundle --out)")
	f.StringArrayVar(&opts.RulesFiles, "rules", nil, "extra rules `FILE` for workloads' mapping status (repeatable)")
	return cmd
}

func auditRun(ctx context.Context, opts *AuditOptions) error {
	profile, err := report.ColorProfile(opts.Color, opts.IO.OutTTY, opts.IO.Getenv)
	if err != nil {
		return &flags.Error{Err: err}
	}
	set, err := rules.LoadFrom(opts.IO.Dir(), opts.RulesFiles...)
	if err != nil {
		return err
	}
	src := opts.ClusterSource(opts.IO)
	if opts.namespaceSet && !opts.AllNamespaces {
		src.Namespace = *opts.ConfigFlags.Namespace
	}
	var dump *os.File
	if opts.Dump != "" {
		if dump, err = os.Create(opts.IO.Path(opts.Dump)); err != nil {
			return fmt.Errorf("creating dump: %w", err)
		}
		src.DumpTo = dump
	}
	var prog *report.Progress
	if opts.FromDump == "" && opts.IO.ErrTTY && !opts.Quiet {
		prog, src.Progress = report.StartReadProgress(opts.IO.ErrOut)
	}
	r, err := action.Audit(ctx, src, action.AuditOptions{Rules: set})
	prog.Stop()
	if dump != nil {
		if cerr := dump.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("writing dump: %w", cerr)
		}
	}
	if err != nil {
		if opts.FromDump == "" {
			err = fmt.Errorf("%w\nCheck the kubeconfig context (--context, --kubeconfig), or audit a dump with --from-dump", err)
		}
		return err
	}
	var man *bundle.Manifest
	if opts.Bundle != "" {
		if man, err = bundle.ReadManifest(opts.IO.Path(opts.Bundle)); err != nil {
			return err
		}
	}
	if err := report.Audit(opts.IO.Out, r, man, opts.Output, report.Style{Profile: profile}); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if r.HasErrors() {
		return &ExitCodeError{Code: ExitFindings}
	}
	if failed := r.Unread(); len(failed) > 0 {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("partial report: could not read %s", strings.Join(failed, ", "))}
	}
	return nil
}
