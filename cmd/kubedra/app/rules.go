package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// RulesOptions are the flags and dependencies of `kubedra rules`.
type RulesOptions struct {
	IO IOStreams

	Rules  []string
	Output string

	// show
	Resource     string
	Target       rules.Version
	Count        int64
	Share        bool
	NodeSelector []string
	DeviceClass  bool

	// validate
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
			if err := checkRulesOutput(opts.Output); err != nil {
				return err
			}
			return rulesListRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Rules, "rules", nil, "rules file to add (repeatable; later files win)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "table", "output format: table, json or yaml")
	return cmd
}

func checkRulesOutput(o string) error {
	switch o {
	case "table", "json", "yaml":
		return nil
	}
	return FlagErrorf("unknown output format %q: use table, json or yaml", o)
}

// ruleList is the machine form of `rules list`.
type ruleList struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Items      []rules.RuleInfo `json:"items"`
}

func rulesListRun(opts *RulesOptions) error {
	set, err := rules.Load(opts.Rules...)
	if err != nil {
		return err
	}
	items := set.Rules()
	switch opts.Output {
	case "json", "yaml":
		return writeMachine(opts.IO.Out, opts.Output, ruleList{APIVersion: rules.APIVersion, Kind: "RuleList", Items: items})
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VENDOR\tRESOURCE\tWHEN\tCLASS\tSTATUS\tSOURCE\tAPPLIES")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(it.Vendor), it.Resource, dash(it.When), dash(it.DeviceClass),
			it.Status, it.Source, it.Applies)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var yaml11Bool = map[string]bool{"y": true, "yes": true, "n": true, "no": true, "on": true, "off": true, "true": true, "false": true}

// writeMachine writes v as indented JSON or as YAML; YAML keeps the Go
// types' field order (apiVersion and kind first) rather than sorting keys.
func writeMachine(w io.Writer, format string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if format != "yaml" {
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(b)).Decode(&n); err != nil {
		return err
	}
	var block func(*yaml.Node)
	block = func(x *yaml.Node) {
		x.Style = 0
		// YAML 1.1 readers take these for booleans: keep them quoted.
		if x.Kind == yaml.ScalarNode && x.Tag == "!!str" && yaml11Bool[strings.ToLower(x.Value)] {
			x.Style = yaml.DoubleQuotedStyle
		}
		for _, c := range x.Content {
			block(c)
		}
	}
	block(&n)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(&n); err != nil {
		return err
	}
	return enc.Close()
}

func newCmdRulesShow(streams IOStreams) *cobra.Command {
	opts := &RulesOptions{IO: streams, Target: rules.DefaultTarget, Count: 1}
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
			switch opts.Output {
			case "yaml", "json":
			default:
				return FlagErrorf("unknown output format %q: use yaml or json", opts.Output)
			}
			if opts.Count < 1 {
				return FlagErrorf("--count must be at least 1")
			}
			for _, ns := range opts.NodeSelector {
				if k, _, ok := strings.Cut(ns, "="); !ok || k == "" {
					return FlagErrorf("--node-selector %q: want KEY=VALUE", ns)
				}
			}
			return rulesShowRun(opts)
		},
	}
	cmd.Flags().StringArrayVar(&opts.Rules, "rules", nil, "rules file to add (repeatable; later files win)")
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "yaml", "output format: yaml or json")
	cmd.Flags().Var(&opts.Target, "target-version", "Kubernetes version the output is for (1.32-1.37)")
	cmd.Flags().Int64Var(&opts.Count, "count", 1, "quantity the container requests")
	cmd.Flags().BoolVar(&opts.Share, "share", false, "show the shared-claim form of sharing resources")
	cmd.Flags().StringArrayVar(&opts.NodeSelector, "node-selector", nil, "a nodeSelector KEY=VALUE of the pod template (repeatable)")
	cmd.Flags().BoolVar(&opts.DeviceClass, "device-class", false, "also show the DeviceClass that serves the resource unchanged (KEP-5004), when only a count is needed")
	return cmd
}

// ruleShow is the decision document of `rules show`.
type ruleShow struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Resource   string           `json:"resource"`
	Target     string           `json:"target"`
	Decision   rules.Decision   `json:"decision"`
	UsedHints  []string         `json:"usedNodeSelectors,omitempty"`
	Rules      []rules.RuleInfo `json:"rules"`
}

func rulesShowRun(opts *RulesOptions) error {
	set, err := rules.Load(opts.Rules...)
	if err != nil {
		return err
	}
	pod := rules.Pod{Requests: []rules.PodRequest{{
		Container: "main", ContainerType: inventory.Container, Resource: opts.Resource, Quantity: fmt.Sprint(opts.Count),
	}}}
	for _, ns := range opts.NodeSelector {
		k, v, _ := strings.Cut(ns, "=")
		pod.Hints = append(pod.Hints, inventory.Hint{Kind: inventory.HintNodeSelector, Key: k, Values: []string{v},
			Path: "spec.template.spec.nodeSelector." + k})
	}
	res, err := set.Resolve(pod, rules.Options{Target: opts.Target, AllowLossy: true, Share: opts.Share})
	if err != nil {
		return err
	}
	d := res.Decisions[0]
	doc := ruleShow{APIVersion: rules.APIVersion, Kind: "RuleDecision", Resource: opts.Resource, Target: opts.Target.String(),
		Decision: d, Rules: set.Matching(opts.Resource)}
	for _, h := range res.UsedHints {
		doc.UsedHints = append(doc.UsedHints, pod.Hints[h].Key)
	}
	var objs []*yaml.RNode
	if d.Claim >= 0 {
		c := res.Claims[d.Claim]
		enc := rules.EncodeClaimTemplate
		if c.Shared {
			enc = rules.EncodeClaim
		}
		n, err := enc(c.Name, "", c, opts.Target)
		if err != nil {
			return fmt.Errorf("encoding the claim for %s: %w", opts.Target, err)
		}
		objs = append(objs, n)
	}
	if opts.DeviceClass && d.ExtendedResource {
		n, err := set.DeviceClass(d, opts.Target)
		var ge *rules.GateError
		if errors.As(err, &ge) {
			// Shown anyway: the gate can be turned on (migrate --force).
			fmt.Fprintf(opts.IO.ErrOut, "warning: %v\n", err)
			n, err = set.DeviceClassForced(d, opts.Target)
		}
		if err != nil {
			return fmt.Errorf("DeviceClass for %s: %w", opts.Resource, err)
		}
		objs = append(objs, n)
	}
	if opts.Output == "json" {
		out := []any{doc}
		for _, n := range objs {
			m, err := n.Map()
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return writeMachine(opts.IO.Out, "json", map[string]any{"apiVersion": rules.APIVersion, "kind": "List", "items": out})
	}
	if err := writeMachine(opts.IO.Out, "yaml", doc); err != nil {
		return err
	}
	for _, n := range objs {
		s, err := n.String()
		if err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.Out, "---\n%s", s)
	}
	return nil
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
	failed := false
	for _, f := range opts.Files {
		var err error
		if f == "-" {
			var data []byte
			data, err = io.ReadAll(opts.IO.In)
			if err == nil {
				_, err = rules.LoadBytes("-", data)
			}
		} else {
			if _, serr := os.Stat(f); serr != nil {
				err = fmt.Errorf("%s: %w", f, errors.Unwrap(serr))
			} else {
				_, err = rules.Load(f)
			}
		}
		if err != nil {
			failed = true
			fmt.Fprintln(opts.IO.ErrOut, err)
			continue
		}
		fmt.Fprintf(opts.IO.Out, "%s: valid\n", f)
	}
	if failed {
		return &ExitCodeError{Code: ExitError}
	}
	return nil
}
