package inventory

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// LineStarts maps the YAML decoder's lines of a text to the text's own.
// The decoder ends a line at CR, LF, CRLF, NEL, LS and PS; kubedra numbers
// lines as editors, grep and diff do, by LF alone, and so do the line-based
// edits that use a node's line and column. It holds, for each of the
// decoder's lines, where it starts: the LF line and the bytes before it on
// that line. It is nil for a text whose only breaks are LF and CRLF, where
// the two agree (nearly every file: finding that out is three scans).
type LineStarts []struct{ line, col int }

// YAMLLines is the LineStarts of data.
func YAMLLines(data []byte) LineStarts {
	if !hasOtherBreak(data) {
		return nil
	}
	out := LineStarts{{1, 0}}
	line, lineStart := 1, 0
	for i := 0; i < len(data); {
		w := 0
		switch {
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			w = 2
		case data[i] == '\n' || data[i] == '\r':
			w = 1
		case data[i] == 0xC2 && i+1 < len(data) && data[i+1] == 0x85:
			w = 2
		case data[i] == 0xE2 && i+2 < len(data) && data[i+1] == 0x80 && (data[i+2] == 0xA8 || data[i+2] == 0xA9):
			w = 3
		default:
			i++
			continue
		}
		i += w
		if data[i-1] == '\n' {
			line, lineStart = line+1, i
		}
		out = append(out, struct{ line, col int }{line, i - lineStart})
	}
	return out
}

// hasOtherBreak says whether data holds a line break the decoder counts
// and LF lines do not: a CR not before LF, NEL, LS or PS.
func hasOtherBreak(data []byte) bool {
	for rest := data; ; {
		i := bytes.IndexByte(rest, '\r')
		if i < 0 {
			break
		}
		if i+1 == len(rest) || rest[i+1] != '\n' {
			return true
		}
		rest = rest[i+2:]
	}
	return bytes.Contains(data, []byte("\u0085")) || bytes.Contains(data, []byte("\u2028")) || bytes.Contains(data, []byte("\u2029"))
}

// Line is the LF line of the decoder's 1-based line n.
func (m LineStarts) Line(n int) int {
	if m == nil || n < 1 || n > len(m) {
		return n
	}
	return m[n-1].line
}

// Place gives every node of n its LF line and column (when the decoder's
// lines differ), then moves its line by delta: documents are decoded on
// their own, but positions must be those of the file.
func (m LineStarts) Place(n *yaml.Node, delta int) {
	if m == nil && delta == 0 {
		return
	}
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if m != nil && n.Line >= 1 && n.Line <= len(m) {
			s := m[n.Line-1]
			n.Line, n.Column = s.line, s.col+n.Column
		}
		n.Line += delta
		stack = append(stack, n.Content...)
	}
}

// Unmarshal decodes the first YAML document of data into n, as
// yaml.Unmarshal does, with the nodes' lines and columns and the error's
// line numbers those of the text counted by LF (LineStarts): what a
// line-based edit or a diagnostic needs.
func Unmarshal(data []byte, n *yaml.Node) error {
	breaks := YAMLLines(data)
	if err := yaml.Unmarshal(data, n); err != nil {
		if breaks == nil {
			return err
		}
		_, msg := ErrorLine(err, 1, breaks)
		return errors.New("yaml: " + msg)
	}
	breaks.Place(n, 0)
	return nil
}

var errLineRE = regexp.MustCompile(`line (\d+)`)

// ErrorLine turns a decoder error into a file line and a message whose line
// numbers are those of the file.
func ErrorLine(err error, first int, breaks LineStarts) (int, string) {
	msg := err.Error()
	line := first
	found := false
	msg = errLineRE.ReplaceAllStringFunc(msg, func(m string) string {
		n, _ := strconv.Atoi(m[len("line "):])
		abs := breaks.Line(n) + first - 1
		if !found {
			line, found = abs, true
		}
		return fmt.Sprintf("line %d", abs)
	})
	if len(msg) > 6 && msg[:6] == "yaml: " {
		msg = msg[6:]
	}
	return line, msg
}
