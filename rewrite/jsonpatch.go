package rewrite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// AppendToLists rewrites operations of a JSON 6902 patch (its YAML text)
// that add a whole list which migrate now writes into the base
// (a pod's resourceClaims, a container's resources.claims): an add there
// would replace the list migrate wrote, so each becomes an add of every
// element at the list's end ("path/-"). ops are the operations' indexes.
// A one-element add keeps its lines (the path gains "/-", the element
// loses its "- "); a longer one becomes one operation per element.
func AppendToLists(src []byte, ops []int) ([]byte, error) {
	var doc yaml.Node
	if err := inventory.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("parsing the JSON 6902 patch: %w", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("the JSON 6902 patch is not a list of operations")
	}
	list := doc.Content[0].Content
	lines := bytes.SplitAfter(src, []byte("\n"))
	// Edit from the last operation up, so that earlier positions hold.
	for k := len(ops) - 1; k >= 0; k-- {
		i := ops[k]
		if i < 0 || i >= len(list) {
			return nil, fmt.Errorf("the JSON 6902 patch has no operation %d", i)
		}
		var err error
		if lines, err = appendOp(lines, list[i], list, i); err != nil {
			return nil, err
		}
	}
	return bytes.Join(lines, nil), nil
}

// appendOp rewrites one operation in the patch's lines.
func appendOp(lines [][]byte, op *yaml.Node, list []*yaml.Node, i int) ([][]byte, error) {
	path, value := childOf(op, "path"), childOf(op, "value")
	if path == nil || value == nil || value.Kind != yaml.SequenceNode || len(value.Content) == 0 {
		return nil, fmt.Errorf("operation %d does not add a list", i)
	}
	if len(value.Content) == 1 {
		return appendOne(lines, path, value)
	}
	// One operation per element, in the operation's place.
	first := op.Line - 1
	last := len(lines) - 1
	if i+1 < len(list) {
		last = list[i+1].Line - 2
	}
	for last > first && len(bytes.TrimSpace(lines[last])) == 0 {
		last--
	}
	indent := strings.Repeat(" ", op.Column-3)
	var out []byte
	for _, e := range value.Content {
		var v any
		if err := e.Decode(&v); err != nil {
			return nil, err
		}
		j, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out = fmt.Appendf(out, "%s- op: add\n%s  path: %s/-\n%s  value: %s\n", indent, indent, path.Value, indent, j)
	}
	return append(append(append([][]byte{}, lines[:first]...), out), lines[last+1:]...), nil
}

// appendOne edits a one-element add in place: "/-" after the path, and
// the element without its list.
func appendOne(lines [][]byte, path, value *yaml.Node) ([][]byte, error) {
	e := value.Content[0]
	if value.Style&yaml.FlowStyle != 0 {
		l := lines[value.Line-1]
		open := value.Column - 1
		end := matching(l, open)
		if open >= len(l) || l[open] != '[' || end < 0 {
			return nil, fmt.Errorf("line %d: a flow list that spans lines", value.Line)
		}
		nl := append(append(append([]byte{}, l[:open]...), bytes.TrimSpace(l[open+1:end])...), l[end+1:]...)
		lines[value.Line-1] = nl
	} else {
		l := lines[e.Line-1]
		dash := e.Column - 3
		if dash < 0 || dash >= len(l) || l[dash] != '-' {
			return nil, fmt.Errorf("line %d: the list's element is not on its own line", e.Line)
		}
		l = append([]byte{}, l...)
		l[dash] = ' '
		lines[e.Line-1] = l
	}
	l := lines[path.Line-1]
	at := path.Column - 1 + len(path.Value)
	if path.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
		at++
	}
	if at > len(l) {
		return nil, fmt.Errorf("line %d: a path that spans lines", path.Line)
	}
	lines[path.Line-1] = append(append(append([]byte{}, l[:at]...), "/-"...), l[at:]...)
	return lines, nil
}

// matching is the index of the bracket that closes the one at open in l,
// or -1.
func matching(l []byte, open int) int {
	depth, quote := 0, byte(0)
	for i := open; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// AppendToInlineLists does AppendToLists to the inline patch of a
// kustomization whose text starts at line (a block scalar's first line,
// or the line of a quoted one-line patch).
func AppendToInlineLists(src []byte, line int, ops []int) ([]byte, error) {
	var doc yaml.Node
	if err := inventory.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("parsing kustomization: %w", err)
	}
	v := inlinePatchAt(&doc, line)
	if v == nil {
		return nil, fmt.Errorf("line %d: no inline patch starts there", line)
	}
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
		return nil, fmt.Errorf("line %d: an inline patch that is not a block (|) is not rewritten", line)
	}
	nw, err := AppendToLists([]byte(v.Value), ops)
	if err != nil {
		return nil, err
	}
	lines := bytes.SplitAfter(src, []byte("\n"))
	first := v.Line // the block's first content line, 0-based
	n := strings.Count(strings.TrimSuffix(v.Value, "\n"), "\n") + 1
	if first+n > len(lines) {
		return nil, fmt.Errorf("line %d: the inline patch's lines", line)
	}
	indent := ""
	for _, l := range lines[first : first+n] {
		if t := bytes.TrimLeft(l, " "); len(bytes.TrimSpace(t)) > 0 {
			indent = strings.Repeat(" ", len(l)-len(t))
			break
		}
	}
	var body []byte
	newLines := strings.Split(strings.TrimSuffix(string(nw), "\n"), "\n")
	for _, l := range newLines {
		if l != "" {
			body = append(body, indent...)
			body = append(body, l...)
		}
		body = append(body, '\n')
	}
	last := lines[first+n-1]
	if !bytes.HasSuffix(last, []byte("\n")) {
		body = bytes.TrimSuffix(body, []byte("\n"))
	}
	return bytes.Join(append(append(append([][]byte{}, lines[:first]...), body), lines[first+n:]...), nil), nil
}

// inlinePatchAt finds the patch: value of a kustomization's patches (or
// patchesJson6902) entry whose text starts at line.
func inlinePatchAt(doc *yaml.Node, line int) *yaml.Node {
	if len(doc.Content) == 0 {
		return nil
	}
	for _, field := range []string{"patches", "patchesJson6902"} {
		seq := childOf(doc.Content[0], field)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range seq.Content {
			v := childOf(e, "patch")
			if v == nil {
				continue
			}
			start := v.Line
			if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
				start++
			}
			if start == line {
				return v
			}
		}
	}
	return nil
}
