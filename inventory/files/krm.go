package files

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// resourceListHeader and resourceListKind match the top-level apiVersion
// and kind of a KRM ResourceList; documentEnd a document marker.
var (
	resourceListHeader = regexp.MustCompile(`(?m)^apiVersion: *["']?config\.kubernetes\.io/v1["']? *$`)
	resourceListKind   = regexp.MustCompile(`(?m)^kind: *["']?ResourceList["']? *$`)
	documentEnd        = regexp.MustCompile(`(?m)^(---|\.\.\.)[ \t]*$`)
)

// IsResourceList reports whether a stream that starts with head is a KRM
// ResourceList: its first document has the ResourceList apiVersion and
// kind at the top level (kustomize and kpt write them first).
func IsResourceList(head []byte) bool {
	if m := documentEnd.FindIndex(head); m != nil && m[0] == 0 {
		head = head[m[1]:] // a leading marker opens the first document
	}
	if m := documentEnd.FindIndex(head); m != nil {
		head = head[:m[0]]
	}
	return resourceListHeader.Match(head) && resourceListKind.Match(head)
}

// Items are a ResourceList's items as Documents, each at the file and
// index that kustomize, kpt or kio put in its annotations ("" and its
// position among the items when there are none); first is the position of
// the first (items given a batch at a time).
func Items(items []*yaml.RNode, first int) []*inventory.Document {
	docs := make([]*inventory.Document, len(items))
	for i, item := range items {
		a := item.GetAnnotations()
		path := cmp.Or(a[kioutil.PathAnnotation], a[kioutil.LegacyPathAnnotation])
		idx := first + i
		if n, err := strconv.Atoi(cmp.Or(a[kioutil.IndexAnnotation], a[kioutil.LegacyIndexAnnotation])); err == nil {
			idx = n
		}
		docs[i] = &inventory.Document{Node: item, Origin: inventory.Origin{Path: path, Index: idx, Line: item.YNode().Line, ListIndex: -1}}
	}
	return docs
}

// ResourceList is a KRM function's input (config.kubernetes.io/v1), read
// so that one bad item does not cost the others: Items are the items that
// are objects, in order, and Malformed the rest, kept to be written back
// as they came.
type ResourceList struct {
	Items          []*yaml.RNode
	FunctionConfig *yaml.RNode
	Malformed      []MalformedItem
}

// MalformedItem is an item of a ResourceList that is not an object: Index
// is its place among all the items, Line its line in the input.
type MalformedItem struct {
	Index int
	Line  int
	Node  *yaml.Node
	Err   error
}

func (m MalformedItem) Error() string {
	return fmt.Sprintf("items[%d] (line %d): %v", m.Index, m.Line, m.Err)
}

// ParseResourceList reads a KRM function's stdin as kyaml's framework
// would (CRLF read as LF, one document), and says why when data is not a
// ResourceList at all: empty, not YAML, aliases beyond Kubernetes' bound,
// another kind, items that are not a list. Errors name the line.
func ParseResourceList(data []byte) (*ResourceList, error) {
	data = lf(data)
	root, err := resourceListRoot(data)
	if err != nil {
		return nil, err
	}
	rl := &ResourceList{FunctionConfig: functionConfig(root)}
	items := root.Field("items")
	if items == nil || yaml.IsMissingOrNull(items.Value) {
		return rl, nil
	}
	if items.Value.YNode().Kind != yaml.SequenceNode {
		return nil, inventory.AtLine(items.Value.YNode().Line, errors.New("items is not a list"))
	}
	rl.add(items.Value.Content(), 0)
	return rl, nil
}

// lf is data with CRLF read as LF, as kyaml's framework reads stdin.
func lf(data []byte) []byte {
	if !bytes.Contains(data, []byte("\r\n")) {
		return data
	}
	return bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
}

// resourceListRoot parses data (LF lines) as one document whose root is a
// ResourceList.
func resourceListRoot(data []byte) (*yaml.RNode, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("stdin is empty: a KRM function reads a config.kubernetes.io/v1 ResourceList")
	}
	breaks := inventory.YAMLLines(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		line, msg := inventory.ErrorLine(err, 1, breaks)
		return nil, inventory.AtLine(line, fmt.Errorf("not valid YAML: %s", msg))
	}
	breaks.Place(&doc, 0)
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		breaks.Place(&more, 0)
		return nil, inventory.AtLine(more.Line, errors.New("more than one document: a KRM function reads one ResourceList"))
	}
	if err := aliasBound(data, &doc); err != nil {
		return nil, err
	}
	root := yaml.NewRNode(&doc)
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = yaml.NewRNode(doc.Content[0])
	}
	if root.YNode().Kind != yaml.MappingNode || root.GetKind() != kio.ResourceListKind {
		return nil, inventory.AtLine(root.YNode().Line, fmt.Errorf("not a %s ResourceList (kind %q)", kio.ResourceListAPIVersion, root.GetKind()))
	}
	return root, nil
}

// functionConfig is the ResourceList's functionConfig, nil when none.
func functionConfig(root *yaml.RNode) *yaml.RNode {
	if fc := root.Field("functionConfig"); fc != nil && !yaml.IsMissingOrNull(fc.Value) {
		return fc.Value
	}
	return nil
}

// add sorts items, the first at index first of the list, into the
// objects and the malformed.
func (rl *ResourceList) add(items []*yaml.Node, first int) {
	for i, n := range items {
		if err := itemError(n); err != nil {
			rl.Malformed = append(rl.Malformed, MalformedItem{Index: first + i, Line: n.Line, Node: n, Err: err})
			continue
		}
		rl.Items = append(rl.Items, yaml.NewRNode(n))
	}
}

// ItemsText is a ResourceList whose items are parsed a batch at a time
// from their lines (SplitResourceList), so that a large list is never one
// node tree: only the list's other fields are parsed at once.
type ItemsText struct {
	// FunctionConfig is the list's functionConfig, nil when none.
	FunctionConfig *yaml.RNode
	data           []byte
	// starts are where the line of each item's "-" starts in data, then
	// where the items end; lines the line of each "-".
	starts, lines []int
}

// Len is the number of items.
func (t *ItemsText) Len() int { return len(t.lines) }

// Text is the text of items [from, to).
func (t *ItemsText) Text(from, to int) []byte { return t.data[t.starts[from]:t.starts[to]] }

// SplitResourceList splits a ResourceList's text (as ParseResourceList
// reads it) at its items: the entries of a block sequence under a
// top-level items: key, each a "-" at the column of the first. It says
// false for a list in a form whose items might not parse alone as they do
// in the whole list, which the caller then parses with ParseResourceList:
// items in flow style or absent, a comment line before an item or after
// the last (the parser could give it to either neighbour), line breaks
// other than LF, a second items key, or fields around the items that do
// not parse. An item that does not parse alone (an alias, a string
// running into the next item) is found by Parse.
func SplitResourceList(data []byte) (*ItemsText, bool) {
	data = lf(data)
	if inventory.YAMLLines(data) != nil {
		return nil, false
	}
	t := &ItemsText{data: data}
	itemsLine, region, end, ok := t.split()
	if !ok {
		return nil, false
	}
	// The other fields, parsed with the items' lines left empty: their
	// nodes keep the lines and columns they have in the whole list.
	lines := bytes.Count(data[region:end], []byte("\n"))
	head := make([]byte, 0, region+lines+len(data)-end)
	head = append(head, data[:region]...)
	head = append(head, bytes.Repeat([]byte("\n"), lines)...)
	head = append(head, data[end:]...)
	root, err := resourceListRoot(head)
	if err != nil {
		return nil, false
	}
	keys := root.YNode().Content
	found := 0
	for i := 0; i+1 < len(keys); i += 2 {
		if keys[i].Value != "items" {
			continue
		}
		found++
		if v := keys[i+1]; keys[i].Line != itemsLine || keys[i].Column != 1 || v.Kind != yaml.ScalarNode || v.Tag != yaml.NodeTagNull || v.Value != "" {
			return nil, false
		}
	}
	if found != 1 {
		return nil, false
	}
	t.FunctionConfig = functionConfig(root)
	return t, true
}

// split finds the items: the line of the items key, where the first item
// starts and where the last ends; it records each item's start and line.
func (t *ItemsText) split() (itemsLine, region, end int, ok bool) {
	data := t.data
	pos, line := 0, 1
	next := func() []byte {
		e := bytes.IndexByte(data[pos:], '\n')
		if e < 0 {
			return data[pos:]
		}
		return data[pos : pos+e+1]
	}
	for ; pos < len(data); line++ {
		l := next()
		if rest, found := bytes.CutPrefix(l, []byte("items:")); found {
			// Nothing but a comment may follow the key (no flow list, tag
			// or anchor).
			after := bytes.TrimLeft(rest, " \t")
			if len(after) > 0 && after[0] != '\n' && (after[0] != '#' || len(after) == len(rest)) {
				return 0, 0, 0, false
			}
			itemsLine = line
			pos += len(l)
			line++
			break
		}
		pos += len(l)
	}
	if itemsLine == 0 {
		return 0, 0, 0, false
	}
	column := -1
	comment := false // the last line that was not blank is a comment
	for ; pos < len(data); line++ {
		l := next()
		body := bytes.TrimLeft(l, " ")
		indent := len(l) - len(body)
		switch text := bytes.TrimLeft(body, " \t"); {
		case len(bytes.TrimSpace(text)) == 0:
		case text[0] == '#':
			comment = true
		case column >= 0 && indent > column:
			comment = false
		case (column < 0 || indent == column) && body[0] == '-' && (len(body) == 1 || body[1] == ' ' || body[1] == '\n'):
			if comment {
				return 0, 0, 0, false
			}
			column = indent
			t.starts = append(t.starts, pos)
			t.lines = append(t.lines, line)
		default:
			if comment || column < 0 {
				return 0, 0, 0, false
			}
			t.starts = append(t.starts, pos)
			return itemsLine, t.starts[0], pos, true
		}
		pos += len(l)
	}
	if comment || column < 0 {
		return 0, 0, 0, false
	}
	t.starts = append(t.starts, pos)
	return itemsLine, t.starts[0], pos, true
}

// Parse parses items [from, to) from their lines: the objects and the
// malformed items (at their index in the list), with the nodes, lines and
// columns ParseResourceList gives them. An error means the items do not
// parse alone as they would in the whole list (an alias, a string or flow
// collection running on into the next item): parse the list whole.
func (t *ItemsText) Parse(from, to int) (*ResourceList, error) {
	dec := yaml.NewDecoder(bytes.NewReader(t.Text(from, to)))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("items %d to %d: %w", from, to-1, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("items %d to %d are not one sequence", from, to-1)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode || len(doc.Content[0].Content) != to-from {
		return nil, fmt.Errorf("items %d to %d do not parse as %d items", from, to-1, to-from)
	}
	if hasAlias(&doc) {
		return nil, fmt.Errorf("items %d to %d hold an alias", from, to-1)
	}
	inventory.LineStarts(nil).Place(&doc, t.lines[from]-1)
	items := doc.Content[0].Content
	for i, n := range items {
		if n.Line < t.lines[from+i] || from+i+1 < len(t.lines) && n.Line >= t.lines[from+i+1] {
			return nil, fmt.Errorf("item %d is not where its line is", from+i)
		}
	}
	rl := &ResourceList{FunctionConfig: t.FunctionConfig}
	rl.add(items, from)
	return rl, nil
}

// itemError says why an item is not an object kyaml's framework could
// carry: not a mapping, or a mapping without an apiVersion or kind.
func itemError(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return errors.New("not an object (a mapping with apiVersion and kind)")
	}
	item := yaml.NewRNode(n)
	for _, f := range []string{yaml.APIVersionField, yaml.KindField} {
		v := item.Field(f)
		if v == nil || v.Value.YNode().Kind != yaml.ScalarNode || v.Value.YNode().Value == "" {
			return fmt.Errorf("no %s", f)
		}
	}
	return nil
}
