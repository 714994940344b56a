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
	scalar := blockScalarLines(lines, indentOf)
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
func blockScalarLines(lines []string, indentOf func(string) int) []bool {
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
