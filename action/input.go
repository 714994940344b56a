package action

import (
	"io"
	"os"

	"github.com/kubedra/kubedra/inventory"
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

// loadRules returns set, or the built-in rules when set is nil.
func loadRules(set *rules.Set) *rules.Set {
	if set != nil {
		return set
	}
	return rules.Default()
}
