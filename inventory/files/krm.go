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
// position in the list when there are none).
func Items(items []*yaml.RNode) []*inventory.Document {
	docs := make([]*inventory.Document, len(items))
	for i, item := range items {
		a := item.GetAnnotations()
		path := cmp.Or(a[kioutil.PathAnnotation], a[kioutil.LegacyPathAnnotation])
		idx := i
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
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
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
	rl := &ResourceList{}
	if fc := root.Field("functionConfig"); fc != nil && !yaml.IsMissingOrNull(fc.Value) {
		rl.FunctionConfig = fc.Value
	}
	items := root.Field("items")
	if items == nil || yaml.IsMissingOrNull(items.Value) {
		return rl, nil
	}
	if items.Value.YNode().Kind != yaml.SequenceNode {
		return nil, inventory.AtLine(items.Value.YNode().Line, errors.New("items is not a list"))
	}
	for i, n := range items.Value.Content() {
		if err := itemError(n); err != nil {
			rl.Malformed = append(rl.Malformed, MalformedItem{Index: i, Line: n.Line, Node: n, Err: err})
			continue
		}
		rl.Items = append(rl.Items, yaml.NewRNode(n))
	}
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
