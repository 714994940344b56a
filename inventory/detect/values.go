package detect

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

var valuesName = regexp.MustCompile(`^values[^/]*\.ya?ml$`)

// IsHelmValues reports whether a file is a Helm values file by its name
// (values.yaml, values-prod.yaml, ...).
func IsHelmValues(path string) bool { return valuesName.MatchString(filepath.Base(path)) }

// isValues reports whether a document is Helm values: an object without a
// kind in a file named as values files are. The values of a chart that
// renders never get here (the chart source reads them).
func isValues(d *inventory.Document) bool {
	return d.Node != nil && d.Node.GetKind() == "" && IsHelmValues(d.Origin.Path)
}

// HelmValues finds the device resources a Helm values document sets under
// a limits or requests map: one Finding per key, with Values the key's
// path (the chart's templates decide which container it reaches, so no
// workload or container is named).
func HelmValues(doc *inventory.Document) []inventory.Finding {
	var out []inventory.Finding
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			parent := ""
			if len(path) > 0 {
				parent = path[len(path)-1]
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if (parent == "limits" || parent == "requests") && IsExtendedResource(k.Value) {
					f := inventory.Finding{Origin: doc.Origin, Line: k.Line, Column: k.Column, Resource: k.Value, Values: keyPath(path, k.Value), ContainerIndex: -1}
					if parent == "limits" {
						f.Limit = v.Value
					} else {
						f.Request = v.Value
					}
					out = append(out, f)
				}
				walk(v, append(path, k.Value))
			}
		}
	}
	if doc != nil && doc.Node != nil {
		walk(doc.Node.YNode(), nil)
	}
	return out
}

// keyPath joins a values key's path as Helm's --set names it.
func keyPath(path []string, leaf string) string {
	return strings.Join(append(slices.Clone(path), leaf), ".")
}
