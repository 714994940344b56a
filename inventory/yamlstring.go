package inventory

import (
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// StringNode is a scalar node for the string v, double-quoted when YAML
// 1.1 would read it plain as something else (kyaml's FieldSetter rule:
// kubectl and older tools read 1.1). It is what SetField gives a new
// string value, without FieldSetter's yaml.v2 decode of every value: the
// names kubedra writes are DNS labels, which plainLabel decides alone
// (the decode was a tenth of migrate's time on GPU-dense input).
func StringNode(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v}
	if !plainLabel(v) && yaml.IsYaml1_1NonString(n) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// plainLabel reports whether v reads as a string in YAML 1.1 for certain:
// lower-case letters, digits, '-' and '.', starting with a letter (so not
// a number, timestamp or .inf), and not one of the words 1.1 reads as a
// boolean or null.
func plainLabel(v string) bool {
	if v == "" || v[0] < 'a' || v[0] > 'z' {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '.' {
			return false
		}
	}
	switch v {
	case "y", "yes", "n", "no", "true", "false", "on", "off", "null":
		return false
	}
	return true
}

// SetString sets the string field key of mapping m to v (StringNode),
// adding it at the end when m has none.
func SetString(m *yaml.Node, key, v string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			n := StringNode(v)
			if old.Kind == yaml.ScalarNode && n.Style == 0 {
				n.Style = old.Style // keep a quoted value quoted
			}
			n.HeadComment, n.LineComment, n.FootComment = old.HeadComment, old.LineComment, old.FootComment
			m.Content[i+1] = n
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: key}, StringNode(v))
}
