package detect

// Node helpers: read-only, alias- and merge-key-aware.

import "sigs.k8s.io/kustomize/kyaml/yaml"

// deref follows aliases, and from a document node to its content.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return deref(n.Content[0])
	}
	return n
}

// eachPair calls fn for each key/value of a map, including merged ones
// (`<<: *anchor`), keys written directly first.
func eachPair(m *yaml.Node, fn func(k, v *yaml.Node)) {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	seen := map[string]bool{}
	var walkMap func(m *yaml.Node, depth int)
	walkMap = func(m *yaml.Node, depth int) {
		if depth > 8 {
			return
		}
		var merges []*yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			k := m.Content[i]
			if k.Value == "<<" && k.Tag != "!!str" {
				merges = append(merges, m.Content[i+1])
				continue
			}
			if seen[k.Value] {
				continue
			}
			seen[k.Value] = true
			fn(k, m.Content[i+1])
		}
		for _, mg := range merges {
			mg = deref(mg)
			switch mg.Kind {
			case yaml.MappingNode:
				walkMap(mg, depth+1)
			case yaml.SequenceNode:
				for _, x := range mg.Content {
					if x = deref(x); x.Kind == yaml.MappingNode {
						walkMap(x, depth+1)
					}
				}
			}
		}
	}
	walkMap(m, 0)
}

// get returns the value of key in map m (nil when absent), following
// aliases and merge keys.
func get(m *yaml.Node, key string) *yaml.Node {
	m = deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	merged := false
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if k.Value == key && k.Kind == yaml.ScalarNode {
			return deref(m.Content[i+1])
		}
		merged = merged || k.Value == "<<"
	}
	if !merged {
		return nil
	}
	var found *yaml.Node
	eachPair(m, func(k, v *yaml.Node) {
		if found == nil && k.Value == key {
			found = deref(v)
		}
	})
	return found
}

// keyOf returns the key node of key in m.
func keyOf(m *yaml.Node, key string) *yaml.Node {
	var found *yaml.Node
	eachPair(m, func(k, _ *yaml.Node) {
		if found == nil && k.Value == key {
			found = k
		}
	})
	if found == nil {
		return &yaml.Node{}
	}
	return found
}

// scalar is the value of a scalar node, "" for null or any other node.
func scalar(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return ""
	}
	return n.Value
}

// annotation returns the value of an annotation in metadata, nil if absent.
func annotation(meta *yaml.Node, key string) *string {
	v := get(get(meta, "annotations"), key)
	if v == nil {
		return nil
	}
	s := scalar(v)
	return &s
}
