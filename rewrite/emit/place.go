package emit

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/kubedra/kubedra/inventory"
)

// keptBits are the mode bits a rewritten file keeps: permissions and the
// setuid, setgid and sticky bits.
const keptBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// resolve is where a write to path lands: the file a symlink leads to (a
// link is written through, never replaced), or path itself when it does
// not exist yet.
func resolve(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	return path
}

// temps are the temporary files this process holds, so that a signal
// handler can remove them (RemoveTemporary).
var temps = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

func untrack(name string) {
	temps.Lock()
	delete(temps.names, name)
	temps.Unlock()
}

// createTemp makes a temporary file ".<base>.kubedra-NNNN" in dir and
// tracks it until it is renamed or removed.
func createTemp(dir, base string) (*os.File, error) {
	temps.Lock()
	defer temps.Unlock()
	f, err := os.CreateTemp(dir, "."+base+".kubedra-*")
	if err != nil {
		return nil, err
	}
	temps.names[f.Name()] = true
	return f, nil
}

// removeTemp closes and removes a temporary file.
func removeTemp(f *os.File) {
	f.Close()
	os.Remove(f.Name())
	untrack(f.Name())
}

// RemoveTemporary removes the temporary files this process still holds
// (files being written when a signal arrives) and returns their names. Any
// write in progress then fails, leaving its target as it was.
func RemoveTemporary() []string {
	temps.Lock()
	defer temps.Unlock()
	var out []string
	for name := range temps.names {
		if err := os.Remove(name); err == nil || os.IsNotExist(err) {
			out = append(out, name)
		}
		delete(temps.names, name)
	}
	sort.Strings(out)
	return out
}

// RuleStale is the rule id of a temporary file an interrupted run left.
const RuleStale = "migrate/stale-temporary"

// Stale removes, when writing in place, the temporary files that
// interrupted runs left in the tree (paths as inventory/files found them),
// and says so; other modes (and a nil Emitter: migrate --plan) only say so.
func (e *Emitter) Stale(paths []string) inventory.Diagnostics {
	var out inventory.Diagnostics
	if e == nil || e.Mode != Write {
		for _, p := range paths {
			out = append(out, inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleStale, File: p,
				Message: "a temporary file left by an interrupted kubedra run", Fix: "remove it (migrate -w removes it)"})
		}
		return out
	}
	removed, err := RemoveStale(paths)
	for _, p := range removed {
		out = append(out, inventory.Diagnostic{Severity: inventory.Info, Rule: RuleStale, File: p,
			Message: "removed a temporary file left by an interrupted kubedra run"})
	}
	if err != nil {
		out = append(out, inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleStale, Message: err.Error()})
	}
	return out
}

// RemoveStale removes temporary files an interrupted kubedra run left
// behind (paths as inventory/files found them, see files.Temporary), except
// those this process is writing, and returns those removed.
func RemoveStale(paths []string) ([]string, error) {
	var out []string
	var errs []error
	for _, p := range paths {
		temps.Lock()
		live := temps.names[p]
		temps.Unlock()
		if live {
			continue
		}
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if err := os.Remove(p); err != nil {
			errs = append(errs, fmt.Errorf("removing stale temporary file %s: %w", p, err))
			continue
		}
		out = append(out, p)
	}
	if len(errs) > 0 {
		return out, errs[0]
	}
	return out, nil
}
