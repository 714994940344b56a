package rewrite

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Only the lines an edit needs may change. The encoder does not give that
// by itself: it re-quotes, re-spaces ([a,b] -> [a, b]), folds multi-line
// scalars, writes LF in a CRLF file, drops a BOM and the comments of the
// nodes the edit removes. So a document's new text is spliced from three
// texts: its old text, the encoding of its node before the edit (before)
// and after it (after).
//
// Lines of before that are the same in after (the edit did not touch
// them) and that match a line of the old text (the encoder wrote them as
// they were) are stable. Between two stable lines, the old text is kept
// when the edit changed nothing there, and replaced by after's lines when
// it did. Comment lines of the old text that a replaced region loses (the
// comment above or beside a removed `nvidia.com/gpu` line, above a removed
// affinity term, a foot comment at the document's end) are put back:
// leading ones before the region, trailing ones after it, the others
// above the first line the edit added (the new `claims` entry).
//
// The result must mean what after means (decoded and re-encoded without
// comments, they are the same), else splice reports false and the caller
// uses after as it is.

// splice returns the new text of a document whose old text is old (without
// trailing blank lines), given the encodings of its node before and after
// the edit; moved are the comments the edit moved to new objects (not
// lost).
func splice(old, before, after []byte, moved []string) ([]byte, bool) {
	bom := []byte("\xef\xbb\xbf")
	hasBOM := bytes.HasPrefix(old, bom)
	body := bytes.TrimPrefix(old, bom)
	ol := splitLines(body)
	bl, al := splitLines(before), splitLines(after)
	crlf := isCRLF(ol)

	// before line -> old line: exactly where the encoder kept the line,
	// else ignoring indentation (a file that mixes sequence styles, which
	// one style cannot encode); a wrong match changes the structure and
	// fails the check below.
	onB := align(keys(bl), keys(ol))
	if loose := align(looseKeys(bl), looseKeys(ol)); matched(loose) > matched(onB) {
		onB = loose
	}
	bA := align(bl, al) // before line -> after line (exact)
	s := &spliceLines{ol: ol, bl: bl, al: al, onB: onB, bA: bA}
	s.stable()
	regions := s.regions()
	res := writeRegions(regions, lostComments(ol, moved, regions), crlf)
	if hasBOM {
		res = append(append([]byte{}, bom...), res...)
	}
	if !sameMeaning(res, after) {
		return nil, false
	}
	return res, true
}

// spliceLines are the lines of a splice's three texts and how they match.
type spliceLines struct {
	ol, bl, al []string // the old text, the encodings before and after the edit
	onB        []int    // before line -> old line, or -1
	bA         []int    // before line -> after line, or -1
	// anchors are the stable lines, with sentinels at both ends.
	anchors []anchor
}

// anchor is a stable line: its index in before, old and after.
type anchor struct{ b, o, a int }

// stable finds the stable lines: before lines that match an old line and
// an after line, in order in all three texts.
func (s *spliceLines) stable() {
	// Stable lines, with sentinels at both ends.
	anchors := []anchor{{-1, -1, -1}}
	lastO, lastA := -1, -1
	for i := range s.bl {
		o, a := s.onB[i], s.bA[i]
		if o > lastO && a > lastA {
			anchors = append(anchors, anchor{i, o, a})
			lastO, lastA = o, a
		}
	}
	s.anchors = append(anchors, anchor{len(s.bl), len(s.ol), len(s.al)})
}

// regions cuts the output region by region: the old lines kept, or the
// edited lines that replace them (rep).
func (s *spliceLines) regions() []region {
	var regions []region
	for k := 0; k+1 < len(s.anchors); k++ {
		cur, next := s.anchors[k], s.anchors[k+1]
		if cur.o >= 0 {
			regions = append(regions, region{keep: s.ol[cur.o : cur.o+1]})
		}
		oSeg, bSeg, aSeg := s.ol[cur.o+1:next.o], s.bl[cur.b+1:next.b], s.al[cur.a+1:next.a]
		if equalLines(bSeg, aSeg) {
			regions = append(regions, region{keep: oSeg})
			continue
		}
		// Lines the encoder writes differently from the old text (a flow
		// sequence over several lines) are not stable, but the edit may
		// not have touched them: such a run of lines, the same in before
		// and after, whose neighbours in before are old lines (or the
		// region's ends), keeps its old text, and the region is split
		// around it.
		bO, bAr := s.gapMatches(cur, next)
		regions = append(regions, untouched(oSeg, bSeg, aSeg, bO, bAr, s.placer(k))...)
	}
	return regions
}

// placer returns the place function of the region after stable line k.
func (s *spliceLines) placer(k int) func([]string) []string {
	// The edited lines sit where the old text has them: shifted by the
	// difference of indentation at the nearest stable line before them
	// that is not deeper (a parent or sibling), for a file whose
	// indentation the encoder cannot reproduce.
	return func(aSeg []string) []string {
		if len(aSeg) == 0 {
			return aSeg
		}
		want := len(leading(aSeg[0]))
		for j := k; j > 0; j-- {
			if p := s.anchors[j]; len(leading(s.bl[p.b])) <= want {
				return shift(aSeg, len(leading(s.ol[p.o]))-len(leading(s.bl[p.b])))
			}
		}
		return aSeg
	}
}

// gapMatches maps the before lines between two stable lines to the old
// and after lines between them: indexes into those gaps, or -1.
func (s *spliceLines) gapMatches(cur, next anchor) (bO, bAr []int) {
	n := next.b - cur.b - 1
	bO = make([]int, n)  // before line -> oSeg line, or -1
	bAr = make([]int, n) // before line -> aSeg line, or -1
	for i := range n {
		bO[i], bAr[i] = -1, -1
		if o := s.onB[cur.b+1+i]; o > cur.o && o < next.o {
			bO[i] = o - (cur.o + 1)
		}
		if a := s.bA[cur.b+1+i]; a > cur.a && a < next.a {
			bAr[i] = a - (cur.a + 1)
		}
	}
	return bO, bAr
}

// lostComments counts the comments of the old text the regions lack (the
// edit may have moved some into another region, such as a removed
// request's comment into the new claims entry: those are not lost).
func lostComments(ol, moved []string, regions []region) map[string]int {
	lost := map[string]int{}
	for _, l := range ol {
		if c, ok := commentOf(l); ok {
			lost[c]++
		}
	}
	for _, c := range moved {
		lost["# "+strings.TrimSpace(strings.TrimPrefix(c, "#"))]--
		lost[c]--
	}
	for _, r := range regions {
		for _, l := range append(r.keep, r.aSeg...) {
			if c, ok := commentOf(l); ok {
				lost[c]--
			}
		}
	}
	return lost
}

// writeRegions writes the regions' lines, with the lost comments of the
// replaced ones put back.
func writeRegions(regions []region, lost map[string]int, crlf bool) []byte {
	var out bytes.Buffer
	write := func(l string) {
		// The old text's last line may lack its newline; new lines after it
		// need one.
		if b := out.Bytes(); len(b) > 0 && b[len(b)-1] != '\n' {
			if crlf {
				out.WriteByte('\r')
			}
			out.WriteByte('\n')
		}
		out.WriteString(l)
	}
	for _, r := range regions {
		if !r.rep {
			for _, l := range r.keep {
				write(l)
			}
			continue
		}
		for _, l := range rescue(r.oSeg, r.bSeg, r.aSeg, lost) {
			if crlf {
				l = toCRLF(l)
			}
			write(l)
		}
	}
	return out.Bytes()
}

// region is a part of a spliced document: old lines kept, or the edited
// lines aSeg that replace the old lines oSeg, whose encoding before the
// edit is bSeg (rep).
type region struct {
	keep             []string
	oSeg, bSeg, aSeg []string
	rep              bool
}

// untouched splits a region the edit changed around the first run of lines
// the edit did not touch but the encoder wrote differently: lines of
// before that are the same in after (bA, indexes into aSeg, or -1) and
// match no old line (bO, into oSeg, or -1), between two before lines that
// match old lines (or the region's ends). The old lines between those two
// are the run's text, kept as they are; the rest is refined again.
// place indents edited lines where the old text has them.
func untouched(oSeg, bSeg, aSeg []string, bO, bA []int, place func([]string) []string) []region {
	for i0 := 0; i0 < len(bSeg); i0++ {
		if bO[i0] >= 0 || bA[i0] < 0 {
			continue
		}
		left := -1
		if i0 > 0 {
			if bO[i0-1] < 0 {
				continue
			}
			left = bO[i0-1]
		}
		i1 := i0 + 1
		for i1 < len(bSeg) && bO[i1] < 0 && bA[i1] == bA[i1-1]+1 {
			i1++
		}
		right := len(oSeg)
		if i1 < len(bSeg) {
			if bO[i1] < 0 {
				i0 = i1 - 1
				continue
			}
			right = bO[i1]
		}
		if right <= left+1 {
			continue
		}
		a0, a1 := bA[i0], bA[i1-1]+1
		var out []region
		if left >= 0 || i0 > 0 || a0 > 0 {
			out = append(out, region{oSeg: oSeg[:left+1], bSeg: bSeg[:i0], aSeg: place(aSeg[:a0]), rep: true})
		}
		kept, tail := oSeg[left+1:right], []string(nil)
		if right == len(oSeg) {
			// Lines added after the run go before its trailing comments
			// (a foot comment stays last).
			kept, tail = splitTrailingComments(kept)
		}
		out = append(out, region{keep: kept})
		if i1 < len(bSeg) || a1 < len(aSeg) || right < len(oSeg) {
			rO, rA := make([]int, len(bSeg)-i1), make([]int, len(bSeg)-i1)
			for i := range rO {
				rO[i], rA[i] = bO[i1+i], bA[i1+i]
				if rO[i] >= 0 {
					rO[i] -= right
				}
				if rA[i] >= 0 {
					rA[i] -= a1
				}
			}
			out = append(out, untouched(oSeg[right:], bSeg[i1:], aSeg[a1:], rO, rA, place)...)
		}
		if len(tail) > 0 {
			out = append(out, region{keep: tail})
		}
		return out
	}
	return []region{{oSeg: oSeg, bSeg: bSeg, aSeg: place(aSeg), rep: true}}
}

// rescue returns aSeg (the edited lines replacing oSeg, whose encoding
// before the edit is bSeg) with the comments of oSeg that the output lost
// put back.
func rescue(oSeg, bSeg, aSeg []string, lost map[string]int) []string {
	var lead, mid, trail []string
	first, last := -1, -1
	for i, l := range oSeg {
		if _, full := fullComment(l); !full && strings.TrimSpace(l) != "" {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	for i, l := range oSeg {
		c, ok := commentOf(l)
		if !ok {
			continue
		}
		if lost[c] <= 0 {
			continue
		}
		lost[c]--
		_, full := fullComment(l)
		switch {
		case full && (first < 0 || i < first):
			lead = append(lead, ensureNL(l))
		case full && i > last:
			trail = append(trail, ensureNL(l))
		default:
			mid = append(mid, c)
		}
	}
	if len(lead)+len(mid)+len(trail) == 0 {
		return aSeg
	}
	// The middle comments go above the first line the edit added, at its
	// indentation (above the first line of the region when it only
	// removes).
	at := len(aSeg)
	bset := map[string]int{}
	for _, l := range bSeg {
		bset[l]++
	}
	for i, l := range aSeg {
		if bset[l] == 0 {
			at = i
			break
		}
		bset[l]--
	}
	indent := ""
	switch {
	case at < len(aSeg):
		indent = leading(aSeg[at])
	case len(oSeg) > 0:
		indent = leading(oSeg[max(first, 0)])
	}
	out := append([]string{}, lead...)
	out = append(out, aSeg[:at]...)
	for _, c := range mid {
		out = append(out, indent+c+"\n")
	}
	out = append(out, aSeg[at:]...)
	return append(out, trail...)
}

// commentOf returns the comment a line holds ("# ..."), whole-line or
// after a value.
func commentOf(l string) (string, bool) {
	if c, ok := fullComment(l); ok {
		return c, true
	}
	i := lineCommentAt(l)
	if i < 0 {
		return "", false
	}
	return strings.TrimRight(l[i:], " \t\r\n"), true
}

// fullComment reports whether l is a comment line, and its comment.
func fullComment(l string) (string, bool) {
	t := strings.TrimSpace(l)
	if strings.HasPrefix(t, "#") {
		return t, true
	}
	return "", false
}

// lineCommentAt finds the " #" that starts a comment after a value,
// outside quotes; -1 when there is none.
func lineCommentAt(l string) int {
	var quote byte
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			if i == 0 || l[i-1] == ' ' || l[i-1] == '[' || l[i-1] == '{' || l[i-1] == ',' || l[i-1] == ':' {
				quote = c
			}
		case c == '#' && i > 0 && (l[i-1] == ' ' || l[i-1] == '\t'):
			return i
		}
	}
	return -1
}

// shift indents lines by delta spaces (removes up to -delta).
func shift(lines []string, delta int) []string {
	if delta == 0 {
		return lines
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		switch {
		case strings.TrimSpace(l) == "":
			out[i] = l
		case delta > 0:
			out[i] = strings.Repeat(" ", delta) + l
		default:
			out[i] = l[min(-delta, len(leading(l))):]
		}
	}
	return out
}

func leading(l string) string { return l[:len(l)-len(strings.TrimLeft(l, " "))] }

func ensureNL(l string) string {
	if strings.HasSuffix(l, "\n") {
		return l
	}
	return l + "\n"
}

// splitLines splits text into lines that keep their line ends.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	l := strings.SplitAfter(string(b), "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func isCRLF(lines []string) bool {
	n := 0
	for _, l := range lines {
		if strings.HasSuffix(l, "\r\n") {
			n++
		}
	}
	return n > 0 && 2*n >= len(lines)
}

func toCRLF(l string) string {
	if strings.HasSuffix(l, "\n") && !strings.HasSuffix(l, "\r\n") {
		return l[:len(l)-1] + "\r\n"
	}
	return l
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// sameMeaning reports whether two texts hold the same documents once
// comments and styles are set aside.
func sameMeaning(a, b []byte) bool {
	da, errA := documentNodes(a)
	db, errB := documentNodes(b)
	if errA != nil || errB != nil || len(da) != len(db) {
		return false
	}
	for i := range da {
		if !sameNode(da[i], db[i]) {
			return false
		}
	}
	return true
}

// documentNodes parses the documents of text.
func documentNodes(text []byte) ([]*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var out []*yaml.Node
	for {
		n := new(yaml.Node)
		if err := dec.Decode(n); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		out = append(out, n)
	}
}

// sameNode compares two trees as data, without comments or styles: kinds,
// resolved tags (a quoted "1" is a string), scalar values, anchors and the
// anchors aliases name. It walks the trees instead of re-encoding them,
// which matters: it runs on every edited document.
func sameNode(x, y *yaml.Node) bool {
	if x.Kind != y.Kind || x.Anchor != y.Anchor {
		return false
	}
	switch x.Kind {
	case yaml.ScalarNode:
		return x.Value == y.Value && x.ShortTag() == y.ShortTag()
	case yaml.AliasNode:
		return x.Value == y.Value
	}
	if x.Kind != yaml.DocumentNode && x.ShortTag() != y.ShortTag() || len(x.Content) != len(y.Content) {
		return false
	}
	for i := range x.Content {
		if !sameNode(x.Content[i], y.Content[i]) {
			return false
		}
	}
	return true
}

// splitTrailingComments splits lines into its body and the comment and
// blank lines after the body's last content line.
func splitTrailingComments(lines []string) (body, tail []string) {
	end := len(lines)
	for end > 0 {
		l := lines[end-1]
		if _, full := fullComment(l); !full && strings.TrimSpace(l) != "" {
			break
		}
		end--
	}
	return lines[:end], lines[end:]
}
