package detect

import (
	"path/filepath"
	"regexp"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// RuleHelmValues is the rule id of HelmValues' diagnostics.
const RuleHelmValues = "helm/values"

var valuesName = regexp.MustCompile(`^values[^/]*\.ya?ml$`)

// IsHelmValues reports whether a file is a Helm values file by its name
// (values.yaml, values-prod.yaml, ...).
func IsHelmValues(path string) bool { return valuesName.MatchString(filepath.Base(path)) }

// HelmValues reports the device resources a Helm values document sets under
// a limits or requests map. migrate never edits values files or templates
// ({{ }}): the chart's templates decide where the values go, so the user
// has to move them to DRA by hand (or render the chart and migrate the
// output).
func HelmValues(doc *inventory.Document) inventory.Diagnostics {
	var out inventory.Diagnostics
	var walk func(n *yaml.Node, parent string)
	walk = func(n *yaml.Node, parent string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, parent)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if (parent == "limits" || parent == "requests") && IsExtendedResource(k.Value) {
					out = append(out, inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleHelmValues, File: doc.Origin.Path, Line: k.Line,
						Resource: k.Value,
						Message:  "Helm values set " + parent + "." + k.Value + ": " + v.Value + "; migrate does not edit values files or chart templates",
						Fix:      "move the chart's templates to resource claims by hand, or render the chart (helm template) and migrate the output"})
				}
				walk(v, k.Value)
			}
		}
	}
	if doc != nil && doc.Node != nil {
		walk(doc.Node.YNode(), "")
	}
	return out
}
