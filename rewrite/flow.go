package rewrite

import "bytes"

// spliceFlow returns the new text of a document written as one flow
// collection (`{apiVersion: v1, kind: Pod, ...}`, over one line or more),
// given the encodings of its node before and after the edit: the encoder
// writes such a document again on one line, so the line splice has no
// line to keep. The bytes before the first change and after the last one
// are the old text's, and only the changed span in between is the
// encoder's. The old text and the encoding before are walked together,
// setting aside what the encoder re-spaces (whitespace, line breaks,
// comments); a text they do not agree on, or a result that does not mean
// what after means, reports false.
func spliceFlow(old, before, after []byte) ([]byte, bool) {
	bom := []byte("\xef\xbb\xbf")
	if bytes.HasPrefix(old, bom) {
		res, ok := spliceFlow(old[len(bom):], before, after)
		return append(append([]byte{}, bom...), res...), ok
	}
	p := 0 // common prefix of before and after
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	s := 0 // common suffix, not overlapping the prefix
	for s < len(before)-p && s < len(after)-p && before[len(before)-1-s] == after[len(after)-1-s] {
		s++
	}
	if p == len(before) && p == len(after) {
		return old, true
	}
	start, end, ok := flowOffsets(old, before, p, len(before)-s)
	if !ok {
		return nil, false
	}
	res := append(append(append([]byte{}, old[:start]...), after[p:len(after)-s]...), old[end:]...)
	if !sameMeaning(res, after) {
		return nil, false
	}
	return res, true
}

// flowOffsets maps the offsets i and k of before (i <= k) to offsets of
// old, walking both texts together: equal bytes advance both; whitespace
// or a comment in one of them that the other lacks is skipped.
func flowOffsets(old, before []byte, i, k int) (start, end int, ok bool) {
	o, b := 0, 0
	start, end = -1, -1
	for {
		if b == i && start < 0 {
			start = o
		}
		if b == k {
			end = o
			return start, end, true
		}
		switch {
		case o < len(old) && b < len(before) && old[o] == before[b]:
			o++
			b++
		case o < len(old) && isSpace(old[o]):
			o++
		case b < len(before) && isSpace(before[b]):
			b++
		case o < len(old) && old[o] == '#' && (o == 0 || isSpace(old[o-1])):
			o += commentLen(old[o:])
		case b < len(before) && before[b] == '#' && (b == 0 || isSpace(before[b-1])):
			b += commentLen(before[b:])
		default:
			return 0, 0, false
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// commentLen is the length of the comment t starts with, up to its line's end.
func commentLen(t []byte) int {
	if n := bytes.IndexByte(t, '\n'); n >= 0 {
		return n
	}
	return len(t)
}
