package app

import (
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rules"
)

// RulesOptions are the flags and dependencies of `kubedra rules`.
type RulesOptions struct {
	IO     IOStreams
	Rules  []string
	Output report.Format
	rules.ExplainOptions
	Files []string
}

// NewCmdRules builds `kubedra rules` with list, show and validate.
func NewCmdRules(streams IOStreams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rules",
		Short: "List, explain and validate the mapping rules",
		Long: heredoc.Doc(`
			Rules map device-plugin extended resources (nvidia.com/gpu, aws.amazon.com/neuron,
			...) to DRA: driver, DeviceClass, CEL selectors, topology and configuration.
			kubedra ships rules for NVIDIA, AWS Neuron and EFA, AMD, Intel, Google TPU, HAMi
			and the DRA example driver; rules files passed with --rules add or override them
			(docs/rules.md describes the schema).
		`),
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdRulesList(streams), newCmdRulesShow(streams), newCmdRulesValidate(streams))
	return cmd
}

func newCmdRulesList(streams IOStreams) *cobra.Command {
	opts := &RulesOptions{IO: streams}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the rules and which one applies",
		Example: heredoc.Doc(`
			kubedra rules list
			kubedra rules list --rules ./my-rules.yaml -o yaml
		`),
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			set, err := rules.LoadFrom(opts.IO.Dir(), opts.Rules...)
			if err != nil {
				return err
			}
			return report.RuleList(opts.IO.Out, set.Rules(), opts.Output)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Rules, "rules", nil, "rules file to add (repeatable; later files win)")
	report.AddFormatFlag(cmd, &opts.Output, report.RuleFormats, "")
	return cmd
}

func newCmdRulesShow(streams IOStreams) *cobra.Command {
	opts := &RulesOptions{IO: streams, ExplainOptions: rules.ExplainOptions{Target: rules.DefaultTarget, Count: 1}}
	cmd := &cobra.Command{
		Use:   "show RESOURCE",
		Short: "Show the DRA shape a resource becomes",
		Long: heredoc.Doc(`
			Show how one container requesting RESOURCE is migrated: the decision (rule,
			status, what a lossy mapping loses) and the ResourceClaimTemplate (or the shared
			ResourceClaim with --share) for the target Kubernetes version, as a YAML stream.
			Lossy mappings are shown as they would be applied with --allow-lossy.
		`),
		Example: heredoc.Doc(`
			kubedra rules show nvidia.com/mig-1g.10gb
			kubedra rules show nvidia.com/gpu --count 2 --node-selector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3
			kubedra rules show nvidia.com/gpu.shared --share --target-version 1.32
			kubedra rules show aws.amazon.com/neuron --device-class --target-version 1.36
		`),
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Resource = args[0]
			if opts.Count < 1 {
				return flags.Errorf("--count must be at least 1")
			}
			for _, ns := range opts.NodeSelector {
				if k, _, ok := strings.Cut(ns, "="); !ok || k == "" {
					return flags.Errorf("--node-selector %q: want KEY=VALUE", ns)
				}
			}
			return rulesShowRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Rules, "rules", nil, "rules file to add (repeatable; later files win)")
	report.AddFormatFlag(cmd, &opts.Output, report.RuleShowFormats, "")
	cmd.Flags().Var(&opts.Target, "target-version", "Kubernetes version the output is for (1.32-1.38)")
	cmd.Flags().Int64Var(&opts.Count, "count", 1, "quantity the container requests")
	cmd.Flags().BoolVar(&opts.Share, "share", false, "show the shared-claim form of sharing resources")
	cmd.Flags().StringArrayVar(&opts.NodeSelector, "node-selector", nil, "a nodeSelector KEY=VALUE of the pod template (repeatable)")
	cmd.Flags().BoolVar(&opts.DeviceClass, "device-class", false, "also show the DeviceClass that serves the resource unchanged (KEP-5004), when only a count is needed")
	return cmd
}

func rulesShowRun(opts *RulesOptions) error {
	set, err := rules.LoadFrom(opts.IO.Dir(), opts.Rules...)
	if err != nil {
		return err
	}
	e, err := action.Explain(set, opts.ExplainOptions)
	if err != nil {
		return err
	}
	return report.RuleShow(opts.IO.Out, opts.IO.ErrOut, e, opts.Resource, opts.Target, opts.Output)
}

func newCmdRulesValidate(streams IOStreams) *cobra.Command {
	opts := &RulesOptions{IO: streams}
	cmd := &cobra.Command{
		Use:   "validate FILE...",
		Short: "Check rules files: schema, patterns and every CEL expression",
		Long: heredoc.Doc(`
			Validate rules files the way kubedra loads them: strict schema (unknown fields
			are errors), regular expressions, rule ids named by enable/disable, and every CEL
			selector compiled and cost-checked with the API server's own library. Problems
			are printed as FILE:LINE: message on stderr; the exit code is 1 if any file has
			one. "-" reads a file from stdin.
		`),
		Example: heredoc.Doc(`
			kubedra rules validate ./my-rules.yaml
		`),
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.Files = args
			return rulesValidateRun(opts)
		},
	}
	return cmd
}

func rulesValidateRun(opts *RulesOptions) error {
	errs := action.ValidateRules(opts.IO.Dir(), opts.Files, opts.IO.In)
	return exit(report.RulesValidated(opts.IO.Out, opts.IO.ErrOut, opts.Files, errs), false)
}
