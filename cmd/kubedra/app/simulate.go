package app

import (
	"context"
	"fmt"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/simulate"
)

// SimulateOptions are simulate's flags.
type SimulateOptions struct {
	flags.Inputs
	flags.Cluster
	flags.Planning

	Nodes      string
	After      []string
	Output     report.Format
	ListShapes bool
	EmitNodes  string
}

// NewCmdSimulate builds `kubedra simulate`. runF replaces simulateRun in tests.
func NewCmdSimulate(streams IOStreams, runF func(*SimulateOptions) error) *cobra.Command {
	opts := &SimulateOptions{Inputs: flags.NewInputs(streams)}
	cmd := &cobra.Command{
		Use:   "simulate [PATH|-]...",
		Short: "Check that every workload still fits after the move to DRA, with the scheduler's allocator",
		Long: heredoc.Doc(`
			Pack the workloads onto the nodes twice: before the move (the manifests as
			given, node pools on device plugins) and after it (the manifests migrated in
			memory, or --after DIR, node pools on DRA drivers), and compare per workload
			pod template. The device-plugin fit uses the Kubernetes effective request
			(init containers, sidecars), nodeSelector, node affinity and taints; the DRA
			fit is the allocator of k8s.io/dynamic-resource-allocation/structured, the
			code kube-scheduler runs, with the CEL environment of --target-version.
			Pods are packed greedily, first fit in node order, the same way in both
			worlds: a simulation of fit, not of scoring (docs/simulate.md).

			Nodes come from a NodeInventory file (--nodes, pools of built-in or written
			out shapes; --list-shapes lists the shapes), a dump (--from-dump) or the
			cluster of the kubeconfig (--context, --kubeconfig).

			Exit status: 0 no workload fits worse after the move, 2 one or more does,
			1 bad input (reported after everything else was simulated).
		`),
		Example: heredoc.Doc(`
			kubedra simulate --nodes fleet.yaml ./manifests
			kubedra simulate --nodes fleet.yaml --after ./migrated ./manifests
			kubedra simulate --from-dump cluster.yaml ./manifests
			kubedra simulate --context prod -o json ./manifests
			kubedra simulate --list-shapes
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.ListShapes {
				return report.Shapes(opts.IO.Out, simulate.Shapes(), opts.Output)
			}
			if err := opts.Setup(cmd, args, "name manifest files or folders (or - for stdin)"); err != nil {
				return err
			}
			if ns := opts.Cluster.ConfigFlags.Namespace; ns != nil {
				opts.Charts.Namespace = *ns
			}
			if opts.Nodes != "" && (opts.FromDump != "" || cmd.Flags().Changed("context") || cmd.Flags().Changed("kubeconfig")) {
				return flags.Errorf("--nodes and a cluster (--from-dump, --context, --kubeconfig) cannot be used together")
			}
			if opts.EmitNodes != "" && opts.EmitNodes != "before" && opts.EmitNodes != "after" {
				return flags.Errorf("--emit-nodes %q: use before or after", opts.EmitNodes)
			}
			if err := opts.CheckStrategy(opts.Target); err != nil {
				return err
			}
			return runOr(cmd, opts, runF, simulateRun)
		},
	}
	f := cmd.Flags()
	// The cluster's -n/--namespace first: it is the charts' namespace too.
	opts.Cluster.Bind(f, "read the nodes from a dump `FILE` (kubedra audit --dump, kubectl get -o yaml) instead of a cluster")
	opts.Inputs.Bind(cmd, "simulate", "table", "print nothing on stderr")
	f.StringVar(&opts.Nodes, "nodes", "", "NodeInventory `FILE` describing the node pools (instead of a cluster)")
	f.StringArrayVar(&opts.After, "after", nil, "migrated manifests `DIR` (or file, repeatable) instead of migrating in memory")
	f.BoolVar(&opts.ListShapes, "list-shapes", false, "list the built-in node shapes and exit")
	f.StringVar(&opts.EmitNodes, "emit-nodes", "", "print the Nodes and ResourceSlices of the `before` or after world as YAML (to reproduce it on a test cluster) instead of the report")
	f.StringVar(&opts.Strategy, "strategy", string(plan.Claims), "migrate strategy for the in-memory migration: claims, extended-resource or auto")
	f.BoolVar(&opts.AllowLossy, "allow-lossy", false, "apply lossy mappings in the in-memory migration, as migrate --allow-lossy")
	report.AddFormatFlag(cmd, &opts.Output, report.SimulateFormats, "")
	return cmd
}

func simulateRun(ctx context.Context, opts *SimulateOptions) error {
	in, set, prof, ignore, err := opts.Resolve()
	if err != nil {
		return err
	}
	sopts := action.SimulateOptions{Nodes: opts.Nodes, Target: opts.Target, Rules: set, After: opts.After, Plan: opts.Options(opts.Target, ignore)}
	if opts.Nodes == "" {
		sopts.Cluster = opts.ClusterSource(opts.IO)
	}
	res, err := action.Simulate(ctx, in, sopts)
	if err != nil {
		return err
	}
	if opts.EmitNodes != "" {
		w := res.Before
		if opts.EmitNodes == "after" {
			w = res.After
		}
		nodes, slices := w.Objects()
		return report.WorldObjects(opts.IO.Out, nodes, slices)
	}
	if err := report.Simulate(opts.IO.Out, res.Result, res.Diagnostics, opts.Output, report.Style{Profile: prof}); err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	if !opts.Quiet {
		report.SimulateLog(opts.IO.ErrOut, res.Diagnostics)
	}
	return exit(res.Failed(), res.Worse())
}
