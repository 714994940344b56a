// Package files is kubedra's manifest source: it turns paths, directories
// and "-" (stdin) into inventory.Documents, one file at a time, with bounded
// parallelism and memory that does not grow with the number of files.
//
// # Reading
//
// Read walks its paths in the order given (directories recursively, in
// lexical order, keeping .yaml, .yml and .json files; a file named
// explicitly is read whatever its extension; directories whose name starts
// with a dot, such as .git, are not entered) and calls fn once per file,
// or once per batch of documents when Options.Batch is set:
//
//	err := files.Read(ctx, []string{"./manifests", "-"}, os.Stdin, files.Options{}, func(f *files.File) error {
//		for _, doc := range f.Docs {
//			_ = f.Text(doc.Span) // bytes of the document in the file
//		}
//		return nil
//	})
//
// Without Options.Ordered, fn runs concurrently on up to Options.Workers
// goroutines and files arrive in any order (File.Order gives the input
// order). With Ordered, fn is called from one goroutine at a time in input
// order, while later files are already being parsed; Options.Prepare runs
// before fn on the reading goroutine, for per-file work that needs no
// order. Relative paths are read from Options.Dir and reported as given.
//
// # Documents and spans
//
// A file is split into documents at `---` marker and `...` document-end
// lines (a marker at column 0 can never be part of a scalar, so the split
// is exact) and each document is decoded on its own with kyaml's node
// decoder. This is kubedra's only splitter: package rewrite splices its
// output from these spans. So:
//   - a broken document is reported in File.Diagnostics with its line, and
//     the other documents of the file are still read;
//   - node positions (Line, Column) are those of the whole file;
//   - Document.Span is the byte range of the document in the file: from the
//     line after its `---` marker (or the marker line itself when it
//     carries content, e.g. `--- {...}`) to the next marker or the end of
//     the file, and Document.Root the decoded YAML document (with its head
//     and foot comments). Bytes outside spans are markers and are never
//     part of a document, so a writer can splice re-encoded documents and
//     keep the rest byte-identical;
//   - items of a `kind: List` become separate Documents (Origin.ListIndex
//     set); they share the List's Root and span, and a writer must
//     re-encode the List as a whole;
//   - documents that are empty (only comments) yield no Document.
//
// Documents carry no kyaml reader annotations (config.kubernetes.io/index
// and friends): Origin holds the path, index and line, so there is nothing
// to strip before writing.
//
// # Skips and errors
//
// Nothing is dropped silently. An unrendered Go (Helm) template, a
// document that does not parse, and a symlink that leaves the root it was
// found under (or is dangling) are listed in File.Diagnostics with a reason and,
// where one exists, a line. A document is a template when it holds `{{`
// and either does not parse with an action where YAML structure is expected,
// or parses but an action became a mapping keyed by a mapping (`{{ x }}`
// outside quotes); template text inside strings (Argo's "{{inputs.x}}", a
// config file in a block scalar) is data. Parse failures and unreadable
// files are errors (File.ParseErrors counts the former, File.Err is set for
// the latter): failures for a caller (exit code 1), whereas template and
// symlink skips are warnings, failures only under --strict. When a file
// has diagnostics, Docs holds its other documents: a writer must leave such
// a file alone.
//
// # Large files and the prefilter
//
// Files up to Options.StreamAbove bytes are read whole. Larger files and
// stdin are streamed line by line, and with Options.Batch only one batch of
// documents is alive at a time, so a 50 MB multi-document file is read in
// tens of megabytes. File.Data holds the text of the File (of the batch:
// the batches' Data laid end to end is the file), for streamed input only
// with Options.KeepData; spans are offsets in the whole file either way.
//
// Options.Filter sees the raw bytes of each document before it is parsed;
// documents it rejects are counted in File.Documents but not decoded (and
// so not checked for syntax errors; documents holding `{{` or that could be
// a `kind: List` are always decoded). Detection supplies a filter that can
// never reject a document with a device request (detect.MayRequest).
//
// This package does not write files and does not consult rules.
package files
