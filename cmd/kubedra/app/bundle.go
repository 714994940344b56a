package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rules"
)

// BundleOptions are the flags of `kubedra bundle` and what the run needs.
type BundleOptions struct {
	IO IOStreams
	flags.Cluster
	action.BundleOptions

	ListDrivers, Force, FromCluster bool
	Output                          report.Format
}

// NewCmdBundle builds `kubedra bundle` and `kubedra bundle verify`.
func NewCmdBundle(streams IOStreams, runF func(*BundleOptions) error) *cobra.Command {
	opts := &BundleOptions{IO: streams, BundleOptions: action.BundleOptions{Target: rules.DefaultTarget, Strategy: bundle.StrategyClaims}}
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
					return flags.Errorf("--list-drivers takes no --driver or --out")
				}
			case opts.Driver == "":
				return flags.Errorf("--driver is required (see --list-drivers)")
			case opts.Out == "":
				return flags.Errorf("--out is required")
			case opts.FromCluster && opts.FromDump != "":
				return flags.Errorf("--from-cluster and --from-dump cannot be used together")
			}
			if s := opts.Strategy; s != bundle.StrategyClaims && s != bundle.StrategyExtendedResource {
				return flags.Errorf("--strategy must be claims or extended-resource, not %q", opts.Strategy)
			}
			return runOr(cmd, opts, runF, bundleRun)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.ListDrivers, "list-drivers", false, "list the reference DRA drivers with their pinned releases")
	report.AddFormatFlag(cmd, &opts.Output, report.DriverFormats, "--list-drivers format")
	f.StringVar(&opts.Driver, "driver", "", "reference driver to install (see --list-drivers)")
	f.StringVar(&opts.Out, "out", "", "folder to write the bundle to")
	f.BoolVar(&opts.Force, "force", false, "replace a non-empty --out folder")
	f.BoolVar(&opts.FromCluster, "from-cluster", false, "tailor the bundle to the cluster of --kubeconfig/--context")
	opts.BindKubeconfig(f, "tailor the bundle to a dump (kubectl get nodes,daemonsets,resourcequotas -A -o yaml, or kubedra audit --dump)")
	f.StringSliceVar(&opts.Pools, "pools", nil, "node pools to move, in order (values of the pool label); default: every pool with nodes of the family")
	f.StringVar(&opts.PoolLabel, "pool-label", "", "node label that names pools (default: detected, e.g. eks.amazonaws.com/nodegroup)")
	f.Var(&opts.Target, "target-version", "Kubernetes version the bundle targets (1.32-1.38)")
	f.StringVar((*string)(&opts.Strategy), "strategy", string(opts.Strategy), "claims (workloads rewritten to ResourceClaims) or extended-resource (workloads unchanged, KEP-5004; 1.36+)")
	cmd.AddCommand(newCmdBundleVerify(streams, nil))
	return cmd
}

func bundleRun(ctx context.Context, opts *BundleOptions) error {
	if opts.ListDrivers {
		all, err := bundle.Catalogue()
		if err != nil {
			return err
		}
		return report.DriverCatalogue(opts.IO.Out, all, opts.Output)
	}
	bo := opts.BundleOptions
	if opts.FromCluster || opts.FromDump != "" {
		src := opts.ClusterSource(opts.IO)
		bo.Source = &src
	}
	res, err := action.Bundle(ctx, bo)
	var unknown *bundle.UnknownDriverError
	if errors.As(err, &unknown) {
		return &flags.Error{Err: err}
	} else if err != nil {
		return fmt.Errorf("no bundle written: %w", err)
	}
	if err := bundle.Write(opts.IO.Path(opts.Out), res.Tree, opts.Force); err != nil {
		return err
	}
	return report.BundleWritten(opts.IO.ErrOut, res, opts.Out)
}

// BundleVerifyOptions are the flags of `kubedra bundle verify`.
type BundleVerifyOptions struct {
	IO IOStreams
	flags.Cluster
	Dir    string
	Output report.Format
}

func newCmdBundleVerify(streams IOStreams, runF func(*BundleVerifyOptions) error) *cobra.Command {
	opts := &BundleVerifyOptions{IO: streams}
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
			return runOr(cmd, opts, runF, bundleVerifyRun)
		},
	}
	opts.BindKubeconfig(cmd.Flags(), "check a dump instead of the cluster")
	report.AddFormatFlag(cmd, &opts.Output, report.DriverFormats, "")
	return cmd
}

func bundleVerifyRun(ctx context.Context, opts *BundleVerifyOptions) error {
	r, err := action.BundleVerify(ctx, opts.IO.Path(opts.Dir), opts.ClusterSource(opts.IO))
	if err != nil {
		return err
	}
	if err := report.BundleVerify(opts.IO.Out, opts.IO.ErrOut, r, opts.Output); err != nil {
		return err
	}
	if len(r.Conflicts) > 0 {
		return &ExitCodeError{Code: ExitFindings, Err: fmt.Errorf("%d node state(s) where a device plugin of family %s and its DRA driver could both run", len(r.Conflicts), r.Family)}
	}
	return nil
}
