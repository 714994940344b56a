package rewrite

import "bytes"

// segment is one YAML document of a file: the separator line that opens it
// (if any) and its body, as byte offsets into the file.
type segment struct {
	// sep is the "---" line (with its newline), or empty for the first
	// document of a file without a leading separator.
	sepStart, bodyStart, end int
	// line is the 1-based file line of the body's first byte; lastLine the
	// last line of the body.
	line, lastLine int
	// inline is set when the separator line carries content ("--- {a: 1}"):
	// the body then starts at the separator itself.
	inline bool
}

// isSeparator reports whether a line (without its newline) opens a new
// document: "---" alone or followed by a space, tab or comment.
func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := bytes.TrimRight(line[3:], "\r")
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t'
}

// split cuts src into documents at separator lines. Block scalars cannot
// hold a column-0 "---" (their content is indented), so a line scan is
// exact for the manifests kubedra rewrites.
func split(src []byte) []segment {
	var segs []segment
	cur := segment{sepStart: 0, bodyStart: 0, line: 1}
	line := 1
	for off := 0; off < len(src); {
		nl := bytes.IndexByte(src[off:], '\n')
		next := len(src)
		if nl >= 0 {
			next = off + nl + 1
		}
		text := src[off:next]
		text = bytes.TrimSuffix(text, []byte("\n"))
		if isSeparator(text) {
			if off > 0 {
				cur.end, cur.lastLine = off, line-1
				segs = append(segs, cur)
			}
			cur = segment{sepStart: off, bodyStart: next, line: line + 1}
			if rest := bytes.TrimSpace(text[3:]); len(rest) > 0 && rest[0] != '#' {
				cur.bodyStart, cur.line, cur.inline = off, line, true
			}
		}
		off = next
		line++
	}
	cur.end, cur.lastLine = len(src), line-1
	segs = append(segs, cur)
	return segs
}
