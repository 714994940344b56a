package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// chunk is the text of one document: its bytes, its byte offset and its
// first line (1-based) in the file.
type chunk struct {
	data  []byte
	start int
	line  int
}

// builder accumulates the documents of one file and emits them in batches.
type builder struct {
	ctx   context.Context
	f     *File
	opts  Options
	emit  func(*File) error
	index int // next Document index in the file
	// data is the whole file (split), or nil (stream: region holds the
	// text of the current batch when KeepData is set).
	data   []byte
	region []byte
	keep   bool
}

func (b *builder) add(c chunk) error {
	if err := b.ctx.Err(); err != nil {
		return err
	}
	f := b.f
	if !hasContent(c.data) {
		return nil
	}
	f.Documents++
	templated := bytes.Contains(c.data, []byte("{{"))
	if b.opts.Filter != nil && !templated && !mayHoldMany(c.data) && !b.opts.Filter(c.data) {
		// Counted, not parsed. Index still advances by one: a chunk that
		// could hold several Documents is always parsed, and so is one
		// that may be a template (a template is reported, never dropped).
		b.index++
		return b.flushFull(span(c))
	}
	span := inventory.Span{Start: c.start, End: c.start + len(c.data)}
	breaks := inventory.YAMLLines(c.data)
	dec := yaml.NewDecoder(bytes.NewReader(c.data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if line, ok := templateLine(c.data); templated && ok {
				b.skipTemplate(c.line + line - 1)
				break
			}
			f.ParseErrors++
			line, msg := inventory.ErrorLine(err, c.line, breaks)
			if bad, ok := invalidUTF8(c.data); ok {
				// The decoder names no line for bytes that are not UTF-8.
				line, msg = c.line+bad-1, "invalid UTF-8 (the file must be UTF-8 text)"
			}
			f.Diagnostics = append(f.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleNotYAML,
				File: f.Path, Line: line, Message: "not valid YAML: " + msg})
			break
		}
		breaks.Place(&n, c.line-1)
		if err := aliasBound(c.data, &n); err != nil {
			f.ParseErrors++
			f.Diagnostics = append(f.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleNotYAML,
				File: f.Path, Line: c.line, Message: "not valid YAML: " + err.Error()})
			break
		}
		if templated {
			if line, ok := templateNode(&n); ok {
				b.skipTemplate(line)
				break
			}
		}
		if objectRoot(&n) == nil {
			continue
		}
		b.doc(&n, span)
	}
	return b.flushFull(span.End)
}

// aliasBound refuses a document whose aliases expand beyond what
// Kubernetes' decoder accepts: a few hundred bytes of nested aliases
// expand to billions of nodes, which every walk of the document (detect,
// plan, rewrite) would visit. The judge is the decoder kubectl, the API
// server and audit's dump reader use (sigs.k8s.io/yaml: "excessive
// aliasing"), run only on documents that hold an alias.
func aliasBound(data []byte, n *yaml.Node) error {
	if bytes.IndexByte(data, '*') < 0 || !hasAlias(n) {
		return nil
	}
	if _, err := sigsyaml.YAMLToJSON(data); err != nil && strings.Contains(err.Error(), "excessive aliasing") {
		return errors.New("the document's aliases expand beyond what Kubernetes' decoder accepts (excessive aliasing): refused")
	}
	return nil
}

func hasAlias(n *yaml.Node) bool {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.AliasNode {
			return true
		}
		stack = append(stack, n.Content...)
	}
	return false
}

// invalidUTF8 returns the 1-based line (in data) of the first byte that is
// not UTF-8.
func invalidUTF8(data []byte) (int, bool) {
	if utf8.Valid(data) {
		return 0, false
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			return bytes.Count(data[:i], []byte("\n")) + 1, true
		}
		i += n
	}
	return 0, false
}

// span is the end offset of a chunk.
func span(c chunk) int { return c.start + len(c.data) }

func (b *builder) skipTemplate(line int) {
	b.f.Diagnostics = append(b.f.Diagnostics, inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleTemplate, File: b.f.Path, Line: line,
		Message: "Go template syntax ({{ }}): render it first, e.g. helm template ... | kubedra scan -"})
}

// templateNode finds a Go template action that parsed as YAML: `{{ x }}`
// outside quotes is a flow mapping whose first key is a flow mapping,
// which no manifest means. Template text inside strings (Argo's
// "{{inputs.x}}", a block scalar holding a config file) is data and is not
// matched.
func templateNode(n *yaml.Node) (int, bool) {
	first := 0
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle != 0 && len(n.Content) > 0 &&
			n.Content[0].Kind == yaml.MappingNode && n.Content[0].Style&yaml.FlowStyle != 0 &&
			(first == 0 || n.Line < first) {
			first = n.Line
		}
		stack = append(stack, n.Content...)
	}
	return first, first > 0
}

// objectRoot is the root mapping of a decoded document, or nil when it
// holds no object: an empty or null document, or a top-level sequence (a
// JSON6902 patch file) or scalar, which is counted and kept as it is but
// never a Document.
func objectRoot(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.DocumentNode || len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	return n.Content[0]
}

// Objects returns the objects of a decoded document as Parse reads them:
// a `kind: List`'s items, else its root mapping; none when objectRoot has
// none.
func Objects(n *yaml.Node) []*yaml.RNode {
	root := objectRoot(n)
	if root == nil {
		return nil
	}
	items := listItems(root)
	if items == nil {
		return []*yaml.RNode{yaml.NewRNode(root)}
	}
	objs := make([]*yaml.RNode, len(items))
	for i, it := range items {
		objs[i] = yaml.NewRNode(it)
	}
	return objs
}

// doc adds a document (a DocumentNode), flattening a `kind: List`.
func (b *builder) doc(n *yaml.Node, span inventory.Span) {
	f := b.f
	root := n.Content[0]
	if items := listItems(root); items != nil {
		for i, it := range items {
			f.Docs = append(f.Docs, &inventory.Document{Node: yaml.NewRNode(it), Root: n, Span: span,
				Origin: inventory.Origin{Path: f.Path, Index: b.index, Line: it.Line, ListIndex: i}})
			b.index++
		}
		return
	}
	f.Docs = append(f.Docs, &inventory.Document{Node: yaml.NewRNode(root), Root: n, Span: span,
		Origin: inventory.Origin{Path: f.Path, Index: b.index, Line: root.Line, ListIndex: -1}})
	b.index++
}

// listItems returns the items of a `kind: List` document, or nil.
func listItems(root *yaml.Node) []*yaml.Node {
	if root.Kind != yaml.MappingNode {
		return nil
	}
	var kind, items *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch root.Content[i].Value {
		case "kind":
			kind = root.Content[i+1]
		case "items":
			items = root.Content[i+1]
		}
	}
	if kind == nil || kind.Value != "List" || items == nil || items.Kind != yaml.SequenceNode {
		return nil
	}
	if items.Content == nil {
		return []*yaml.Node{}
	}
	return items.Content
}

// flushFull emits a batch when Options.Batch documents are pending; end
// is the file offset where the batch's text ends.
func (b *builder) flushFull(end int) error {
	if b.opts.Batch <= 0 || len(b.f.Docs) < b.opts.Batch {
		return nil
	}
	return b.flush(false, end)
}

// flush emits the pending batch, whose text runs from f.Offset to end.
func (b *builder) flush(last bool, end int) error {
	f := b.f
	f.Last = last
	switch {
	case b.data != nil:
		f.Data = b.data[f.Offset:end]
	case b.keep:
		n := end - f.Offset
		f.Data = b.region[:n:n]
		b.region = append([]byte(nil), b.region[n:]...)
	}
	if err := b.emit(f); err != nil {
		return err
	}
	if !last {
		b.f = &File{Path: f.Path, Root: f.Root, Order: f.Order, Offset: end, Batch: f.Batch + 1}
	}
	return nil
}

// mayHoldMany reports whether a chunk could decode to more than one
// Document (a `kind: List`), so that Index does not depend on the filter.
func mayHoldMany(data []byte) bool {
	return bytes.Contains(data, []byte("List"))
}

// isMarker reports whether line (without its newline) is a `---` document
// marker or a `...` document end, and whether it carries content after
// the marker (only `---` can: `--- {a: 1}`). A marker at column 0 cannot
// be part of a scalar, so a document never spans one.
func isMarker(line []byte) (marker, content bool) {
	if len(line) < 3 || !(line[0] == '-' && line[1] == '-' && line[2] == '-' || line[0] == '.' && line[1] == '.' && line[2] == '.') {
		return false, false
	}
	rest := line[3:]
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '\r' {
		return false, false
	}
	rest = bytes.TrimSpace(rest)
	content = len(rest) > 0 && rest[0] != '#'
	if line[0] == '.' && content {
		return false, false // "... x" is not a document end: let the decoder report it
	}
	return true, content
}

// split cuts f.Data into documents.
func split(ctx context.Context, f *File, opts Options, emit func(*File) error) error {
	data := f.Data
	b := &builder{ctx: ctx, f: f, opts: opts, emit: emit, data: data}
	start, startLine := 0, 1
	line := 1
	for pos := 0; pos < len(data); {
		end := bytes.IndexByte(data[pos:], '\n')
		next := len(data)
		if end >= 0 {
			next = pos + end + 1
		}
		if m, content := isMarker(trimEOL(data[pos:next])); m {
			if pos > start {
				if err := b.add(chunk{data[start:pos], start, startLine}); err != nil {
					return err
				}
			}
			if content {
				start, startLine = pos, line
			} else {
				start, startLine = next, line+1
			}
		}
		pos = next
		line++
	}
	if len(data) > start {
		if err := b.add(chunk{data[start:], start, startLine}); err != nil {
			return err
		}
	}
	return b.flush(true, len(data))
}

// stream cuts r into documents without holding more than one document's
// bytes at a time.
func stream(ctx context.Context, f *File, r io.Reader, opts Options, emit func(*File) error) error {
	b := &builder{ctx: ctx, f: f, opts: opts, emit: emit, keep: opts.KeepData}
	br := bufio.NewReaderSize(r, 64<<10)
	var buf, long []byte
	offset, start, startLine, line := 0, 0, 1, 1
	for {
		l, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: collect it whole.
			long = append(long[:0], l...)
			for errors.Is(err, bufio.ErrBufferFull) {
				l, err = br.ReadSlice('\n')
				long = append(long, l...)
			}
			l = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return emitReadErr(b.f, err, emit)
		}
		if len(l) > 0 {
			if m, content := isMarker(trimEOL(l)); m {
				if len(buf) > 0 {
					if err := b.add(chunk{buf, start, startLine}); err != nil {
						return err
					}
				}
				// Reuse the buffer: nodes copy their text, and nothing else
				// keeps a chunk after add returns.
				buf = buf[:0]
				if content {
					start, startLine = offset, line
					buf = append(buf, l...)
				} else {
					start, startLine = offset+len(l), line+1
				}
			} else {
				buf = append(buf, l...)
			}
			if b.keep {
				b.region = append(b.region, l...)
			}
			offset += len(l)
		}
		line++
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(buf) > 0 {
		if err := b.add(chunk{buf, start, startLine}); err != nil {
			return err
		}
	}
	return b.flush(true, offset)
}

func trimEOL(l []byte) []byte {
	l = bytes.TrimSuffix(l, []byte("\n"))
	return bytes.TrimSuffix(l, []byte("\r"))
}

// hasContent reports whether a document has anything but blank lines,
// comments and directives.
func hasContent(data []byte) bool {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		l := data
		if i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		l = bytes.TrimSpace(l)
		if len(l) == 0 || l[0] == '#' || l[0] == '%' {
			continue
		}
		if bytes.Equal(l, []byte("...")) {
			continue
		}
		return true
	}
	return false
}

// templateRE finds, in a document that does not parse, a Go template action
// where YAML structure is expected:
// at the start of a line, after a sequence dash, or as an unquoted mapping
// value. Actions inside quoted strings or text (Argo's "{{inputs.x}}",
// `--epochs {{inputs.parameters.e}}`) are data, not templates.
var templateRE = regexp.MustCompile(`(?m)^[ \t]*(?:-[ \t]+)*(?:[^\s"'#{][^"'#\n]*?:[ \t]+)?\{\{`)

// templateLine returns the 1-based line (in data) of the first Go template
// action that makes data a template rather than YAML.
func templateLine(data []byte) (int, bool) {
	if !bytes.Contains(data, []byte("{{")) {
		return 0, false
	}
	loc := templateRE.FindIndex(data)
	if loc == nil {
		return 0, false
	}
	return bytes.Count(data[:loc[1]], []byte("\n")) + 1, true
}

// Parse decodes data as the text of the file path, as Read would read it
// whole (one File, no filter). Writers use it to read files they append to.
func Parse(path string, data []byte) *File {
	var out *File
	_ = split(context.Background(), &File{Path: path, Data: data, Last: true}, Options{}, func(f *File) error {
		out = f
		return nil
	})
	return out
}
