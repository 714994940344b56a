package rewrite

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// parsePath splits a kyaml field path as detection writes it
// (spec.template.spec.nodeSelector.nvidia\.com/gpu\.product,
// ...nodeSelectorTerms[0].matchExpressions[1], containers[name=cuda]) into
// map keys, "[3]" indexes and "[k=v]" matchers.
func parsePath(p string) []string {
	var parts []string
	var cur strings.Builder
	flush := func() {
		parts = append(parts, cur.String())
		cur.Reset()
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			i++
			cur.WriteByte(p[i])
		case c == '.':
			if cur.Len() > 0 {
				flush()
			}
		case c == '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				cur.WriteString(p[i:])
				i = len(p)
				continue
			}
			if cur.Len() > 0 {
				flush()
			}
			parts = append(parts, p[i:i+end+1])
			i += end
		default:
			cur.WriteByte(c)
		}
	}
	if cur.Len() > 0 {
		flush()
	}
	return parts
}

// walk follows a parsed path from n and returns the chain of nodes visited
// (n first, the target last), or nil when a step is missing.
func walk(n *yaml.Node, parts []string) []*yaml.Node {
	chain := []*yaml.Node{n}
	for _, part := range parts {
		var next *yaml.Node
		switch {
		case strings.HasPrefix(part, "[") && strings.Contains(part, "="):
			if n.Kind != yaml.SequenceNode {
				return nil
			}
			k, v, _ := strings.Cut(strings.Trim(part, "[]"), "=")
			for _, el := range n.Content {
				if f := yaml.NewRNode(el).Field(k); el.Kind == yaml.MappingNode && f != nil && f.Value.YNode().Value == v {
					next = el
					break
				}
			}
		case strings.HasPrefix(part, "["):
			i, err := strconv.Atoi(strings.Trim(part, "[]"))
			if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
				return nil
			}
			next = n.Content[i]
		default:
			if n.Kind != yaml.MappingNode {
				return nil
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					next = n.Content[i+1]
				}
			}
		}
		if next == nil {
			return nil
		}
		chain = append(chain, next)
		n = next
	}
	return chain
}

// lookup returns the node at a field path, or nil.
func lookup(root *yaml.RNode, path string) (*yaml.RNode, error) {
	chain := walk(root.YNode(), parsePath(path))
	if chain == nil {
		return nil, nil
	}
	return yaml.NewRNode(chain[len(chain)-1]), nil
}

// remove deletes child (a value node) from parent, a mapping or sequence.
func remove(parent, child *yaml.Node) {
	switch parent.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(parent.Content); i += 2 {
			if parent.Content[i] == child {
				parent.Content = slices.Delete(parent.Content, i-1, i+1)
				return
			}
		}
	case yaml.SequenceNode:
		if i := slices.Index(parent.Content, child); i >= 0 {
			parent.Content = slices.Delete(parent.Content, i, i+1)
		}
	}
}

// removeHints removes scheduling hints (nodeSelector keys, node-affinity
// expressions) that became CEL selectors, then the containers they leave
// empty: an empty matchExpressions, a term with nothing left, a preferred
// term with only its weight, up to an empty affinity.
//
// Every path is resolved before anything is removed, so indexes stay valid.
// A hint already gone (a second run) is skipped; a hint whose path now holds
// something else is an error, so nothing unrelated is ever removed.
func removeHints(root *yaml.RNode, hints []inventory.Hint) error {
	type target struct{ chain []*yaml.Node }
	var targets []target
	for _, h := range hints {
		chain := walk(root.YNode(), parsePath(h.Path))
		if chain == nil {
			continue
		}
		t := chain[len(chain)-1]
		if t.Kind == yaml.MappingNode {
			if k := yaml.NewRNode(t).Field("key"); k != nil && k.Value.YNode().Value != h.Key {
				return fmt.Errorf("%s holds key %q, expected %q", h.Path, k.Value.YNode().Value, h.Key)
			}
		}
		targets = append(targets, target{chain: chain})
	}
	for _, t := range targets {
		c := t.chain
		remove(c[len(c)-2], c[len(c)-1])
		// Clean up what became empty, stopping at the pod spec.
		for i := len(c) - 2; i >= 1; i-- {
			n := c[i]
			empty := len(n.Content) == 0 && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode)
			if !empty && n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "weight" {
				empty = true // a preferred term whose preference is gone
			}
			if !empty { // the pod spec always holds containers, so this stops there
				break
			}
			remove(c[i-1], n)
		}
	}
	return nil
}
