package fuzz_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kubedra/kubedra/internal/fuzzstat"
	"github.com/kubedra/kubedra/inventory/files"
)

// FuzzRead (issue 14 item 13): whatever the bytes, reading never panics;
// a file split whole (Parse) and streamed in batches (Read of stdin) give
// the same documents at the same spans and lines; the batches laid end to
// end are the input; spans are in order, inside the input, and each
// holds its document's first line; every diagnostic names a line of the
// input. Seeds are the rewrite goldens and files of the shared corpus.
func FuzzRead(f *testing.F) {
	seeds, _ := filepath.Glob("../../../rewrite/testdata/*/input.*")
	corpus, _ := filepath.Glob("../../../../shared/corpus/dev/*/*.yaml")
	if len(corpus) > 40 {
		corpus = corpus[:40]
	}
	for _, s := range append(seeds, corpus...) {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("- op: add\n  path: /x\n---\n\xef\xbb\xbfa: 1\r\n...\n--- {b: 2}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzstat.Count()
		whole := files.Parse("f.yaml", data)
		type doc struct {
			kind       string
			start, end int
			line, list int
		}
		docs := func(fs []*files.File) []doc {
			var out []doc
			for _, f := range fs {
				for _, d := range f.Docs {
					out = append(out, doc{d.Node.GetKind(), d.Span.Start, d.Span.End, d.Origin.Line, d.Origin.ListIndex})
				}
			}
			return out
		}
		var batches []*files.File
		err := files.Read(context.Background(), []string{"-"}, bytes.NewReader(data), files.Options{Batch: 3, KeepData: true, Workers: 1},
			func(f *files.File) error { batches = append(batches, f); return nil })
		if err != nil {
			t.Fatal(err)
		}
		var text []byte
		for _, b := range batches {
			if b.Offset != len(text) {
				t.Fatalf("batch %d at %d, after %d bytes", b.Batch, b.Offset, len(text))
			}
			text = append(text, b.Data...)
		}
		if !bytes.Equal(text, data) {
			t.Fatalf("the batches are not the input")
		}
		a, b := docs([]*files.File{whole}), docs(batches)
		if len(a) != len(b) {
			t.Fatalf("Parse gives %d documents, a stream %d", len(a), len(b))
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		prev := 0
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("document %d: Parse %+v, stream %+v", i, a[i], b[i])
			}
			if a[i].start < prev || a[i].end > len(data) || a[i].start > a[i].end {
				t.Fatalf("span %d-%d out of order or outside %d bytes", a[i].start, a[i].end, len(data))
			}
			if first := bytes.Count(data[:a[i].start], []byte("\n")) + 1; a[i].line < first || a[i].line > lines {
				t.Fatalf("document at line %d, its span starts at line %d", a[i].line, first)
			}
			if a[i].list < 0 {
				prev = a[i].start
			}
		}
		for _, d := range whole.Diagnostics {
			if d.Line < 0 || d.Line > lines {
				t.Fatalf("diagnostic at line %d of %d: %s", d.Line, lines, d.Message)
			}
		}
	})
}
