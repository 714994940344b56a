package rewrite

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
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

// AddEntry adds name to the list field of a kustomization file
// (resources, configurations), if it is not there yet. Only the added line
// is new: comments, blank lines and block scalars (inline patches) keep
// their bytes. A flow list ([a, b]) is re-encoded on its line.
func AddEntry(src []byte, field, name string) ([]byte, error) {
	var node yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(src)).Decode(&node); err != nil {
		return nil, fmt.Errorf("parsing kustomization: %w", err)
	}
	root := &node
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if len(bytes.TrimSpace(src)) == 0 {
		return []byte(field + ":\n- " + name + "\n"), nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("parsing kustomization: not a mapping")
	}
	lines := strings.SplitAfter(string(src), "\n")
	entry := yaml.NewStringRNode(name).MustString()
	entry = strings.TrimSuffix(entry, "\n")
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != field {
			continue
		}
		switch {
		case v.Kind == yaml.SequenceNode:
			for _, el := range v.Content {
				if el.Value == name {
					return src, nil
				}
			}
			if v.Style&yaml.FlowStyle != 0 || len(v.Content) == 0 {
				if v.Line != k.Line || strings.Count(lines[v.Line-1], "[") != 1 {
					return nil, fmt.Errorf("kustomization %s: a flow list over several lines", field)
				}
				l := lines[v.Line-1]
				j := strings.LastIndex(l, "]")
				sep := ", "
				if len(v.Content) == 0 {
					sep = ""
				}
				lines[v.Line-1] = strings.TrimRight(l[:j], " ") + sep + entry + l[j:]
				return []byte(strings.Join(lines, "")), nil
			}
			last := v.Content[len(v.Content)-1]
			if last.Kind != yaml.ScalarNode || last.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				return nil, fmt.Errorf("kustomization %s: its last entry is not a plain scalar", field)
			}
			first := lines[v.Content[0].Line-1]
			indent := first[:len(first)-len(strings.TrimLeft(first, " "))]
			at := last.Line // insert after the last entry's line
			lines = slices.Insert(lines, at, indent+"- "+entry+"\n")
			return []byte(strings.Join(lines, "")), nil
		case v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == ""):
			// "resources:" with nothing: the entry goes on the next line.
			lines = slices.Insert(lines, k.Line, "- "+entry+"\n")
			return []byte(strings.Join(lines, "")), nil
		default:
			return nil, fmt.Errorf("kustomization %s: not a list", field)
		}
	}
	out := append([]byte(nil), src...)
	if out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	return append(out, field+":\n- "+entry+"\n"...), nil
}

// Side applies a side file's edit (plan.SideFiles) to its text: objects
// appended (existing are the Documents read from src), entries added to a
// kustomization's resources and configurations, or pod-spec paths merged
// into a kustomize configurations file.
func Side(src []byte, existing []*inventory.Document, e plan.SideEdit) ([]byte, error) {
	out := src
	var err error
	// Inline patches first: their lines are the file's as it was read.
	lines := make([]int, 0, len(e.Appends))
	for l := range e.Appends {
		lines = append(lines, l)
	}
	slices.Sort(lines)
	for i := len(lines) - 1; i >= 0; i-- {
		if l := lines[i]; l == 0 {
			out, err = AppendToLists(out, e.Appends[l])
		} else {
			out, err = AppendToInlineLists(out, l, e.Appends[l])
		}
		if err != nil {
			return nil, err
		}
	}
	if len(e.Objects) > 0 {
		if out, err = AppendObjects(out, existing, e.Objects); err != nil {
			return nil, err
		}
	}
	if len(e.NameReferences) > 0 {
		pods := make([]FieldSpec, len(e.NameReferences))
		for i, p := range e.NameReferences {
			pods[i] = FieldSpec{Path: p}
		}
		if out, err = NameReferences(out, pods); err != nil {
			return nil, err
		}
	}
	for _, r := range e.Resources {
		if out, err = AddEntry(out, "resources", r); err != nil {
			return nil, err
		}
	}
	for _, c := range e.Configurations {
		if out, err = AddEntry(out, "configurations", c); err != nil {
			return nil, err
		}
	}
	return out, nil
}
