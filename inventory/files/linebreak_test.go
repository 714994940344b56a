package files_test

import (
	"testing"

	"github.com/kubedra/kubedra/inventory/files"
)

// The YAML decoder ends a line at CR, LF, CRLF, NEL, LS and PS; kubedra
// numbers lines as editors, grep and diff do, by LF. A document with a lone
// CR or a Unicode line break (found by FuzzRead: a diagnostic at line 9 of
// a 4-line file) must give lines, columns and diagnostics of the file.
func TestLinesCountedByLF(t *testing.T) {
	for _, tc := range []struct {
		name, data     string
		line, col      int // of the key `b`
		diagLine, docs int
	}{
		{"lone CR", "a: 1\rb: 2\n", 1, 6, 0, 1},
		{"NEL", "x: \"a\u0085b\"\nb: 2\n", 2, 1, 0, 1},
		{"LS", "x: \"\u2028\"\nb: 2\n", 2, 1, 0, 1},
		{"PS in a comment", "a: 1 # \u2029\nb: 2\n", 2, 1, 0, 1},
		{"a later document", "a: 1\r---\n---\nx: \"\u2028\"\nb: 3\n", 4, 1, 0, 2},
		{"CRLF", "a: 1\r\nb: 2\r\n", 2, 1, 0, 1},
		{"the fuzzer's input", "icResourceAllocation=false\n---\napiVersion:\r\r\r\r\r v1\nk", 0, 0, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := files.Parse("f.yaml", []byte(tc.data))
			for _, d := range f.Diagnostics {
				if d.Line != tc.diagLine {
					t.Errorf("diagnostic at line %d, want %d: %s", d.Line, tc.diagLine, d.Message)
				}
			}
			if tc.diagLine != 0 && len(f.Diagnostics) == 0 {
				t.Fatalf("no diagnostic")
			}
			if tc.line == 0 {
				return
			}
			if len(f.Docs) != tc.docs {
				t.Fatalf("%d documents, want %d", len(f.Docs), tc.docs)
			}
			root := f.Docs[len(f.Docs)-1].Node.YNode()
			for i := 0; i < len(root.Content); i += 2 {
				if k := root.Content[i]; k.Value == "b" && (k.Line != tc.line || k.Column != tc.col) {
					t.Errorf("b at %d:%d, want %d:%d", k.Line, k.Column, tc.line, tc.col)
				}
			}
		})
	}
}
