package plan

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/kubedra/kubedra/inventory"
)

// IgnoreRule matches findings to ignore (an `ignore:` entry of
// .kubedra.yaml). Every field that is set must match; Reason is required
// and shown in reports.
type IgnoreRule struct {
	// Path is a slash-separated glob relative to Ignores.Dir; "**" matches
	// any number of folders (charts/**/templates/*.yaml).
	Path string `json:"path,omitempty"`
	// Kind is the object kind, e.g. CronJob (case-insensitive).
	Kind string `json:"kind,omitempty"`
	// Namespace and Name are globs (path.Match syntax).
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name,omitempty"`
	// Resource is a glob on the extended resource, e.g. xilinx.com/*.
	Resource string `json:"resource,omitempty"`
	Reason   string `json:"reason"`
}

// Check reports what makes a rule unusable: no reason, nothing to match,
// or a bad pattern.
func (r IgnoreRule) Check() error {
	if strings.TrimSpace(r.Reason) == "" {
		return fmt.Errorf("reason is required: say why these findings are ignored")
	}
	if r.Path == "" && r.Kind == "" && r.Namespace == "" && r.Name == "" && r.Resource == "" {
		return fmt.Errorf("set at least one of path, kind, namespace, name or resource")
	}
	for _, g := range []string{r.Path, r.Namespace, r.Name, r.Resource} {
		if _, err := path.Match(strings.ReplaceAll(g, "**", "*"), ""); err != nil {
			return fmt.Errorf("pattern %q: %w", g, err)
		}
	}
	return nil
}

// Ignores opts findings out of the gate and the migration, as an option of
// planning (Items and Planner apply them while deciding). A finding
// already ignored by a kubedra.io/ignore annotation keeps that reason.
type Ignores struct {
	Rules []IgnoreRule
	// Dir is the folder rule paths are relative to (the config file's).
	Dir string
	// WorkDir resolves relative finding paths.
	WorkDir string
	// Source names where the rules come from in reasons, e.g. ".kubedra.yaml".
	Source string
}

// Reason returns why f is ignored: its annotation's reason, else the
// reason of the first rule that matches (with Source), else "".
func (ig *Ignores) Reason(f inventory.Finding) string {
	if f.Ignore != "" || ig == nil {
		return f.Ignore
	}
	for _, r := range ig.Rules {
		if ig.matches(r, f) {
			if ig.Source != "" {
				return r.Reason + " (" + ig.Source + ")"
			}
			return r.Reason
		}
	}
	return ""
}

func (ig *Ignores) matches(r IgnoreRule, f inventory.Finding) bool {
	if r.Kind != "" && !strings.EqualFold(r.Kind, f.Kind) {
		return false
	}
	if r.Namespace != "" && !globMatch(r.Namespace, f.Namespace) {
		return false
	}
	if r.Name != "" && !globMatch(r.Name, f.Name) {
		return false
	}
	if r.Resource != "" && !globMatch(r.Resource, f.Resource) {
		return false
	}
	if r.Path != "" {
		file := f.Origin.Path
		if file == "" || file == "-" {
			return false
		}
		if !filepath.IsAbs(file) {
			file = filepath.Join(ig.WorkDir, file)
		}
		if ig.Dir != "" {
			rel, err := filepath.Rel(ig.Dir, file)
			if err != nil || strings.HasPrefix(rel, "..") {
				return false
			}
			file = rel
		}
		if !pathMatch(strings.TrimPrefix(r.Path, "./"), filepath.ToSlash(file)) {
			return false
		}
	}
	return true
}

func globMatch(pattern, s string) bool {
	ok, _ := path.Match(pattern, s)
	return ok
}

// pathMatch matches slash-separated paths segment by segment; a "**"
// segment matches zero or more segments.
func pathMatch(pattern, name string) bool {
	return matchSegments(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 || !globMatch(pat[0], name[0]) {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}
