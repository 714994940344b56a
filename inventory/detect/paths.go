package detect

// Field paths: finding the nodes a pattern names, and writing kyaml paths.

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// match is a node found by a pattern, with its path and parent map.
type match struct {
	node, parent *yaml.Node
	path         string
}

// expand finds the nodes a TemplatePath pattern names.
func expand(root *yaml.Node, pattern string) []match {
	cur := []match{{node: root}}
	for seg := range strings.SplitSeq(pattern, ".") {
		var next []match
		for _, m := range cur {
			switch {
			case seg == "*":
				eachPair(m.node, func(k, v *yaml.Node) {
					next = append(next, match{node: deref(v), parent: m.node, path: join(m.path, escape(k.Value))})
				})
			case strings.HasSuffix(seg, "[]"):
				name := strings.TrimSuffix(seg, "[]")
				seq := get(m.node, name)
				if seq == nil || seq.Kind != yaml.SequenceNode {
					continue
				}
				for i, c := range seq.Content {
					c = deref(c)
					next = append(next, match{node: c, parent: m.node, path: join(m.path, escape(name)) + item(c, i)})
				}
			default:
				if v := get(m.node, seg); v != nil {
					next = append(next, match{node: v, parent: m.node, path: join(m.path, escape(seg))})
				}
			}
		}
		cur = next
	}
	return cur
}

// join appends a segment to a kyaml field path.
func join(path, seg string) string {
	if path == "" {
		return seg
	}
	return path + "." + seg
}

// escape escapes dots in a key so the path splits where it should.
func escape(key string) string { return strings.ReplaceAll(key, ".", `\.`) }

// item is the path suffix of a list item: [name=x] (or Ray's
// [groupName=x]) when it has such a scalar without brackets or dots, else
// [i].
func item(n *yaml.Node, i int) string {
	for _, k := range []string{"name", "groupName"} {
		if v := scalar(get(n, k)); v != "" && !strings.ContainsAny(v, "[]=. ") {
			return "[" + k + "=" + v + "]"
		}
	}
	return "[" + strconv.Itoa(i) + "]"
}

// lastSegment is the last dot-separated segment of a path.
func lastSegment(path string) string {
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[i+1:]
	}
	return path
}
