package rewrite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// Piece is one part of a rewritten text: Old as it was, New what replaces
// it (the same bytes for text no edit touches). Laid end to end, the Old
// of a Result's pieces is its input and the New its output.
type Piece struct {
	Old, New []byte
	// Docs are New's documents as decoded by the check that the edit
	// parses (nil for a piece File did not re-encode): a caller that reads
	// the new text (migrate's proof) uses them instead of a second parse.
	Docs []*yaml.Node
}

// Result is the outcome of rewriting one file, or one batch of its
// documents.
type Result struct {
	Pieces []Piece
	// Objects are new objects for the plan's claims file (set only when
	// FilePlan.ClaimsFile is set).
	Objects []*yaml.RNode
	// Failures are the documents left as they were, with the reason.
	Failures []Failure
}

// Failure is a document the plan could not be applied to: its text is
// kept as it was.
type Failure struct {
	// Line is the document's first line; Err says why, an
	// *inventory.LineError when it is about a line of its own.
	Line int
	Err  error
	// Index is the document's index (the first of its List's items).
	Index int
	// Workloads and Objects count the plan's workloads and new objects
	// that were not applied.
	Workloads, Objects int
}

// File applies the plan for one file to its documents. data is the text
// the documents were read from, starting at byte offset of the file (a
// whole file, or one batch of a streamed one: inventory/files' File.Data
// and File.Offset), and docs are its Documents, whose nodes are edited in
// place. Text the plan does not touch is copied byte for byte; each
// touched document is re-encoded in the text's own style (indent width,
// sequence indentation, JSON or YAML) from its Root, so its comments stay,
// and its new objects follow it. A document that cannot be edited (a
// duplicate key, an alias where the edit goes) keeps its text and is
// listed in Result.Failures; the others are edited. An error leaves
// nothing changed: the result is the input as one piece.
func File(data []byte, offset int, docs []*inventory.Document, fp *plan.FilePlan) (Result, error) {
	unchanged := Result{Pieces: []Piece{{Old: data, New: data}}}
	if fp == nil || len(fp.Docs) == 0 && len(fp.Upgrades) == 0 && len(fp.Governance) == 0 {
		return unchanged, nil
	}
	roots, failures, err := applyPlan(docs, fp, fp.ClaimsFile == "")
	if err != nil {
		return unchanged, err
	}
	res := Result{Failures: failures}
	style := detectStyle(data)
	pos := offset
	for _, t := range roots {
		if t.span.Start < pos || t.span.End > offset+len(data) {
			return unchanged, inventory.AtLine(t.line, errors.New("document outside the text read"))
		}
		if t.span.Start > pos {
			res.Pieces = append(res.Pieces, Piece{Old: data[pos-offset : t.span.Start-offset], New: data[pos-offset : t.span.Start-offset]})
		}
		old := data[t.span.Start-offset : t.span.End-offset]
		nw, decoded, err := encodeEdited(old, t, style, fp.ClaimsFile != "")
		if err != nil {
			return unchanged, err
		}
		if t.replace != nil {
			nw, decoded = t.replace(old), nil
		}
		if fp.ClaimsFile != "" {
			res.Objects = append(res.Objects, t.Objects...)
		}
		res.Pieces = append(res.Pieces, Piece{Old: old, New: nw, Docs: decoded})
		pos = t.span.End
	}
	if end := offset + len(data); pos < end {
		res.Pieces = append(res.Pieces, Piece{Old: data[pos-offset:], New: data[pos-offset:]})
	}
	return res, nil
}

// encodeEdited is the new text of one edited root: the document re-encoded
// in the text's style, with its new objects after it unless they go to a
// claims file. The document's new text is decoded again, to check that
// it parses; its documents are returned, then the new objects' own nodes
// (the encoder's text of a tree kubedra built, after a "---" of its own:
// decoding it again would only find the same tree, at half the cost of a
// GPU-dense migrate).
func encodeEdited(old []byte, t *Edited, style style, claimsFile bool) ([]byte, []*yaml.Node, error) {
	nw, err := encodeDocument(old, t.Root, t.before, t.moved, style)
	if err != nil {
		return nil, nil, err
	}
	docs, err := reparse(nw)
	if err != nil {
		return nil, nil, inventory.AtLine(t.line, fmt.Errorf("rewritten document does not parse (a kubedra bug, please report it): %w", err))
	}
	if !claimsFile {
		crlf := isCRLF(splitLines(old))
		for _, o := range t.Objects {
			if len(nw) > 0 && nw[len(nw)-1] != '\n' {
				nw = append(nw, '\n')
			}
			b, err := encodeYAML(o.YNode(), style)
			if err != nil {
				return nil, nil, err
			}
			b = append([]byte("---\n"), b...)
			if crlf {
				// New objects in a CRLF file get CRLF too.
				b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
			}
			nw = append(nw, b...)
			docs = append(docs, &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{o.YNode()}})
		}
	}
	return nw, docs, nil
}

// listOf returns the items of a root that holds a `kind: List` (or any
// *List) document, or nil.
func listOf(root *yaml.Node) *yaml.Node {
	n := root
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	if items, ok := listItems(yaml.NewRNode(n)); ok {
		return items
	}
	return nil
}

// encodeDocument encodes an edited root in the style of its old text: JSON
// stays JSON (with its indent), YAML gets the text's indentation; only the
// lines the edit needs change (splice, given the root as it was before
// the edit), else every line that the encoder only re-spaced is put back;
// trailing blank lines stay, and a `--- ` marker the document started on
// is kept on a line of its own.
func encodeDocument(old []byte, root, before *yaml.Node, moved []string, style style) ([]byte, error) {
	content, trail := trimTrailing(old)
	isJSON := isJSONText(content)
	enc := func(n *yaml.Node) ([]byte, error) {
		if isJSON {
			return encodeJSON(n, jsonIndent(content)), nil
		}
		return encodeYAML(n, style)
	}
	if entrySplice && before != nil && !isJSON && len(moved) == 0 && !bytes.HasPrefix(content, []byte("---")) && !isFlowText(content) {
		if s, ok := spliceEntries(content, before, root, style); ok {
			entrySplices.Add(1)
			return append(s, trail...), nil
		}
	}
	b, err := enc(root)
	if err != nil {
		return nil, err
	}
	if before != nil && !bytes.HasPrefix(content, []byte("---")) {
		if b0, err := enc(before); err == nil {
			if bytes.Equal(b0, content) && len(moved) == 0 && bytes.IndexByte(content, '#') < 0 {
				// The encoder gives the old text back unchanged and there
				// is no comment an edit could drop: its encoding of the
				// edit changes only the lines the edit needs, with no
				// splice to make (most generated manifests: the splice
				// and its check would double migrate's time).
				return append(b, trail...), nil
			}
			if !isJSON && isFlowText(content) {
				if s, ok := spliceFlow(content, b0, b); ok {
					return append(s, trail...), nil
				}
			}
			if s, ok := splice(content, b0, b, moved); ok {
				return append(s, trail...), nil
			}
		}
	}
	if !isJSON {
		b = restoreSpacing(content, b)
	}
	if bytes.HasPrefix(content, []byte("---")) {
		b = append([]byte("---\n"), b...)
	}
	return append(b, trail...), nil
}

// isJSONText reports whether a document's text is JSON (after a BOM): a
// YAML flow mapping starts with "{" too (`{apiVersion: v1, kind: Pod}`)
// and stays YAML, its quoting as written.
func isJSONText(content []byte) bool {
	t := bytes.TrimSpace(bytes.TrimPrefix(content, []byte("\xef\xbb\xbf")))
	return bytes.HasPrefix(t, []byte("{")) && json.Valid(t)
}

// isFlowText reports whether a document's text is one YAML flow
// collection (after a BOM).
func isFlowText(content []byte) bool {
	t := bytes.TrimSpace(bytes.TrimPrefix(content, []byte("\xef\xbb\xbf")))
	return bytes.HasPrefix(t, []byte("{")) || bytes.HasPrefix(t, []byte("["))
}

// restoreSpacing puts back the original of every re-encoded line that
// differs from an original line only in runs of spaces after its
// indentation (`name: x   # comment`, `metadata:   {name: y}`): the encoder
// normalises those, and they never change what the YAML means.
func restoreSpacing(orig, enc []byte) []byte {
	origLines := bytes.SplitAfter(orig, []byte("\n"))
	byKey := map[string][]byte{}
	dup := map[string]bool{}
	for _, l := range origLines {
		k := spacingKey(l)
		if k == string(l) {
			continue // nothing to restore from this line
		}
		if _, ok := byKey[k]; ok && !bytes.Equal(byKey[k], l) {
			dup[k] = true
		}
		byKey[k] = l
	}
	if len(byKey) == 0 {
		return enc
	}
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(enc, []byte("\n")) {
		k := spacingKey(l)
		if o, ok := byKey[k]; ok && !dup[k] && bytes.HasSuffix(o, []byte("\n")) == bytes.HasSuffix(l, []byte("\n")) {
			out.Write(o)
			continue
		}
		out.Write(l)
	}
	return out.Bytes()
}

// spacingKey is a line with runs of spaces after its indentation collapsed
// to one space.
func spacingKey(l []byte) string {
	body := bytes.TrimLeft(l, " ")
	var b strings.Builder
	b.Write(l[:len(l)-len(body)])
	space := false
	for _, c := range body {
		if c == ' ' {
			if space {
				continue
			}
			space = true
		} else {
			space = false
		}
		b.WriteByte(c)
	}
	return b.String()
}

func nodes(objs []*plan.Object) []*yaml.RNode {
	var out []*yaml.RNode
	for _, o := range objs {
		out = append(out, yaml.NewRNode(yaml.CopyYNode(o.Node.YNode())))
	}
	return out
}

// listItems returns the items of a `kind: List` (or any *List) document.
func listItems(root *yaml.RNode) (*yaml.Node, bool) {
	if !strings.HasSuffix(root.GetKind(), "List") {
		return nil, false
	}
	items := root.Field("items")
	if items == nil || items.Value.YNode().Kind != yaml.SequenceNode {
		return nil, false
	}
	return items.Value.YNode(), true
}

// trimTrailing splits trailing blank lines off a body, so that re-encoding
// keeps the spacing between documents.
func trimTrailing(body []byte) (content, trail []byte) {
	end := len(body)
	for end > 0 {
		i := bytes.LastIndexByte(body[:end-1], '\n') + 1
		if end > 0 && body[end-1] != '\n' {
			break
		}
		if len(bytes.TrimSpace(body[i:end])) != 0 {
			break
		}
		end = i
	}
	return body[:end], body[end:]
}

// Document applies the edits of one DocPlan to a document (or list item)
// node. It checks that the document is the one the plan was made for.
func Document(root *yaml.RNode, dp *plan.DocPlan) error {
	if root.YNode().Kind == yaml.DocumentNode {
		root = yaml.NewRNode(root.YNode().Content[0])
	}
	name := root.GetName()
	if name == "" {
		if gn, err := root.Pipe(yaml.Lookup("metadata", "generateName")); err == nil && gn != nil {
			name = yaml.GetValue(gn)
		}
	}
	if k := root.GetKind(); k != dp.Kind || name != dp.Name {
		return fmt.Errorf("document is %s/%s, the plan is for %s/%s", k, name, dp.Kind, dp.Name)
	}
	for _, pe := range dp.Pods {
		spec, err := lookup(root, pe.Path)
		if err != nil || spec == nil || spec.YNode().Kind != yaml.MappingNode {
			return fmt.Errorf("pod template %s not found", pe.Path)
		}
		for _, ce := range pe.Containers {
			if err := container(spec, ce); err != nil {
				return err
			}
		}
		if err := podClaims(spec, pe.ResourceClaims); err != nil {
			return err
		}
		if err := removeHints(root, pe.RemoveHints); err != nil {
			return err
		}
	}
	return setFields(root, dp.Sets)
}

// fieldValue is the scalar value of a map's field, "" when it has none (a
// container without a name).
func fieldValue(n *yaml.RNode, key string) string {
	if f := n.Field(key); f != nil {
		return yaml.GetValue(f.Value)
	}
	return ""
}

func container(spec *yaml.RNode, ce plan.ContainerEdit) error {
	var c *yaml.RNode
	if list := spec.Field(ce.Type.ListField()); list != nil && list.Value.YNode().Kind == yaml.SequenceNode {
		items := list.Value.YNode().Content
		named := func(n *yaml.Node) bool {
			return n.Kind == yaml.MappingNode && fieldValue(yaml.NewRNode(n), "name") == ce.Name
		}
		// The container at the finding's index, when it is the one named
		// (a pod of 10,000 containers was a quadratic search), else the
		// first of that name.
		if i := ce.Index; i >= 0 && i < len(items) && (ce.Name == "" || named(items[i])) {
			c = yaml.NewRNode(items[i])
		}
		for i := 0; c == nil && ce.Name != "" && i < len(items); i++ {
			if named(items[i]) {
				c = yaml.NewRNode(items[i])
			}
		}
	}
	if c == nil && ce.Name != "" && ce.Type == inventory.Container {
		// A container held under its own key, as KServe model specs are
		// (spec.predictor.tensorflow).
		if f := spec.Field(ce.Name); f != nil && f.Value.YNode().Kind == yaml.MappingNode {
			c = f.Value
		}
	}
	if c == nil {
		return fmt.Errorf("container %q not found in %s", ce.Name, ce.Type.ListField())
	}
	if err := containerAliases(c); err != nil {
		return err
	}
	res, err := c.Pipe(yaml.LookupCreate(yaml.MappingNode, "resources"))
	if err != nil {
		return fmt.Errorf("container %q: %w", ce.Name, err)
	}
	var moved []string // comments of removed requests, for the claims entry
	for _, field := range []string{"limits", "requests"} {
		m := res.Field(field)
		if m == nil || m.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		var entries []string
		for _, key := range ce.Remove {
			entries = append(entries, takeComments(m.Value, key)...)
			if _, err := m.Value.Pipe(yaml.FieldClearer{Name: key}); err != nil {
				return err
			}
		}
		if len(m.Value.YNode().Content) == 0 && !slices.Contains(ce.Keep, field) {
			// The map's own comments come first, as in the text.
			entries = append(takeComments(res, field), entries...)
			if _, err := res.Pipe(yaml.FieldClearer{Name: field}); err != nil {
				return err
			}
		}
		moved = append(moved, entries...)
	}
	if len(ce.Claims) == 0 {
		if len(res.YNode().Content) == 0 {
			// Removing the last request (a request of zero) leaves no
			// resources: drop the map, as kubectl users write it, not
			// `resources: {}`. Its comments stay in the text (splice).
			if _, err := c.Pipe(yaml.FieldClearer{Name: "resources"}); err != nil {
				return err
			}
		}
		return nil
	}
	claims, err := res.Pipe(yaml.LookupCreate(yaml.SequenceNode, "claims"))
	if err != nil {
		return fmt.Errorf("container %q: %w", ce.Name, err)
	}
	for _, cc := range ce.Claims {
		if hasElement(claims, map[string]string{"name": cc.Name, "request": cc.Request}) {
			continue
		}
		el := yaml.NewMapRNode(nil)
		el.YNode().Style = claims.YNode().Style
		inventory.SetString(el.YNode(), "name", cc.Name)
		if cc.Request != "" {
			inventory.SetString(el.YNode(), "request", cc.Request)
		}
		giveComments(el.YNode(), moved)
		moved = nil
		claims.YNode().Content = append(claims.YNode().Content, el.YNode())
	}
	return nil
}

// hasElement reports whether a sequence of maps has an element whose
// fields equal want ("" meaning absent).
func hasElement(seq *yaml.RNode, want map[string]string) bool {
	for _, el := range seq.YNode().Content {
		rn := yaml.NewRNode(el)
		if el.Kind != yaml.MappingNode {
			continue
		}
		match := true
		for k, v := range want {
			if mapValue(rn, k) != v {
				match = false
			}
		}
		if match {
			return true
		}
	}
	return false
}

func podClaims(spec *yaml.RNode, pcs []plan.PodClaim) error {
	if len(pcs) == 0 {
		return nil
	}
	seq, err := spec.Pipe(yaml.LookupCreate(yaml.SequenceNode, "resourceClaims"))
	if err != nil {
		return err
	}
	for _, pc := range pcs {
		if el := seq.Element("name", pc.Name); el != nil {
			if mapValue(el, "resourceClaimTemplateName") == pc.ResourceClaimTemplateName && mapValue(el, "resourceClaimName") == pc.ResourceClaimName {
				continue
			}
			return fmt.Errorf("pod already has a resource claim named %q for something else", pc.Name)
		}
		el := yaml.NewMapRNode(nil)
		el.YNode().Style = seq.YNode().Style
		inventory.SetString(el.YNode(), "name", pc.Name)
		if pc.ResourceClaimTemplateName != "" {
			inventory.SetString(el.YNode(), "resourceClaimTemplateName", pc.ResourceClaimTemplateName)
		}
		if pc.ResourceClaimName != "" {
			inventory.SetString(el.YNode(), "resourceClaimName", pc.ResourceClaimName)
		}
		seq.YNode().Content = append(seq.YNode().Content, el.YNode())
	}
	return nil
}

// mapValue returns the scalar value of a mapping's field, "" when absent.
func mapValue(m *yaml.RNode, name string) string {
	if f := m.Field(name); f != nil {
		return yaml.GetValue(f.Value)
	}
	return ""
}

// checkAliases refuses a document whose edit removed the target of an alias
// still in use: the output would not parse.
func checkAliases(n *yaml.Node) error {
	var aliases []*yaml.Node
	var find func(*yaml.Node)
	find = func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode {
			aliases = append(aliases, n)
			return
		}
		for _, c := range n.Content {
			find(c)
		}
	}
	find(n)
	if len(aliases) == 0 {
		return nil // nearly every document: no set of its nodes to build
	}
	present := map[*yaml.Node]bool{}
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		present[n] = true
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	for _, a := range aliases {
		if a.Alias != nil && !present[a.Alias] {
			return inventory.AtLine(a.Line, fmt.Errorf("the YAML anchor &%s is on a value that moves to DRA but alias *%s still uses it; replace the alias by its value, then run again", a.Value, a.Value))
		}
	}
	return nil
}

// reparse decodes every document of b.
func reparse(b []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var docs []*yaml.Node
	for {
		n := new(yaml.Node)
		if err := dec.Decode(n); err != nil {
			if errors.Is(err, io.EOF) {
				return docs, nil
			}
			return nil, err
		}
		docs = append(docs, n)
	}
}
