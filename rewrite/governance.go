package rewrite

import (
	"fmt"
	"slices"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// Govern applies one governance edit to a document (or list item) node, in
// place, so that comments stay. It checks that the document is the one the
// edit was planned for; what is there already is left as it is, so a
// second run changes nothing.
func Govern(root *yaml.RNode, e *plan.GovEdit) error {
	if root.YNode().Kind == yaml.DocumentNode {
		root = yaml.NewRNode(root.YNode().Content[0])
	}
	if k := root.GetKind(); k != e.Kind || root.GetName() != e.Name {
		return fmt.Errorf("document is %s/%s, the edit is for %s/%s", k, root.GetName(), e.Kind, e.Name)
	}
	for _, k := range e.AddKeys {
		m, err := lookup(root, k.Map)
		if err != nil || m == nil || m.YNode().Kind != yaml.MappingNode {
			return fmt.Errorf("%s not found", k.Map)
		}
		addKeyAfter(m.YNode(), k)
	}
	for _, r := range e.Remove {
		if err := removeKey(root, r); err != nil {
			return err
		}
	}
	for _, c := range e.Covered {
		if err := addCovered(root, c); err != nil {
			return err
		}
	}
	if len(e.Mappings) > 0 {
		if e.ConfigKey == "" {
			return addMappings(root.YNode(), e.Mappings)
		}
		v := field(field(root, "data"), e.ConfigKey)
		if v == nil || v.YNode().Kind != yaml.ScalarNode {
			return fmt.Errorf("data.%s not found", e.ConfigKey)
		}
		text, err := embeddedMappings(v.YNode().Value, e.Mappings)
		if err != nil {
			return fmt.Errorf("data.%s: %w", e.ConfigKey, err)
		}
		n := v.YNode()
		n.Value = text
		if n.Style == 0 || n.Style == yaml.FlowStyle {
			n.Style = yaml.LiteralStyle
		}
	}
	return nil
}

// addKeyAfter puts key: value into map m right after the key k.After,
// with that key's value style, unless the key is there.
func addKeyAfter(m *yaml.Node, k plan.QuotaKey) {
	at := len(m.Content)
	var style yaml.Style
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch m.Content[i].Value {
		case k.Key:
			return
		case k.After:
			at, style = i+2, m.Content[i+1].Style
		}
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.Key}
	val := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k.Value, Style: style}
	if style == 0 && !isNumber(k.Value) {
		val.Style = yaml.DoubleQuotedStyle
	}
	if style == 0 && isNumber(k.Value) {
		val.Tag = "!!int"
	}
	m.Content = slices.Insert(m.Content, at, key, val)
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// removeKey removes a key from the map at its field; a map it leaves
// empty is removed from its parent. A key already gone is not an error.
func removeKey(root *yaml.RNode, r plan.FieldKey) error {
	chain := walk(root.YNode(), parsePath(r.Field))
	if chain == nil {
		return nil
	}
	m := chain[len(chain)-1]
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("%s is not a map", r.Field)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == r.Key {
			m.Content = slices.Delete(m.Content, i, i+2)
			break
		}
	}
	if len(m.Content) == 0 && len(chain) >= 2 {
		remove(chain[len(chain)-2], m)
	}
	return nil
}

// addCovered adds a resource to a ClusterQueue's resource group: at the
// end of coveredResources, and at the end of each flavor's resources as a
// copy of the entry of c.From (Kueue wants the same resources in the same
// order in every flavor). A group that covers it already is left alone.
func addCovered(root *yaml.RNode, c plan.CoveredEdit) error {
	chain := walk(root.YNode(), parsePath(c.Group))
	if chain == nil || chain[len(chain)-1].Kind != yaml.MappingNode {
		return fmt.Errorf("%s not found", c.Group)
	}
	rg := chain[len(chain)-1]
	covered := childOf(rg, "coveredResources")
	if covered == nil || covered.Kind != yaml.SequenceNode {
		return fmt.Errorf("%s.coveredResources is not a list", c.Group)
	}
	if slices.ContainsFunc(covered.Content, func(n *yaml.Node) bool { return n.Value == c.Name }) {
		return nil
	}
	covered.Content = append(covered.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: c.Name})
	if fl := childOf(rg, "flavors"); fl != nil && fl.Kind == yaml.SequenceNode {
		for _, f := range fl.Content {
			res := childOf(f, "resources")
			if res == nil || res.Kind != yaml.SequenceNode {
				continue
			}
			for _, r := range res.Content {
				if r.Kind == yaml.MappingNode && scalarField(r, "name") == c.From {
					n := yaml.CopyYNode(r)
					for i := 0; i+1 < len(n.Content); i += 2 {
						n.Content[i].HeadComment, n.Content[i].LineComment, n.Content[i+1].LineComment = "", "", ""
						if n.Content[i].Value == "name" {
							n.Content[i+1].Value = c.Name
						}
					}
					res.Content = append(res.Content, n)
					break
				}
			}
		}
	}
	return nil
}

// addMappings adds deviceClassMappings to a Kueue Configuration's
// resources: a class goes into the entry of its name, or a new entry.
func addMappings(cfg *yaml.Node, ms []plan.KueueMapping) error {
	if cfg.Kind == yaml.DocumentNode && len(cfg.Content) > 0 {
		cfg = cfg.Content[0]
	}
	if cfg.Kind != yaml.MappingNode {
		return fmt.Errorf("the Kueue Configuration is not a map")
	}
	res := mapField(cfg, "resources")
	if res == nil {
		return fmt.Errorf("resources is not a map")
	}
	seq := childOf(res, "deviceClassMappings")
	if seq == nil {
		seq = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		res.Content = append(res.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "deviceClassMappings"}, seq)
	}
	if seq.Kind != yaml.SequenceNode {
		return fmt.Errorf("resources.deviceClassMappings is not a list")
	}
	seq.Style = 0
	for _, m := range ms {
		var entry *yaml.Node
		for _, el := range seq.Content {
			if el.Kind == yaml.MappingNode && scalarField(el, "name") == m.Name {
				entry = el
			}
		}
		if entry == nil {
			entry = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name"}, {Kind: yaml.ScalarNode, Tag: "!!str", Value: m.Name},
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "deviceClassNames"}, {Kind: yaml.SequenceNode, Tag: "!!seq"}}}
			seq.Content = append(seq.Content, entry)
		}
		names := childOf(entry, "deviceClassNames")
		if names == nil || names.Kind != yaml.SequenceNode {
			return fmt.Errorf("deviceClassMappings[name=%s].deviceClassNames is not a list", m.Name)
		}
		for _, c := range m.Classes {
			if !slices.ContainsFunc(names.Content, func(n *yaml.Node) bool { return n.Value == c }) {
				names.Content = append(names.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: c})
			}
		}
	}
	return nil
}

// mapField returns the map under key in m, adding an empty one when
// missing; nil when the key holds something else.
func mapField(m *yaml.Node, key string) *yaml.Node {
	if v := childOf(m, key); v != nil {
		if v.Kind == yaml.MappingNode {
			v.Style = 0
			return v
		}
		if v.Kind == yaml.ScalarNode && (v.Tag == "!!null" || v.Value == "") {
			*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			return v
		}
		return nil
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

// childOf returns the value of key in the map m, nil when m is no map or
// has no such key.
func childOf(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// embeddedMappings adds mappings to a Kueue Configuration held as text
// (a ConfigMap's controller_manager_config.yaml): only the lines the edit
// needs change, as for a document in a file.
func embeddedMappings(text string, ms []plan.KueueMapping) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return "", err
	}
	before := yaml.CopyYNode(&doc)
	if err := addMappings(&doc, ms); err != nil {
		return "", err
	}
	st := detectStyle([]byte(text))
	b0, err := encodeYAML(before, st)
	if err != nil {
		return "", err
	}
	b, err := encodeYAML(&doc, st)
	if err != nil {
		return "", err
	}
	if s, ok := splice([]byte(text), b0, b, nil); ok {
		return string(s), nil
	}
	return string(b), nil
}
