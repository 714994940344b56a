package rewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// Result is the outcome of rewriting one file.
type Result struct {
	// Content is the new file; it is src itself when nothing changed.
	Content []byte
	// Objects are new objects for the plan's claims file (set only when
	// FilePlan.ClaimsFile is set).
	Objects []*yaml.RNode
}

// Changed reports whether the file's content changed.
func (r Result) Changed(src []byte) bool { return !bytes.Equal(r.Content, src) }

// File applies the plan for one file to its bytes. Documents the plan does
// not touch are copied byte for byte; touched documents are re-encoded in
// the file's own style (indent width, sequence indentation, JSON or YAML)
// and spliced back. An error leaves nothing changed: the caller keeps src.
func File(src []byte, fp *plan.FilePlan) (Result, error) {
	res := Result{Content: src}
	if fp == nil || len(fp.Docs) == 0 {
		return res, nil
	}
	segs := split(src)
	bySeg := map[int][]*plan.DocPlan{}
	for _, dp := range fp.Docs {
		i := slices.IndexFunc(segs, func(s segment) bool { return dp.Line >= s.line && dp.Line <= s.lastLine })
		if i < 0 {
			return res, fmt.Errorf("line %d: no document there", dp.Line)
		}
		bySeg[i] = append(bySeg[i], dp)
	}
	var out bytes.Buffer
	out.Grow(len(src) + 1024)
	style := detectStyle(src)
	for i, s := range segs {
		out.Write(src[s.sepStart:s.bodyStart])
		dps := bySeg[i]
		if len(dps) == 0 {
			out.Write(src[s.bodyStart:s.end])
			continue
		}
		body, objs, err := document(src[s.bodyStart:s.end], s.line, dps, fp.ClaimsFile == "", style)
		if err != nil {
			return Result{Content: src}, err
		}
		if s.inline {
			out.WriteString("---\n")
		}
		out.Write(body)
		if fp.ClaimsFile != "" {
			res.Objects = append(res.Objects, objs...)
			continue
		}
		for _, o := range objs {
			if out.Len() > 0 && out.Bytes()[out.Len()-1] != '\n' {
				out.WriteByte('\n')
			}
			out.WriteString("---\n")
			b, err := encodeYAML(o.YNode(), style)
			if err != nil {
				return Result{Content: src}, err
			}
			out.Write(b)
		}
	}
	res.Content = out.Bytes()
	if err := reparse(res.Content); err != nil {
		return Result{Content: src}, fmt.Errorf("rewritten file does not parse (a kubedra bug, please report it): %w", err)
	}
	return res, nil
}

// document rewrites one document body. inline is true when new objects of
// a `kind: List` document become list items (otherwise they are returned).
func document(body []byte, line int, dps []*plan.DocPlan, inline bool, style style) ([]byte, []*yaml.RNode, error) {
	content, trail := trimTrailing(body)
	var node yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(content))
	if err := dec.Decode(&node); err != nil {
		return nil, nil, fmt.Errorf("line %d: parsing document: %w", line, err)
	}
	root := yaml.NewRNode(&node)
	var objs []*yaml.RNode
	isJSON := bytes.HasPrefix(bytes.TrimSpace(content), []byte("{"))
	if items, ok := listItems(root); ok {
		for _, dp := range dps {
			idx := itemAt(items, dp.Line-line+1)
			if idx < 0 {
				return nil, nil, fmt.Errorf("line %d: no list item there", dp.Line)
			}
			item := yaml.NewRNode(items.Content[idx])
			if err := Document(item, dp); err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", dp.Line, err)
			}
			if inline {
				// New objects become items right after the workload.
				var add []*yaml.Node
				for _, o := range dp.Objects {
					add = append(add, copyNode(o.Node.YNode()))
				}
				items.Content = slices.Insert(items.Content, idx+1, add...)
			} else {
				objs = append(objs, nodes(dp.Objects)...)
			}
		}
	} else {
		if len(dps) != 1 {
			return nil, nil, fmt.Errorf("line %d: %d edits for one document", line, len(dps))
		}
		if err := Document(root, dps[0]); err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", dps[0].Line, err)
		}
		objs = nodes(dps[0].Objects)
	}
	if err := checkAliases(&node, line); err != nil {
		return nil, nil, err
	}
	var b []byte
	var err error
	if isJSON {
		b = encodeJSON(&node, jsonIndent(content))
	} else {
		b, err = encodeYAML(&node, style)
		b = restoreSpacing(content, b)
	}
	if err != nil {
		return nil, nil, err
	}
	return append(b, trail...), objs, nil
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
		out = append(out, yaml.NewRNode(copyNode(o.Node.YNode())))
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

// itemAt returns the index of the list item holding the 1-based line.
func itemAt(items *yaml.Node, line int) int {
	found := -1
	for i, it := range items.Content {
		if it.Line <= line {
			found = i
		}
	}
	return found
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
	return nil
}

// listField is the pod spec list a container type lives in.
func listField(t inventory.ContainerType) string {
	switch t {
	case inventory.InitContainer, inventory.SidecarContainer:
		return "initContainers"
	case inventory.EphemeralContainer:
		return "ephemeralContainers"
	}
	return "containers"
}

func container(spec *yaml.RNode, ce plan.ContainerEdit) error {
	var c *yaml.RNode
	if list := spec.Field(listField(ce.Type)); list != nil && list.Value.YNode().Kind == yaml.SequenceNode {
		for i, el := range list.Value.YNode().Content {
			rn := yaml.NewRNode(el)
			if ce.Name != "" && el.Kind == yaml.MappingNode && yaml.GetValue(rn.Field("name").Value) == ce.Name || ce.Name == "" && i == ce.Index {
				c = rn
				break
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
		return fmt.Errorf("container %q not found in %s", ce.Name, listField(ce.Type))
	}
	res, err := c.Pipe(yaml.LookupCreate(yaml.MappingNode, "resources"))
	if err != nil {
		return fmt.Errorf("container %q: %w", ce.Name, err)
	}
	for _, field := range []string{"limits", "requests"} {
		m := res.Field(field)
		if m == nil || m.Value.YNode().Kind != yaml.MappingNode {
			continue
		}
		for _, key := range ce.Remove {
			if _, err := m.Value.Pipe(yaml.FieldClearer{Name: key}); err != nil {
				return err
			}
		}
		if len(m.Value.YNode().Content) == 0 {
			if _, err := res.Pipe(yaml.FieldClearer{Name: field}); err != nil {
				return err
			}
		}
	}
	if len(ce.Claims) == 0 {
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
		_ = el.PipeE(yaml.SetField("name", yaml.NewStringRNode(cc.Name)))
		if cc.Request != "" {
			_ = el.PipeE(yaml.SetField("request", yaml.NewStringRNode(cc.Request)))
		}
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
			got := ""
			if f := rn.Field(k); f != nil {
				got = yaml.GetValue(f.Value)
			}
			if got != v {
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
			t := yaml.GetValue(el.Field("resourceClaimTemplateName").Value)
			c := yaml.GetValue(el.Field("resourceClaimName").Value)
			if t == pc.ResourceClaimTemplateName && c == pc.ResourceClaimName {
				continue
			}
			return fmt.Errorf("pod already has a resource claim named %q for something else", pc.Name)
		}
		el := yaml.NewMapRNode(nil)
		el.YNode().Style = seq.YNode().Style
		_ = el.PipeE(yaml.SetField("name", yaml.NewStringRNode(pc.Name)))
		if pc.ResourceClaimTemplateName != "" {
			_ = el.PipeE(yaml.SetField("resourceClaimTemplateName", yaml.NewStringRNode(pc.ResourceClaimTemplateName)))
		}
		if pc.ResourceClaimName != "" {
			_ = el.PipeE(yaml.SetField("resourceClaimName", yaml.NewStringRNode(pc.ResourceClaimName)))
		}
		seq.YNode().Content = append(seq.YNode().Content, el.YNode())
	}
	return nil
}

func copyNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = copyNode(ch)
	}
	return &c
}

// checkAliases refuses a document whose edit removed the target of an alias
// still in use: the output would not parse.
func checkAliases(n *yaml.Node, line int) error {
	present := map[*yaml.Node]bool{}
	var aliases []*yaml.Node
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		present[n] = true
		if n.Kind == yaml.AliasNode {
			aliases = append(aliases, n)
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	for _, a := range aliases {
		if a.Alias != nil && !present[a.Alias] {
			return fmt.Errorf("line %d: the YAML anchor &%s is on a value that moves to DRA but alias *%s still uses it; replace the alias by its value, then run again", line+a.Line-1, a.Value, a.Value)
		}
	}
	return nil
}

func reparse(b []byte) error {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
