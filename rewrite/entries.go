package rewrite

import (
	"bytes"
	"slices"
	"sync/atomic"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

var (
	// entrySplice turns spliceEntries on; TestEntrySpliceIsWholeDocument
	// turns it off to compare the two paths' bytes, and counts in
	// entrySplices the documents it spliced.
	entrySplice  = true
	entrySplices atomic.Int64
)

// spliceEntries is the new text of a block-style YAML document whose edit
// changed, removed or added a few mapping entries and sequence items
// (the usual migration: a container's resources, a pod's resourceClaims):
// every entry the edit left as it was keeps its lines, a changed entry's
// lines are replaced by the encoding of its new value, a removed one's
// are dropped, and new entries and items are encoded after the last line
// of their mapping or sequence. It gives the text encodeDocument gives
// when the encoder reproduces the document (the encoder's output is the
// same, entry by entry, at any indentation), at the cost of encoding only
// what changed: encoding the whole document twice (to check that the
// encoder reproduces it, then the edit) was most of migrate's time on
// GPU-dense input. Each replaced entry is checked the same way, locally:
// its old value must encode to its old lines. ok is false, and the caller
// takes the whole-document path, for anything else: comments on what the
// edit removes or moves, CRLF, an indent other than 2 spaces, a
// key sharing its line with a sequence's "- ", flow style, blank lines
// that no encoding gives, keys in a new order.
func spliceEntries(content []byte, before, after *yaml.Node, st style) ([]byte, bool) {
	// In a wider indent the encoder indents a mapping in a sequence item
	// from the item's dash, not from its first key: only at 2 spaces are
	// the two the same column, so only there is its encoding of an entry
	// the same at any depth.
	if st.indent != 2 || len(content) == 0 || content[len(content)-1] != '\n' || bytes.IndexByte(content, '\r') >= 0 {
		return nil, false
	}
	if before.Kind != yaml.DocumentNode || after.Kind != yaml.DocumentNode || len(before.Content) != 1 || len(after.Content) != 1 {
		return nil, false
	}
	bm, am := before.Content[0], after.Content[0]
	if bm.Kind != yaml.MappingNode || am.Kind != yaml.MappingNode || bm.Style != 0 || len(bm.Content) == 0 {
		return nil, false
	}
	s := &entrySplicer{content: content, lines: bytes.SplitAfter(content, []byte("\n")), st: st}
	s.lines = s.lines[:len(s.lines)-1] // the empty piece after the last "\n"
	// Node lines are the file's; the document's first key is on its first
	// line that is not blank.
	first := slices.IndexFunc(s.lines, func(l []byte) bool { return !blankOrComment(l) })
	if first < 0 {
		return nil, false
	}
	s.delta = bm.Content[0].Line - 1 - first
	if !s.keyAt(bm.Content[0]) {
		return nil, false
	}
	if !s.mapping(bm, am, s.trim(len(s.lines)-1)) || len(s.edits) == 0 {
		return nil, false
	}
	var out []byte
	next := 0
	for _, e := range s.edits { // in line order, never overlapping
		if e.from < next {
			return nil, false
		}
		for ; next < e.from; next++ {
			out = append(out, s.lines[next]...)
		}
		out = append(out, e.text...)
		next = e.to + 1
	}
	for ; next < len(s.lines); next++ {
		out = append(out, s.lines[next]...)
	}
	return out, true
}

type entrySplicer struct {
	content []byte
	lines   [][]byte
	// scalar marks the lines of block scalars' text: a "# ..." or blank
	// line there is the value's, never a comment or a gap to trim. Made
	// when trim first meets such a line (most documents: never).
	scalar []bool
	delta  int // node line - 1 - delta = index in lines
	st     style
	edits  []lineEdit
}

// lineEdit replaces lines from..to (indexes, inclusive; to = from-1 for an
// insertion before line from) by text.
type lineEdit struct {
	from, to int
	text     []byte
}

func (s *entrySplicer) line(n *yaml.Node) int { return n.Line - 1 - s.delta }

// trim is the last line up to last that is neither blank nor a comment:
// the comment lines above a key are its own (they stay with it), and
// blank lines are the text's (they stay where they are). A block scalar's
// lines are its value, whatever they hold: an entry after one was written
// inside it, and took its "# ..." lines out of the string.
func (s *entrySplicer) trim(last int) int {
	for last > 0 && last < len(s.lines) && blankOrComment(s.lines[last]) && !s.inScalar(last) {
		last--
	}
	return last
}

// inScalar reports whether line i is a block scalar's text.
func (s *entrySplicer) inScalar(i int) bool {
	if s.scalar == nil {
		s.scalar = blockScalarLines(splitLines(s.content))
	}
	return s.scalar[i]
}

// blankOrComment reports whether a line holds only spaces or a comment.
func blankOrComment(l []byte) bool {
	t := bytes.TrimSpace(l)
	return len(t) == 0 || t[0] == '#'
}

// keyAt reports whether a plain key is where its node says, first on its
// line: its entry's lines can be replaced or dropped whole.
func (s *entrySplicer) keyAt(k *yaml.Node) bool {
	i, col := s.line(k), k.Column-1
	if k.Kind != yaml.ScalarNode || k.Style != 0 || i < 0 || i >= len(s.lines) || col < 0 {
		return false
	}
	l := s.lines[i]
	return len(l) > col && len(bytes.TrimLeft(l[:col], " ")) == 0 && bytes.HasPrefix(l[col:], []byte(k.Value+":"))
}

// mapping splices the entries of block mapping b, edited into a, whose
// last line is end.
func (s *entrySplicer) mapping(b, a *yaml.Node, end int) bool {
	// An emptied mapping encodes as {}: its entry is replaced whole.
	if a.Kind != yaml.MappingNode || a.Style != b.Style || a.Tag != b.Tag || a.Anchor != b.Anchor || !sameComments(a, b) || len(b.Content) == 0 || len(a.Content) == 0 || len(b.Content)%2 != 0 {
		return false
	}
	col := b.Content[0].Column - 1
	at := map[string]int{}
	for i := 0; i < len(a.Content); i += 2 {
		if _, dup := at[a.Content[i].Value]; dup {
			return false
		}
		at[a.Content[i].Value] = i
	}
	next := 0 // where a's next kept key must be: a keeps b's order
	for i := 0; i < len(b.Content); i += 2 {
		k, bv := b.Content[i], b.Content[i+1]
		if !s.keyAt(k) || k.Column-1 != col {
			return false
		}
		last := end
		if i+2 < len(b.Content) {
			last = s.trim(s.line(b.Content[i+2]) - 1)
		}
		j, kept := at[k.Value]
		if !kept {
			// A removed entry's comments go with it only when the edit
			// moved them (the whole-document path places them).
			for _, l := range s.lines[s.line(k) : last+1] {
				if bytes.IndexByte(l, '#') >= 0 {
					return false
				}
			}
			s.edits = append(s.edits, lineEdit{from: s.line(k), to: last})
			continue
		}
		if j != next || !identical(k, a.Content[j]) {
			return false
		}
		next = j + 2
		if !s.value(k, bv, a.Content[j+1], last) {
			return false
		}
	}
	if next < len(a.Content) {
		// New entries, after the last one: encoded as a mapping of their
		// own at the mapping's column.
		add := &yaml.Node{Kind: yaml.MappingNode, Content: a.Content[next:]}
		if len(comments(add, nil)) > 0 {
			return false // comments the edit moved: they are still in the text
		}
		text, ok := s.encode(add, col)
		if !ok {
			return false
		}
		s.edits = append(s.edits, lineEdit{from: end + 1, to: end, text: text})
	}
	return true
}

// value splices the value of the entry with key k (lines k..last).
func (s *entrySplicer) value(k, bv, av *yaml.Node, last int) bool {
	if identical(bv, av) {
		return true
	}
	if bv.Kind == yaml.MappingNode && bv.Style == 0 && len(bv.Content) > 0 && len(av.Content) > 0 && s.line(bv) > s.line(k) {
		return s.mapping(bv, av, last)
	}
	if bv.Kind == yaml.SequenceNode && av.Kind == yaml.SequenceNode && bv.Style == 0 && av.Style == 0 && len(bv.Content) > 0 && len(av.Content) >= len(bv.Content) && s.line(bv) > s.line(k) && bv.Tag == av.Tag && bv.Anchor == av.Anchor {
		return s.sequence(bv, av, last)
	}
	// Anything else: the entry's lines, checked against the encoding of
	// its old value, replaced by the encoding of the new one, which must
	// hold the same comments (one the edit moved in is still in the text
	// where it was).
	if !slices.Equal(comments(bv, nil), comments(av, nil)) {
		return false
	}
	col := k.Column - 1
	old, ok := s.encode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, bv}}, col)
	if !ok || !bytes.Equal(old, bytes.Join(s.lines[s.line(k):last+1], nil)) {
		return false
	}
	nw, ok := s.encode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{k, av}}, col)
	if !ok {
		return false
	}
	s.edits = append(s.edits, lineEdit{from: s.line(k), to: last, text: nw})
	return true
}

// sequence splices block sequence b, edited into a (the same items, each
// a mapping spliced in place or left as it was, then new ones), whose
// last line is end.
func (s *entrySplicer) sequence(b, a *yaml.Node, end int) bool {
	if !sameComments(a, b) {
		return false
	}
	// The dash is two columns before an item's first key or value.
	dash := b.Content[0].Column - 3
	for i, bi := range b.Content {
		l := s.line(bi)
		if l < 0 || l >= len(s.lines) || dash < 0 || bi.Column-3 != dash {
			return false
		}
		if line := s.lines[l]; len(line) < dash+2 || line[dash] != '-' || line[dash+1] != ' ' || len(bytes.TrimLeft(line[:dash], " ")) != 0 {
			return false
		}
		ai := a.Content[i]
		if identical(bi, ai) {
			continue
		}
		if bi.Kind != yaml.MappingNode || bi.Style != 0 || len(bi.Content) == 0 {
			return false
		}
		last := end
		if i+1 < len(b.Content) {
			last = s.trim(s.line(b.Content[i+1]) - 1)
		}
		if !s.mappingAfterFirst(bi, ai, last) {
			return false
		}
	}
	if len(a.Content) > len(b.Content) {
		add := &yaml.Node{Kind: yaml.SequenceNode, Content: a.Content[len(b.Content):]}
		if len(comments(add, nil)) > 0 {
			return false
		}
		text, ok := s.encode(add, dash)
		if !ok {
			return false
		}
		s.edits = append(s.edits, lineEdit{from: end + 1, to: end, text: text})
	}
	return true
}

// mappingAfterFirst splices a sequence item's mapping b, edited into a,
// whose first entry shares the dash's line and must be kept as it is, a
// scalar on that line: the rest is a mapping of its own.
func (s *entrySplicer) mappingAfterFirst(b, a *yaml.Node, end int) bool {
	if a.Kind != yaml.MappingNode || len(b.Content) < 4 || len(a.Content) < 2 || b.Anchor != a.Anchor || b.Style != a.Style || !sameComments(a, b) ||
		!identical(b.Content[0], a.Content[0]) || !identical(b.Content[1], a.Content[1]) ||
		b.Content[1].Kind != yaml.ScalarNode || s.line(b.Content[2]) != s.line(b.Content[0])+1 {
		return false
	}
	rb := &yaml.Node{Kind: yaml.MappingNode, Tag: b.Tag, Content: b.Content[2:]}
	ra := &yaml.Node{Kind: yaml.MappingNode, Tag: a.Tag, Content: a.Content[2:]}
	return s.mapping(rb, ra, end)
}

// encode is n encoded in the document's style, every line indented by col
// spaces.
func (s *entrySplicer) encode(n *yaml.Node, col int) ([]byte, bool) {
	b, err := encodeYAML(n, s.st)
	if err != nil {
		return nil, false
	}
	if col == 0 {
		return b, true
	}
	pad := bytes.Repeat([]byte(" "), col)
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		if l[0] != '\n' {
			out = append(out, pad...)
		}
		out = append(out, l...)
	}
	return out, true
}

// sameComments reports whether two nodes carry the same comments of their
// own (their children's are compared where they are spliced).
func sameComments(a, b *yaml.Node) bool {
	return a.HeadComment == b.HeadComment && a.LineComment == b.LineComment && a.FootComment == b.FootComment
}

// comments appends the comments of a tree, in order.
func comments(n *yaml.Node, out []string) []string {
	for _, c := range []string{n.HeadComment, n.LineComment, n.FootComment} {
		if c != "" {
			out = append(out, c)
		}
	}
	for _, c := range n.Content {
		out = comments(c, out)
	}
	return out
}

// identical compares two trees as they encode: kinds, tags, values,
// styles, anchors and comments.
func identical(x, y *yaml.Node) bool {
	if x == y {
		return true
	}
	if x.Kind != y.Kind || x.Tag != y.Tag || x.Value != y.Value || x.Style != y.Style || x.Anchor != y.Anchor ||
		!sameComments(x, y) || len(x.Content) != len(y.Content) {
		return false
	}
	for i := range x.Content {
		if !identical(x.Content[i], y.Content[i]) {
			return false
		}
	}
	return true
}
