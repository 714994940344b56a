package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/rules"
)

// AuditOptions are audit's flags and dependencies.
type AuditOptions struct {
	IO      IOStreams
	Context context.Context

	// ConfigFlags are kubectl's connection flags.
	ConfigFlags   *genericclioptions.ConfigFlags
	AllNamespaces bool
	Dump          string
	FromDump      string
	Output        string
	Color         string
	Quiet         bool
	RulesFiles    []string

	// NewReader builds the cluster reader from the flags; tests replace it
	// with fakes.
	NewReader func(genericclioptions.RESTClientGetter) (*cluster.Reader, error)
	// namespaceSet is true when -n was given.
	namespaceSet bool
}

// NewCmdAudit builds `kubedra audit`. runF replaces auditRun in tests.
func NewCmdAudit(streams IOStreams, runF func(*AuditOptions) error) *cobra.Command {
	opts := &AuditOptions{IO: streams, ConfigFlags: genericclioptions.NewConfigFlags(true), NewReader: newClusterReader}
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
			kubectl get nodes,daemonsets,pods,deviceclasses,resourceslices -A -o yaml | kubedra audit --from-dump -
		`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.namespaceSet = cmd.Flags().Changed("namespace")
			if !slices.Contains(report.AuditFormats, opts.Output) && opts.Output != "md" {
				return FlagErrorf("unknown output format %q: use %s", opts.Output, strings.Join(report.AuditFormats, ", "))
			}
			if opts.FromDump != "" && opts.Dump != "" {
				return FlagErrorf("--dump and --from-dump cannot be used together")
			}
			if opts.AllNamespaces && opts.namespaceSet {
				return FlagErrorf("-A and -n cannot be used together")
			}
			if opts.Context == nil {
				opts.Context = cmd.Context()
			}
			if runF != nil {
				return runF(opts)
			}
			return auditRun(opts)
		},
	}
	f := cmd.Flags()
	opts.ConfigFlags.AddFlags(f)
	f.BoolVarP(&opts.AllNamespaces, "all-namespaces", "A", false, "audit workloads in all namespaces (the default unless -n is given)")
	f.StringVar(&opts.Dump, "dump", "", "also write every object read to `FILE` (multi-document YAML), for --from-dump")
	f.StringVar(&opts.FromDump, "from-dump", "", "read a dump `FILE` (or - for stdin) instead of a cluster; kubectl get -o yaml output works")
	f.StringVarP(&opts.Output, "output", "o", "table", "output format: "+strings.Join(report.AuditFormats, ", "))
	f.StringVar(&opts.Color, "color", report.ColorAuto, "colour the table: auto, always or never (NO_COLOR is honoured)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stderr (no progress, no error message)")
	f.StringArrayVar(&opts.RulesFiles, "rules", nil, "extra rules `FILE` for workloads' mapping status (repeatable)")
	return cmd
}

func newClusterReader(g genericclioptions.RESTClientGetter) (*cluster.Reader, error) {
	cfg, err := g.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return cluster.NewReader(cfg)
}

func auditRun(opts *AuditOptions) error {
	ctx := opts.Context
	if ctx == nil {
		ctx = context.Background()
	}
	errOut := opts.IO.ErrOut
	if opts.Quiet || errOut == nil {
		errOut = io.Discard
	}
	profile, err := report.ColorProfile(opts.Color, opts.IO.OutTTY, opts.IO.Getenv)
	if err != nil {
		return &FlagError{Err: err}
	}
	set, err := rules.Load(opts.RulesFiles...)
	if err != nil {
		return err
	}

	var facts *cluster.Facts
	if opts.FromDump != "" {
		facts, err = readDump(opts.FromDump, opts.IO.In)
		if err != nil {
			return err
		}
	} else {
		facts, err = readLive(ctx, opts, errOut)
		if err != nil {
			return err
		}
	}

	r := audit.Run(facts, audit.Options{Resolver: set})
	if err := report.Audit(opts.IO.Out, r, opts.Output, report.Style{Profile: profile}); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if r.HasErrors() {
		return &ExitCodeError{Code: ExitFindings}
	}
	var failed []string
	for _, p := range r.Problems {
		if p.Reason != cluster.NotInDump {
			failed = append(failed, p.Resource)
		}
	}
	if len(failed) > 0 {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("partial report: could not read %s", strings.Join(failed, ", "))}
	}
	return nil
}

func readDump(path string, stdin io.Reader) (*cluster.Facts, error) {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("reading dump: %w", err)
		}
		defer f.Close()
		in = f
	}
	facts, err := cluster.ReadDump(in, cluster.Scope{})
	if err != nil {
		return nil, fmt.Errorf("reading dump %s: %w", path, err)
	}
	return facts, nil
}

func readLive(ctx context.Context, opts *AuditOptions, errOut io.Writer) (*cluster.Facts, error) {
	reader, err := opts.NewReader(opts.ConfigFlags)
	if err != nil {
		return nil, err
	}
	if opts.namespaceSet && !opts.AllNamespaces && opts.ConfigFlags.Namespace != nil {
		reader.Namespace = *opts.ConfigFlags.Namespace
	}
	var dumpFile *os.File
	if opts.Dump != "" {
		if dumpFile, err = os.Create(opts.Dump); err != nil {
			return nil, fmt.Errorf("creating dump: %w", err)
		}
		reader.Dump = dumpFile
	}
	var prog *auditProgress
	if opts.IO.ErrTTY && !opts.Quiet {
		prog = &auditProgress{w: errOut, start: time.Now()}
		reader.Progress = prog.update
	}
	facts, err := reader.Read(ctx)
	prog.clear()
	if dumpFile != nil {
		if cerr := dumpFile.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("writing dump: %w", cerr)
		}
	}
	if err != nil {
		return nil, withHint(err)
	}
	return facts, nil
}

// withHint adds what to try when the cluster cannot be reached.
func withHint(err error) error {
	var ec *ExitCodeError
	if errors.As(err, &ec) {
		return err
	}
	return fmt.Errorf("%w\nCheck the kubeconfig context (--context, --kubeconfig), or audit a dump with --from-dump", err)
}

// auditProgress shows, on a terminal's stderr, what is being read while a
// large cluster is listed page by page.
type auditProgress struct {
	w     io.Writer
	start time.Time
	mu    sync.Mutex
	last  time.Time
	shown bool
}

func (p *auditProgress) update(resource string, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Since(p.start) < 500*time.Millisecond || time.Since(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = time.Now(), true
	fmt.Fprintf(p.w, "\r\x1b[Kreading %s: %d", resource, n)
}

func (p *auditProgress) clear() {
	if p == nil || !p.shown {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K")
}
