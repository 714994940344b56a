package rewrite

import (
	"errors"
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// duplicateKeys refuses a document with a mapping that holds a key twice
// (`limits: {nvidia.com/gpu: 1, nvidia.com/gpu: 2}`): which value counts
// depends on the tool that reads it, so no edit can be right.
func duplicateKeys(n *yaml.Node) error {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.MappingNode {
			seen := make(map[string]int, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.Kind != yaml.ScalarNode {
					continue
				}
				if first, ok := seen[k.Value]; ok {
					return inventory.AtLine(k.Line, fmt.Errorf("duplicate key %q (first at line %d): which one counts depends on the tool that reads it; keep one, then run again", k.Value, first))
				}
				seen[k.Value] = k.Line
			}
		}
		stack = append(stack, n.Content...)
	}
	return nil
}

// mergeKeys refuses a document with a YAML merge key (`resources: {<<:
// *base}`): Kubernetes' decoder merges the anchored mapping in, which an
// edit of the document cannot see or remove, so a GPU in the anchor would
// stay beside its claim (and every further run add another). As with an
// alias, the keys must be written out first.
func mergeKeys(n *yaml.Node) error {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
					return inventory.AtLine(k.Line, errors.New("the YAML merge key << merges a mapping in, which Kubernetes reads but kubedra does not edit through (the merged keys would stay beside the claims); write the merged keys out, then run again"))
				}
			}
		}
		if n.Kind != yaml.AliasNode {
			stack = append(stack, n.Content...)
		}
	}
	return nil
}

// noAlias refuses to edit through a YAML alias: the edit would change
// every place the anchor is used, or fail on the alias node.
func noAlias(n *yaml.Node, what string) error {
	if n != nil && n.Kind == yaml.AliasNode {
		return inventory.AtLine(n.Line, fmt.Errorf("%s is the YAML alias *%s, which kubedra does not edit through; replace the alias by its value, then run again", what, n.Value))
	}
	return nil
}

// containerAliases checks the parts of a container the edit changes.
func containerAliases(c *yaml.RNode) error {
	res := c.Field("resources")
	if res == nil {
		return nil
	}
	if err := noAlias(res.Value.YNode(), "resources"); err != nil {
		return err
	}
	for _, f := range []string{"limits", "requests", "claims"} {
		m := res.Value.Field(f)
		if m == nil {
			continue
		}
		if err := noAlias(m.Value.YNode(), "resources."+f); err != nil {
			return err
		}
		if m.Value.YNode().Kind == yaml.MappingNode {
			for i := 1; i < len(m.Value.YNode().Content); i += 2 {
				if err := noAlias(m.Value.YNode().Content[i], "resources."+f+"."+m.Value.YNode().Content[i-1].Value); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
