package rewrite

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// style is how a file indents, so re-encoded documents look like their
// neighbours.
type style struct {
	indent  int
	compact bool // sequences at the same column as their key
}

// detectStyle reads the first nested mapping and the first block sequence
// of src. kyaml's DeriveSeqIndentStyle only knows 2-space files; this also
// keeps 4-space ones.
func detectStyle(src []byte) style {
	st := style{indent: 2, compact: true}
	lines := strings.Split(string(src), "\n")
	indentOf := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	content := func(l string) string {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "#") {
			return ""
		}
		return t
	}
	// Lines of block scalars (a KubeRay runtimeEnvYAML holding `- `
	// lines, a script) are text, not structure.
	scalar := blockScalarLines(lines)
	for i := range lines {
		if scalar[i] {
			lines[i] = ""
		}
	}
	foundIndent, foundSeq := false, false
	for i, l := range lines {
		t := content(l)
		if t == "" || !strings.HasSuffix(strings.TrimSpace(strings.SplitN(t, " #", 2)[0]), ":") || strings.HasPrefix(t, "-") {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			n := content(lines[j])
			if n == "" {
				continue
			}
			d := indentOf(lines[j]) - indentOf(l)
			if strings.HasPrefix(n, "- ") || n == "-" {
				if !foundSeq {
					st.compact, foundSeq = d == 0, true
				}
			} else if d > 0 && !foundIndent {
				st.indent, foundIndent = d, true
			}
			break
		}
		if foundIndent && foundSeq {
			break
		}
	}
	if st.indent > 8 {
		st.indent = 2
	}
	return st
}

// blockScalarRE matches a line that starts a block scalar: a value of `|`
// or `>` with optional indentation and chomping indicators.
var blockScalarRE = regexp.MustCompile(`(?:^|[:\-]\s)\s*[|>][0-9+\-]{0,2}\s*(?:#.*)?$`)

// blockScalarLines marks the lines that are the content of a block scalar.
func blockScalarLines(lines []string) []bool {
	indentOf := func(l string) int { return len(leading(l)) }
	out := make([]bool, len(lines))
	for i := 0; i < len(lines); i++ {
		// The indicator is a '|' or '>': most lines hold neither, and skip
		// the expression (a tenth of migrate's time on GPU-dense input).
		if !strings.ContainsAny(lines[i], "|>") || !blockScalarRE.MatchString(strings.TrimRight(lines[i], "\r")) {
			continue
		}
		base := indentOf(lines[i])
		j := i + 1
		for ; j < len(lines); j++ {
			if strings.TrimSpace(lines[j]) != "" && indentOf(lines[j]) <= base {
				break
			}
			out[j] = true
		}
		i = j - 1
	}
	return out
}

// encodeYAML encodes a node with kyaml's encoder settings in the file's
// style.
func encodeYAML(n *yaml.Node, st style) ([]byte, error) {
	if quick {
		if b, ok := quickEncode(n, st); ok {
			return b, nil
		}
	}
	return encoderYAML(n, st)
}

// quick turns quickEncode on (TestQuickEncodeIsEncoder compares the two).
var quick = true

// encoderYAML is the encoder's encoding of n.
func encoderYAML(n *yaml.Node, st style) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(st.indent)
	if st.compact {
		enc.CompactSeqIndent()
	} else {
		enc.DefaultSeqIndent()
	}
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// jsonIndent is the indentation unit of a JSON document: the leading
// whitespace of its second line ("" for one-line JSON).
func jsonIndent(src []byte) string {
	lines := bytes.Split(src, []byte("\n"))
	for _, l := range lines[1:] {
		if t := bytes.TrimLeft(l, " \t"); len(t) > 0 {
			return string(l[:len(l)-len(t)])
		}
	}
	return ""
}

// encodeJSON writes a node as JSON, keeping key order; indent "" gives one
// line. Scalars keep their YAML type (a quoted "1" stays a string).
func encodeJSON(n *yaml.Node, indent string) []byte {
	var buf bytes.Buffer
	writeJSON(&buf, n, indent, 0)
	buf.WriteByte('\n')
	return buf.Bytes()
}

func writeJSON(buf *bytes.Buffer, n *yaml.Node, indent string, depth int) {
	nl := func(d int) {
		if indent != "" {
			buf.WriteByte('\n')
			buf.WriteString(strings.Repeat(indent, d))
		}
	}
	sep := ", "
	colon := ": "
	if indent != "" {
		sep = ","
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			writeJSON(buf, n.Content[0], indent, depth)
		}
	case yaml.AliasNode:
		writeJSON(buf, n.Alias, indent, depth)
	case yaml.MappingNode:
		if len(n.Content) == 0 {
			buf.WriteString("{}")
			return
		}
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteString(sep)
			}
			nl(depth + 1)
			writeString(buf, n.Content[i].Value)
			buf.WriteString(colon)
			writeJSON(buf, n.Content[i+1], indent, depth+1)
		}
		nl(depth)
		buf.WriteByte('}')
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			buf.WriteString("[]")
			return
		}
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteString(sep)
			}
			nl(depth + 1)
			writeJSON(buf, c, indent, depth+1)
		}
		nl(depth)
		buf.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case yaml.NodeTagInt, yaml.NodeTagFloat, yaml.NodeTagBool:
			if json.Valid([]byte(n.Value)) {
				buf.WriteString(n.Value)
				return
			}
		case yaml.NodeTagNull:
			buf.WriteString("null")
			return
		}
		writeString(buf, n.Value)
	}
}

func writeString(buf *bytes.Buffer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	buf.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// quickEncode is encodeYAML for the trees kubedra builds (claim templates,
// claims, the entries spliceEntries encodes) in a 2-space style, written
// directly instead of through the encoder's event machine (encoding was
// the largest part of migrate's time on GPU-dense input): block mappings
// and sequences, and scalars whose presentation needs no decision beyond
// the ones below. It gives the encoder's bytes
// (TestQuickEncodeIsEncoder compares the two on every document of the
// goldens and the corpus) or ok false: comments, anchors, flow style,
// empty collections, tags of its own, a sequence in a sequence, any
// other scalar.
func quickEncode(n *yaml.Node, st style) ([]byte, bool) {
	if st.indent != 2 {
		return nil, false
	}
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) != 1 || !uncommented(n) {
			return nil, false
		}
		n = n.Content[0]
	}
	var buf []byte
	var ok bool
	switch n.Kind {
	case yaml.MappingNode:
		buf, ok = quickMapping(buf, n, 0, st)
	case yaml.SequenceNode:
		buf, ok = quickSequence(buf, n, 0, st)
	}
	return buf, ok
}

// plainNode reports whether a collection or scalar node carries nothing
// the quick encoder leaves to the encoder.
func plainNode(n *yaml.Node) bool {
	return n.Style == 0 && n.Anchor == "" && uncommented(n)
}

// uncommented reports whether a node carries no comment of its own.
func uncommented(n *yaml.Node) bool {
	return n.HeadComment == "" && n.LineComment == "" && n.FootComment == ""
}

// quickMapping writes block mapping n with its keys at column col.
func quickMapping(buf []byte, n *yaml.Node, col int, st style) ([]byte, bool) {
	if !plainNode(n) || (n.Tag != "" && n.Tag != yaml.NodeTagMap) || len(n.Content) == 0 {
		return nil, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if i > 0 {
			buf = appendSpaces(buf, col)
		}
		var ok bool
		if buf, ok = quickEntry(buf, n.Content[i], n.Content[i+1], col, st); !ok {
			return nil, false
		}
	}
	return buf, true
}

// quickEntry writes one entry whose key starts where buf ends, at column
// col.
func quickEntry(buf []byte, k, v *yaml.Node, col int, st style) ([]byte, bool) {
	key, ok := quickScalar(k)
	if !ok {
		return nil, false
	}
	buf = append(append(buf, key...), ':')
	switch v.Kind {
	case yaml.ScalarNode:
		s, ok := quickScalar(v)
		if !ok {
			return nil, false
		}
		return append(append(append(buf, ' '), s...), '\n'), true
	case yaml.MappingNode:
		buf = append(buf, '\n')
		buf = appendSpaces(buf, col+2)
		return quickMapping(buf, v, col+2, st)
	case yaml.SequenceNode:
		buf = append(buf, '\n')
		if st.compact {
			return quickSequence(buf, v, col, st)
		}
		return quickSequence(buf, v, col+2, st)
	}
	return nil, false
}

// quickSequence writes block sequence n with its dashes at column col.
func quickSequence(buf []byte, n *yaml.Node, col int, st style) ([]byte, bool) {
	if !plainNode(n) || (n.Tag != "" && n.Tag != yaml.NodeTagSeq) || len(n.Content) == 0 {
		return nil, false
	}
	for i, it := range n.Content {
		if i > 0 || len(buf) > 0 && buf[len(buf)-1] == '\n' {
			buf = appendSpaces(buf, col)
		}
		buf = append(buf, "- "...)
		switch it.Kind {
		case yaml.ScalarNode:
			s, ok := quickScalar(it)
			if !ok {
				return nil, false
			}
			buf = append(append(buf, s...), '\n')
		case yaml.MappingNode:
			var ok bool
			if buf, ok = quickMapping(buf, it, col+2, st); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return buf, true
}

// quickScalar is a scalar's presentation: a !!str of letters, digits and
// ". _ / -" that starts with a letter and is no boolean or null (plain, or
// double-quoted when its style says so), the same word without a tag
// (plain or quoted as its style says), or a decimal !!int.
func quickScalar(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Anchor != "" || !uncommented(n) {
		return "", false
	}
	v := n.Value
	switch n.Tag {
	case "", yaml.NodeTagString:
		if !simpleWord(v) {
			return "", false
		}
		switch n.Style {
		case 0:
			// Untagged (a key kyaml's LookupCreate made), the encoder
			// writes the word as it is; a !!str it quotes where the word
			// reads as a boolean or null.
			if n.Tag != "" {
				switch strings.ToLower(v) {
				case "true", "false", "null":
					return "", false
				}
			}
			return v, true
		case yaml.DoubleQuotedStyle:
			return `"` + v + `"`, true
		}
	case yaml.NodeTagInt:
		if n.Style != 0 || v == "" || len(v) > 1 && v[0] == '0' {
			return "", false
		}
		for i := 0; i < len(v); i++ {
			if v[i] < '0' || v[i] > '9' {
				return "", false
			}
		}
		return v, true
	}
	return "", false
}

// simpleWord: a letter, then letters, digits and ". _ / -".
func simpleWord(v string) bool {
	if v == "" || !('a' <= v[0] && v[0] <= 'z' || 'A' <= v[0] && v[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-') {
			return false
		}
	}
	return true
}

func appendSpaces(buf []byte, n int) []byte {
	for range n {
		buf = append(buf, ' ')
	}
	return buf
}
