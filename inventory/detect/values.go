package detect

import (
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	return deviceMaps(doc, nil, false)
}

// SpecMaps finds the device resources a custom resource sets under a
// limits or requests map outside its pod templates (reported are the
// findings of those): one Finding per key, with Values the field's path
// and the object named (llmaz's OpenModel inferenceConfig.flavors, an
// operator's GPU profiles). Objects of groups without a dot (core, apps,
// batch) have none.
func SpecMaps(doc *inventory.Document, reported []inventory.Finding) []inventory.Finding {
	if doc == nil || doc.Node == nil {
		return nil
	}
	group, _, ok := strings.Cut(doc.Node.GetApiVersion(), "/")
	if !ok || !strings.Contains(group, ".") || strings.HasSuffix(group, ".k8s.io") {
		return nil
	}
	at := map[[2]int]bool{}
	for _, f := range reported {
		at[[2]int{f.Line, f.Column}] = true
	}
	out := deviceMaps(doc, func(line, col int) bool { return at[[2]int{line, col}] }, true)
	for i := range out {
		out[i].APIVersion, out[i].Kind = doc.Node.GetApiVersion(), doc.Node.GetKind()
		out[i].Namespace, out[i].Name = doc.Node.GetNamespace(), doc.Node.GetName()
	}
	return out
}

// deviceMaps finds the extended resources set under limits or requests
// maps anywhere in doc, but for the keys skip says are reported already;
// indexes names list items in the paths (flavors[0]).
func deviceMaps(doc *inventory.Document, skip func(line, col int) bool, indexes bool) []inventory.Finding {
	var out []inventory.Finding
	var walk func(n *yaml.Node, path []string)
	walk = func(n *yaml.Node, path []string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if indexes && len(path) > 0 {
					p := slices.Clone(path)
					p[len(p)-1] += "[" + strconv.Itoa(i) + "]"
					walk(c, p)
					continue
				}
				walk(c, path)
			}
		case yaml.MappingNode:
			parent := ""
			if len(path) > 0 {
				parent = path[len(path)-1]
			}
			if parent == "resources" && skip != nil && reportedIn(n, skip) {
				return // a container's resources that detection reported
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if (parent == "limits" || parent == "requests") && IsExtendedResource(k.Value) && (skip == nil || !skip(k.Line, k.Column)) {
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

// reportedIn reports whether a resources map's limits or requests hold a
// key skip says is reported.
func reportedIn(resources *yaml.Node, skip func(line, col int) bool) bool {
	for i := 0; i+1 < len(resources.Content); i += 2 {
		if k := resources.Content[i].Value; k != "limits" && k != "requests" {
			continue
		}
		m := resources.Content[i+1]
		for j := 0; m.Kind == yaml.MappingNode && j+1 < len(m.Content); j += 2 {
			if skip(m.Content[j].Line, m.Content[j].Column) {
				return true
			}
		}
	}
	return false
}

// keyPath joins a values key's path as Helm's --set names it.
func keyPath(path []string, leaf string) string {
	return strings.Join(append(slices.Clone(path), leaf), ".")
}
