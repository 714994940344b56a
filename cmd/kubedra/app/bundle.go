package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/rules"
)

// BundleOptions are the flags of `kubedra bundle` and what the run needs.
type BundleOptions struct {
	IO IOStreams

	ListDrivers bool
	Output      string

	Driver      string
	Out         string
	Force       bool
	FromCluster bool
	FromDump    string
	Kubeconfig  string
	Context     string
	Pools       []string
	PoolLabel   string
	Target      rules.Version
	Strategy    string

	// ReadCluster returns the cluster as a dump stream; injected by tests.
	ReadCluster func(ctx context.Context, kubeconfig, kubecontext string) ([]byte, error)
}

// NewCmdBundle builds `kubedra bundle` and `kubedra bundle verify`.
func NewCmdBundle(streams IOStreams, runF func(*BundleOptions) error) *cobra.Command {
	opts := &BundleOptions{IO: streams, Target: rules.DefaultTarget, Strategy: string(bundle.StrategyClaims), ReadCluster: readClusterDump}
	cmd := &cobra.Command{
		Use:   "bundle (--list-drivers | --driver NAME --out DIR)",
		Short: "Write the cutover kit: driver install, plugin exclusion, DeviceClasses, quotas and PLAN.md",
		Long: heredoc.Doc(`
			Write a kustomize tree that moves node pools from a device plugin to a DRA
			driver without ever running both for one device family on the same node.

			Nodes labelled kubedra.io/device-mode=dra run the driver's kubelet plugin;
			every device-plugin DaemonSet of the family gets the inverse node affinity.
			PLAN.md lists the phases per node pool (patch plugins, install driver,
			cordon and drain, label, verify slices, uncordon, roll out workloads) with
			the exact commands and the rollback of each.

			Without --from-cluster or --from-dump the bundle uses the well-known plugin
			DaemonSets of the family and says so in PLAN.md.
		`),
		Example: heredoc.Doc(`
			kubedra bundle --list-drivers
			kubedra bundle --driver nvidia --out ./cutover
			kubedra bundle --driver nvidia --from-cluster --out ./cutover
			kubedra bundle --driver neuron --from-dump snapshot.yaml --out ./cutover --pools trn2-a,trn2-b
			kubectl apply --server-side --field-manager=kubedra -k ./cutover/phase-1
		`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case opts.ListDrivers:
				if opts.Driver != "" || opts.Out != "" {
					return FlagErrorf("--list-drivers takes no --driver or --out")
				}
			case opts.Driver == "":
				return FlagErrorf("--driver is required (see --list-drivers)")
			case opts.Out == "":
				return FlagErrorf("--out is required")
			case opts.FromCluster && opts.FromDump != "":
				return FlagErrorf("--from-cluster and --from-dump cannot be used together")
			}
			if s := bundle.Strategy(opts.Strategy); s != bundle.StrategyClaims && s != bundle.StrategyExtendedResource {
				return FlagErrorf("--strategy must be claims or extended-resource, not %q", opts.Strategy)
			}
			if runF != nil {
				return runF(opts)
			}
			return bundleRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.ListDrivers, "list-drivers", false, "list the reference DRA drivers with their pinned releases")
	f.StringVarP(&opts.Output, "output", "o", "table", "--list-drivers format: table, json or yaml")
	f.StringVar(&opts.Driver, "driver", "", "reference driver to install (see --list-drivers)")
	f.StringVar(&opts.Out, "out", "", "folder to write the bundle to")
	f.BoolVar(&opts.Force, "force", false, "replace a non-empty --out folder")
	f.BoolVar(&opts.FromCluster, "from-cluster", false, "tailor the bundle to the cluster of --kubeconfig/--context")
	f.StringVar(&opts.FromDump, "from-dump", "", "tailor the bundle to a dump (kubectl get nodes,daemonsets,resourcequotas -A -o yaml, or kubedra audit --dump)")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	f.StringVar(&opts.Context, "context", "", "kubeconfig context to use")
	f.StringSliceVar(&opts.Pools, "pools", nil, "node pools to move, in order (values of the pool label); default: every pool with nodes of the family")
	f.StringVar(&opts.PoolLabel, "pool-label", "", "node label that names pools (default: detected, e.g. eks.amazonaws.com/nodegroup)")
	f.Var(&opts.Target, "target-version", "Kubernetes version the bundle targets (1.32-1.37)")
	f.StringVar(&opts.Strategy, "strategy", opts.Strategy, "claims (workloads rewritten to ResourceClaims) or extended-resource (workloads unchanged, KEP-5004; 1.36+)")
	cmd.AddCommand(newCmdBundleVerify(streams, nil))
	return cmd
}

func bundleRun(ctx context.Context, opts *BundleOptions) error {
	if opts.ListDrivers {
		return listDrivers(opts.IO.Out, opts.Output)
	}
	d, err := bundle.Lookup(opts.Driver)
	if err != nil {
		return FlagErrorf("%v", err)
	}
	var facts *bundle.Facts
	if opts.FromCluster || opts.FromDump != "" {
		facts, err = loadBundleFacts(ctx, opts.FromDump, opts.Kubeconfig, opts.Context, opts.ReadCluster)
		if err != nil {
			return err
		}
	}
	res, err := bundle.Generate(bundle.Options{
		Driver: d, Pools: opts.Pools, PoolLabel: opts.PoolLabel, Target: opts.Target,
		Strategy: bundle.Strategy(opts.Strategy), Facts: facts, Out: opts.Out,
	})
	if err != nil {
		return fmt.Errorf("no bundle written: %w", err)
	}
	if err := bundle.Write(opts.Out, res.Tree, opts.Force); err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %s\n", w)
	}
	fmt.Fprintf(opts.IO.ErrOut, "wrote %d files to %s; next: %s/PLAN.md\n", len(res.Tree), opts.Out, strings.TrimSuffix(opts.Out, "/"))
	return nil
}

// loadBundleFacts reads a dump file, or the cluster through inventory/cluster,
// into bundle facts, with the audit's plugin/driver detection attached.
func loadBundleFacts(ctx context.Context, dump, kubeconfig, kubecontext string, read func(context.Context, string, string) ([]byte, error)) (*bundle.Facts, error) {
	var data []byte
	var source string
	var err error
	if dump != "" {
		if data, err = os.ReadFile(dump); err != nil {
			return nil, err
		}
		source = "dump " + dump
	} else {
		if data, err = read(ctx, kubeconfig, kubecontext); err != nil {
			return nil, err
		}
		source = "cluster"
		if kubecontext != "" {
			source += " (context " + kubecontext + ")"
		}
	}
	cf, err := cluster.ReadDump(bytes.NewReader(data), bundle.Scope)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", source, err)
	}
	return bundle.NewFacts(cf, source)
}

// readClusterDump reads the cluster with inventory/cluster and returns the
// objects as a dump stream.
func readClusterDump(ctx context.Context, kubeconfig, kubecontext string) ([]byte, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubecontext}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := (&cluster.Reader{Client: client, Dynamic: dyn, Dump: &buf}).Read(ctx); err != nil {
		return nil, fmt.Errorf("reading the cluster: %w", err)
	}
	return buf.Bytes(), nil
}

// driverListItem is one row of --list-drivers in machine output.
type driverListItem struct {
	Name          string   `json:"name"`
	Title         string   `json:"title"`
	Release       string   `json:"release"`
	URL           string   `json:"url"`
	DRADriver     string   `json:"draDriver"`
	Install       string   `json:"install"`
	DeviceClasses []string `json:"deviceClasses"`
	Replaces      []string `json:"replaces"`
}

func listDrivers(w io.Writer, output string) error {
	all, err := bundle.Catalogue()
	if err != nil {
		return err
	}
	var items []driverListItem
	for _, d := range all {
		it := driverListItem{Name: d.Name, Title: d.Title, Release: d.Release.Version, URL: d.Release.URL, DRADriver: d.DRADriver, Replaces: d.Resources}
		if h := d.Install.Helm; h != nil {
			it.Install = "helm " + h.Chart
			if h.Version != "" {
				it.Install += " " + h.Version
			}
		} else {
			it.Install = "manifests (embedded)"
		}
		for _, c := range d.DeviceClasses {
			it.DeviceClasses = append(it.DeviceClasses, c.Name)
		}
		items = append(items, it)
	}
	switch output {
	case "json", "yaml":
		env := map[string]any{"apiVersion": "kubedra.dev/v1alpha1", "kind": "DriverCatalogue", "items": items}
		var b []byte
		if output == "json" {
			b, err = json.MarshalIndent(env, "", "  ")
			b = append(b, '\n')
		} else {
			b, err = yaml.Marshal(env)
		}
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "table", "":
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tRELEASE\tDRA DRIVER\tINSTALL\tDEVICECLASSES\tREPLACES")
		for _, it := range items {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.Name, it.Release, it.DRADriver, it.Install, strings.Join(it.DeviceClasses, ","), strings.Join(it.Replaces, ","))
		}
		return tw.Flush()
	default:
		return FlagErrorf("--output must be table, json or yaml, not %q", output)
	}
}

// BundleVerifyOptions are the flags of `kubedra bundle verify`.
type BundleVerifyOptions struct {
	IO         IOStreams
	Dir        string
	FromDump   string
	Kubeconfig string
	Context    string
	Output     string

	ReadCluster func(ctx context.Context, kubeconfig, kubecontext string) ([]byte, error)
}

func newCmdBundleVerify(streams IOStreams, runF func(*BundleVerifyOptions) error) *cobra.Command {
	opts := &BundleVerifyOptions{IO: streams, ReadCluster: readClusterDump}
	cmd := &cobra.Command{
		Use:   "verify [--kubeconfig FILE --context NAME | --from-dump FILE] DIR",
		Short: "Prove no node can run both the device plugin and the DRA driver of the bundle's family",
		Long: heredoc.Doc(`
			Evaluate DaemonSet placement (node selector, required node affinity, taints
			and tolerations, as the DaemonSet controller does) for every node as it is
			labelled now, labelled for DRA, and unlabelled. Exit 2 when some node could
			run a device plugin and the driver of the bundle's family at once.

			Before the driver is installed, the bundle's node selector stands in for it.
		`),
		Example: heredoc.Doc(`
			kubedra bundle verify ./cutover
			kubedra bundle verify --from-dump snapshot.yaml ./cutover
		`),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if opts.Output != "table" && opts.Output != "json" && opts.Output != "yaml" {
				return FlagErrorf("--output must be table, json or yaml, not %q", opts.Output)
			}
			if runF != nil {
				return runF(opts)
			}
			return bundleVerifyRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.FromDump, "from-dump", "", "check a dump instead of the cluster")
	f.StringVar(&opts.Kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	f.StringVar(&opts.Context, "context", "", "kubeconfig context to use")
	f.StringVarP(&opts.Output, "output", "o", "table", "table, json or yaml")
	return cmd
}

func bundleVerifyRun(ctx context.Context, opts *BundleVerifyOptions) error {
	m, err := bundle.ReadManifest(opts.Dir)
	if err != nil {
		return err
	}
	d, err := bundle.Lookup(m.Driver)
	if err != nil {
		return err
	}
	facts, err := loadBundleFacts(ctx, opts.FromDump, opts.Kubeconfig, opts.Context, opts.ReadCluster)
	if err != nil {
		return err
	}
	r := bundle.Verify(m, d, facts)
	w := opts.IO.Out
	switch opts.Output {
	case "json", "yaml":
		env := map[string]any{"apiVersion": "kubedra.dev/v1alpha1", "kind": "BundleVerifyReport", "family": r.Family,
			"conflicts": r.Conflicts, "unserved": r.Unserved, "placements": r.Placements, "notes": r.Notes}
		var b []byte
		if opts.Output == "json" {
			b, err = json.MarshalIndent(env, "", "  ")
			b = append(b, '\n')
		} else {
			b, err = yaml.Marshal(env)
		}
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	default:
		if len(r.Conflicts) > 0 {
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tSTATE\tDEVICE PLUGIN\tDRA DRIVER")
			for _, c := range r.Conflicts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Node, c.State, c.Plugin, c.Driver)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(w, "no conflict: %d nodes checked for family %s (now, labelled, unlabelled)\n", len(r.Placements), r.Family)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(opts.IO.ErrOut, "note: %s\n", n)
		}
		for _, n := range r.Unserved {
			fmt.Fprintf(opts.IO.ErrOut, "warning: node %s is labelled %s=%s but no %s driver DaemonSet can run there\n", n, bundle.ModeLabel, bundle.ModeDRA, r.Family)
		}
	}
	if len(r.Conflicts) > 0 {
		return &ExitCodeError{Code: ExitFindings, Err: fmt.Errorf("%d node state(s) where a device plugin of family %s and its DRA driver could both run", len(r.Conflicts), r.Family)}
	}
	return nil
}
