package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/rules"
)

// RuleFormats are the formats of `rules list`; RuleShowFormats those of
// `rules show`.
var (
	RuleFormats     = NewFormats("table", "json", "yaml")
	RuleShowFormats = NewFormats("yaml", "json")
)

// RuleList writes the rules: a table, or a RuleList envelope.
func RuleList(w io.Writer, items []rules.RuleInfo, format Format) error {
	if format != "table" {
		return Machine(w, format, struct {
			APIVersion string           `json:"apiVersion"`
			Kind       string           `json:"kind"`
			Items      []rules.RuleInfo `json:"items"`
		}{rules.APIVersion, "RuleList", items})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VENDOR\tRESOURCE\tWHEN\tCLASS\tSTATUS\tSOURCE\tAPPLIES")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", dash(it.Vendor), it.Resource, dash(it.When), dash(it.DeviceClass),
			it.Status, it.Source, it.Applies)
	}
	return tw.Flush()
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

// RuleShow writes an explanation: its diagnostics on errOut, then on w
// the decision document and the objects, as a YAML stream or one JSON
// List.
func RuleShow(w, errOut io.Writer, e *rules.Explanation, resource string, target rules.Version, format Format) error {
	for _, d := range e.Diagnostics {
		fmt.Fprintf(errOut, "%s: %s\n", d.Severity, d.Message)
	}
	doc := ruleShow{APIVersion: rules.APIVersion, Kind: "RuleDecision", Resource: resource, Target: target.String(),
		Decision: e.Decision, UsedHints: e.UsedNodeSelectors, Rules: e.Rules}
	if format == "json" {
		out := []any{doc}
		for _, n := range e.Objects {
			m, err := n.Map()
			if err != nil {
				return err
			}
			out = append(out, m)
		}
		return Machine(w, "json", map[string]any{"apiVersion": rules.APIVersion, "kind": "List", "items": out})
	}
	if err := Machine(w, "yaml", doc); err != nil {
		return err
	}
	for _, n := range e.Objects {
		s, err := n.String()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "---\n%s", s)
	}
	return nil
}

var yaml11Bool = map[string]bool{"y": true, "yes": true, "n": true, "no": true, "on": true, "off": true, "true": true, "false": true}

// RulesValidated writes what `rules validate` found, errs parallel to
// files: each valid file on w, each problem on errOut. It reports whether
// any file has one.
func RulesValidated(w, errOut io.Writer, files []string, errs []error) (failed bool) {
	for i, err := range errs {
		if err != nil {
			failed = true
			fmt.Fprintln(errOut, err)
			continue
		}
		fmt.Fprintf(w, "%s: valid\n", files[i])
	}
	return failed
}

// Machine writes v as indented JSON or as YAML; unlike YAML, it keeps the
// Go types' field order (apiVersion and kind first) rather than sorting
// keys, and quotes strings YAML 1.1 readers would take for booleans.
func Machine(w io.Writer, format Format, v any) error {
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
