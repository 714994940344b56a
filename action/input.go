package action

import (
	"context"
	"io"
	"os"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rules"
)

// Input is what the manifest actions read: files and folders, "-" for
// stdin, or documents already in memory.
type Input struct {
	// Paths are files and folders (walked recursively), "-" for Stdin.
	Paths []string
	Stdin io.Reader
	// StdinName is how results name "-" ("" keeps "-"): the embedded
	// example is reported as example.yaml.
	StdinName string
	// Dir is the folder relative paths are read from and written to (""
	// is the process's working folder). Results name paths as given.
	Dir string
	// Documents, when set, are read instead of Paths: objects that are
	// already in memory, such as a KRM ResourceList's items.
	Documents []*inventory.Document
	// Charts are the values the Helm charts among Paths render with (a
	// folder holding Chart.yaml is rendered, not read file by file).
	Charts ChartValues
}

// open is where a path as given is on disk.
func (in Input) open(p string) string { return inventory.Resolve(in.Dir, p) }

// name is how results show a path.
func (in Input) name(p string) string {
	if p == "-" && in.StdinName != "" {
		return in.StdinName
	}
	return p
}

// isDir reports whether the path as given is a folder.
func (in Input) isDir(p string) bool {
	fi, err := os.Stat(in.open(p))
	return err == nil && fi.IsDir()
}

// documents reads every document of in (the charts among its folders
// rendered with copts) at once, in input order; what cannot be read is an
// error appended to diags (warnings are left out).
func (in Input) documents(ctx context.Context, copts chartOptions, diags *inventory.Diagnostics) ([]*inventory.Document, error) {
	if in.Documents != nil {
		return in.Documents, nil
	}
	var docs []*inventory.Document
	runs := in.charts(ctx, copts)
	for _, cr := range runs {
		for _, d := range cr.Diagnostics {
			if d.Severity == inventory.Error {
				*diags = append(*diags, d)
			}
		}
		if cr.Rendered != nil {
			docs = append(docs, cr.Rendered.Docs...)
		}
	}
	err := files.Read(ctx, in.Paths, in.Stdin, files.Options{Dir: in.Dir, Ordered: true, Skip: owned(runs)}, func(f *files.File) error {
		for _, d := range f.Diagnostics {
			if d.Severity == inventory.Error {
				d.File = in.name(d.File)
				*diags = append(*diags, d)
			}
		}
		for _, d := range f.Docs {
			d.Origin.Path = in.name(d.Origin.Path)
		}
		docs = append(docs, f.Docs...)
		return nil
	})
	return docs, err
}

// loadRules returns set, or the built-in rules when set is nil.
func loadRules(set *rules.Set) *rules.Set {
	if set != nil {
		return set
	}
	return rules.Default()
}
