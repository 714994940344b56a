package app

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
)

// AuditOptions are audit's flags and dependencies.
type AuditOptions struct {
	IO IOStreams
	clusterFlags

	AllNamespaces bool
	Dump          string
	Output        report.Format
	Color         string
	Quiet         bool
	RulesFiles    []string
	Bundle        string
	namespaceSet  bool
}

// clusterFlags say where audit and bundle read a cluster from: a dump, or
// the cluster of kubectl's connection flags.
type clusterFlags struct {
	FromDump    string
	ConfigFlags *genericclioptions.ConfigFlags
}

func (c *clusterFlags) source(streams IOStreams) action.ClusterSource {
	// client-go reads --kubeconfig from the process's working folder.
	if kc := c.ConfigFlags.KubeConfig; kc != nil {
		*kc = streams.Path(*kc)
	}
	return action.ClusterSource{Dump: c.FromDump, Stdin: streams.In, Dir: streams.Dir(), Getter: c.ConfigFlags, Context: *c.ConfigFlags.Context}
}

// NewCmdAudit builds `kubedra audit`. runF replaces auditRun in tests.
func NewCmdAudit(streams IOStreams, runF func(*AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{IO: streams, clusterFlags: clusterFlags{ConfigFlags: genericclioptions.NewConfigFlags(true)}}
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
			if opts.FromDump != "" && opts.Dump != "" {
				return FlagErrorf("--dump and --from-dump cannot be used together")
			}
			if opts.Bundle != "" && opts.Output != "html" {
				return FlagErrorf("--bundle is shown only by -o html")
			}
			if opts.AllNamespaces && opts.namespaceSet {
				return FlagErrorf("-A and -n cannot be used together")
			}
			if runF != nil {
				return runF(opts)
			}
			return auditRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	opts.ConfigFlags.AddFlags(f)
	f.BoolVarP(&opts.AllNamespaces, "all-namespaces", "A", false, "audit workloads in all namespaces (the default unless -n is given)")
	f.StringVar(&opts.Dump, "dump", "", "also write every object read to `FILE` (multi-document YAML), for --from-dump")
	f.StringVar(&opts.FromDump, "from-dump", "", "read a dump `FILE` (or - for stdin) instead of a cluster; kubectl get -o yaml output works")
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
		return &FlagError{Err: err}
	}
	set, err := loadRules(opts.IO, opts.RulesFiles)
	if err != nil {
		return err
	}
	src := opts.source(opts.IO)
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
	if opts.Bundle != "" {
		man, err := bundle.ReadManifest(opts.IO.Path(opts.Bundle))
		if err != nil {
			return err
		}
		err = report.AuditHTML(opts.IO.Out, r, man)
		if err != nil {
			return fmt.Errorf("writing report: %w", err)
		}
	} else if err := report.Audit(opts.IO.Out, r, opts.Output, report.Style{Profile: profile}); err != nil {
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
