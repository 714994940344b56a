package rewrite

import (
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// takeComments returns the comments on the field key of mapping m (above
// it, beside its key or value, below it), for a field about to be
// removed, so that they can move with what replaces it.
func takeComments(m *yaml.RNode, key string) []string {
	f := m.Field(key)
	if f == nil {
		return nil
	}
	var out []string
	for _, c := range []string{f.Key.YNode().HeadComment, f.Key.YNode().LineComment, f.Value.YNode().LineComment,
		f.Key.YNode().FootComment, f.Value.YNode().HeadComment, f.Value.YNode().FootComment} {
		for _, l := range strings.Split(c, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// giveComments puts moved comments above n, after its own.
func giveComments(n *yaml.Node, cs []string) {
	var uniq []string
	for _, c := range cs {
		if !slices.Contains(uniq, c) && !strings.Contains(n.HeadComment, c) {
			uniq = append(uniq, c)
		}
	}
	if len(uniq) == 0 {
		return
	}
	if n.HeadComment != "" {
		uniq = append([]string{n.HeadComment}, uniq...)
	}
	n.HeadComment = strings.Join(uniq, "\n")
}

// hintComments returns the comments on the node-label hints a pod edit
// removes (a nodeSelector entry, an affinity term), which move to the
// request of the claim that now selects the devices.
func hintComments(root *yaml.Node, hints []inventory.Hint) []string {
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	var out []string
	add := func(c string) {
		for _, l := range strings.Split(c, "\n") {
			if l = strings.TrimSpace(l); l != "" && !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	var all func(n *yaml.Node)
	all = func(n *yaml.Node) {
		add(n.HeadComment)
		add(n.LineComment)
		add(n.FootComment)
		for _, c := range n.Content {
			all(c)
		}
	}
	for _, h := range hints {
		chain := walk(root, parsePath(h.Path))
		if len(chain) < 2 {
			continue
		}
		last, parent := chain[len(chain)-1], chain[len(chain)-2]
		if parent.Kind == yaml.MappingNode {
			for i := 1; i < len(parent.Content); i += 2 {
				if parent.Content[i] == last {
					all(parent.Content[i-1])
				}
			}
		}
		all(last)
	}
	return out
}

// requestOf returns the first device request of a new claim template or
// claim, where moved comments go.
func requestOf(obj *yaml.Node) *yaml.Node {
	for _, path := range [][]string{{"spec", "spec", "devices", "requests"}, {"spec", "devices", "requests"}} {
		if rn, err := yaml.NewRNode(obj).Pipe(yaml.Lookup(path...)); err == nil && rn != nil &&
			rn.YNode().Kind == yaml.SequenceNode && len(rn.YNode().Content) > 0 {
			return rn.YNode().Content[0]
		}
	}
	return nil
}

// moveHintComments gives the first new object's request the comments of
// the hints the edit removed, and returns the comments moved.
func moveHintComments(objs []*yaml.Node, cs []string) []string {
	for _, o := range objs {
		if r := requestOf(o); r != nil && len(cs) > 0 {
			giveComments(r, cs)
			return cs
		}
	}
	return nil
}
