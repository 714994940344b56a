package rewrite

import (
	"bytes"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// AppendObjects adds objects as new documents at the end of a YAML stream
// (a claims file, or a new file when src is empty). existing are the
// Documents read from src (inventory/files.Parse); an object whose kind,
// namespace and name are among them is not added again.
func AppendObjects(src []byte, existing []*inventory.Document, objs []*yaml.RNode) ([]byte, error) {
	have := map[string]bool{}
	st := style{indent: 2, compact: true}
	if len(bytes.TrimSpace(src)) > 0 {
		st = detectStyle(src)
	}
	for _, d := range existing {
		have[ref(d.Node)] = true
	}
	out := bytes.NewBuffer(append([]byte(nil), src...))
	for _, o := range objs {
		if have[ref(o)] {
			continue
		}
		have[ref(o)] = true
		if out.Len() > 0 {
			if out.Bytes()[out.Len()-1] != '\n' {
				out.WriteByte('\n')
			}
			out.WriteString("---\n")
		}
		b, err := encodeYAML(o.YNode(), st)
		if err != nil {
			return nil, err
		}
		out.Write(b)
	}
	return out.Bytes(), nil
}

func ref(n *yaml.RNode) string {
	if n.YNode().Kind == yaml.DocumentNode {
		n = yaml.NewRNode(n.YNode().Content[0])
	}
	return n.GetKind() + "/" + n.GetNamespace() + "/" + n.GetName()
}

// AddResource adds name to the resources list of a kustomization file, if
// it is not there yet. The file keeps its comments and style.
func AddResource(src []byte, name string) ([]byte, error) {
	var node yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(src)).Decode(&node); err != nil {
		return nil, fmt.Errorf("parsing kustomization: %w", err)
	}
	root := yaml.NewRNode(&node)
	seq, err := root.Pipe(yaml.LookupCreate(yaml.SequenceNode, "resources"))
	if err != nil {
		return nil, fmt.Errorf("kustomization resources: %w", err)
	}
	for _, el := range seq.YNode().Content {
		if el.Value == name {
			return src, nil
		}
	}
	seq.YNode().Content = append(seq.YNode().Content, yaml.NewStringRNode(name).YNode())
	return encodeYAML(&node, detectStyle(src))
}
