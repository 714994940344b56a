// Package kustomize finds the kustomize build units among the inputs and
// says what each file is to them: a resource, a strategic-merge patch, a
// JSON 6902 patch (a file or inline), a component, or a base that several
// overlays share. It is a package of its own because it is the one reader
// of kustomization files (with sigs.k8s.io/kustomize/api's types, the
// schema kustomize itself decodes), and migrate needs the answers before
// it plans the first file: inventory/files reads documents, not the build
// graph between them. It reads; it never builds or writes.
package kustomize

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
)

// Role is what a file is to a kustomization that lists it.
type Role string

const (
	Resource       Role = "resource"
	StrategicMerge Role = "strategic-merge-patch"
	JSON6902       Role = "json6902-patch"
	Component      Role = "component"
	Base           Role = "base" // a folder with a kustomization, listed under resources
)

// Rule ids of the diagnostics Find makes.
const (
	RuleParse = "kustomize/parse"
	RulePatch = "kustomize/patch-not-migrated"
	RuleHeld  = "kustomize/unit-left-unchanged"
)

// Kustomization is one kustomization (or Component) file.
type Kustomization struct {
	// Path is the file as found (joined to the folder the user named).
	Path string
	// Component is set for kind: Component.
	Component bool
	// OffName is set for a Kustomization in a file kustomize does not read
	// from its folder (kustomization-gpt-oss-120b.yaml beside the folder's
	// kustomization.yaml): no unit to build or prove, but the files it
	// lists as patches are patches still (Held).
	OffName bool
	// Namespace, NamePrefix and NameSuffix are its transformers.
	Namespace, NamePrefix, NameSuffix string
	// Uses are the files and folders it lists, with their role.
	Uses []Use
	// Configurations are the transformer configuration files it lists.
	Configurations []string
	// ClaimLists are its JSON 6902 operations that add a whole claims list,
	// Findings the device requests its JSON 6902 operations set (one per
	// operation that adds or replaces one, at its line).
	ClaimLists []ClaimList
	Findings   []inventory.Finding
	// MapAdds are its JSON 6902 operations that add into a container's
	// limits or requests.
	MapAdds []MapAdd
}

// Dir is the folder of the kustomization.
func (k *Kustomization) Dir() string { return filepath.Dir(k.Path) }

// Use is one entry of a kustomization: a file or folder and its role.
type Use struct {
	// Path is the file (or, for Base and Component, the kustomization
	// file of the folder); "" for an inline patch.
	Path string
	Role Role
	// Line is the entry's line in the kustomization file.
	Line int
}

// Tree is every kustomization found, and what each file is to them.
type Tree struct {
	// Kustomizations by Path, in the order found.
	Kustomizations map[string]*Kustomization
	order          []string
	// by holds, per file (clean path), the kustomizations that list it.
	by map[string][]*listing
	// bad are kustomizations holding a patch kubedra cannot migrate, why
	// the diagnostics that say so.
	bad map[string]bool
	why map[string]inventory.Diagnostics
	// failed are units whose proof failed (Fail); held is Held, made at
	// the first HeldBy (after CheckPatches and Fail); dirs the folders of
	// the kustomizations (Covers).
	failed  map[string]bool
	held    map[string]string
	dirs    map[string]bool
	mapAdds map[string][]MapAdd // MapAddsFor, made once
}

type listing struct {
	k    *Kustomization
	role Role
}

// Names are the file names kustomize reads as a kustomization, in its order.
var Names = konfig.RecognizedKustomizationFileNames()

// KustomizationIn returns the kustomization file in dir, or "".
func KustomizationIn(dir string, stat func(string) (fs.FileInfo, error)) string {
	for _, n := range Names {
		p := filepath.Join(dir, n)
		if fi, err := stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// offName reports whether a file name reads as a kustomization that
// kustomize would not pick from its folder: kustomization-<x>.yaml,
// kustomization.<x>.yml and the like.
func offName(name string) bool {
	lower := strings.ToLower(name)
	ext := filepath.Ext(lower)
	return strings.HasPrefix(lower, "kustomization") && (ext == ".yaml" || ext == ".yml") && !slices.Contains(Names, name)
}

// Find reads the kustomizations under the input paths (folders are walked;
// hidden folders skipped), and those they reach. open maps a path as given
// to one the process can open (the working folder of the run). Problems
// are Diagnostics: a kustomization that does not parse is skipped.
func Find(paths []string, open func(string) string) (*Tree, inventory.Diagnostics) {
	t := &Tree{Kustomizations: map[string]*Kustomization{}, by: map[string][]*listing{}, bad: map[string]bool{}, why: map[string]inventory.Diagnostics{}}
	var diags inventory.Diagnostics
	stat := func(p string) (fs.FileInfo, error) { return os.Stat(open(p)) }
	var queue []string
	for _, root := range paths {
		if root == "-" {
			continue
		}
		fi, err := stat(root)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			// A file given alone: the kustomization beside it says what
			// it is (a patch's claims must not land in the patch).
			if slices.Contains(Names, filepath.Base(root)) {
				queue = append(queue, root)
			} else if k := KustomizationIn(filepath.Dir(root), stat); k != "" {
				queue = append(queue, k)
			}
			continue
		}
		_ = filepath.WalkDir(open(root), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && p != open(root) && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && (slices.Contains(Names, d.Name()) || offName(d.Name())) {
				rel, err := filepath.Rel(open(root), p)
				if err == nil {
					queue = append(queue, filepath.Join(root, rel))
				}
			}
			return nil
		})
	}
	for len(queue) > 0 {
		p := filepath.Clean(queue[0])
		queue = queue[1:]
		if _, ok := t.Kustomizations[p]; ok {
			continue
		}
		k, more, ds := read(p, open, stat)
		diags = append(diags, ds...)
		if k == nil {
			continue
		}
		t.Kustomizations[p] = k
		t.order = append(t.order, p)
		for _, u := range k.Uses {
			if u.Path != "" {
				t.by[u.Path] = append(t.by[u.Path], &listing{k: k, role: u.Role})
			}
		}
		queue = append(queue, more...)
		for _, d := range ds {
			if d.Rule == RulePatch {
				t.bad[p] = true
				t.why[p] = append(t.why[p], d)
			}
		}
	}
	sort.SliceStable(diags, func(i, j int) bool { return diags[i].File < diags[j].File })
	return t, diags
}

// read parses one kustomization file and classifies what it lists; more
// are the kustomizations of the folders it lists.
func read(path string, open func(string) string, stat func(string) (fs.FileInfo, error)) (*Kustomization, []string, inventory.Diagnostics) {
	data, err := os.ReadFile(open(path))
	if err != nil {
		return nil, nil, inventory.Diagnostics{{Severity: inventory.Warning, Rule: RuleParse, File: path, Message: err.Error()}}
	}
	var kt types.Kustomization
	off := offName(filepath.Base(path))
	if err := sigsyaml.Unmarshal(data, &kt); err != nil {
		if off {
			return nil, nil, nil // not a kustomization after all
		}
		return nil, nil, inventory.Diagnostics{{Severity: inventory.Warning, Rule: RuleParse, File: path, Message: "not a kustomization kubedra can read: " + err.Error()}}
	}
	if off && kt.Kind != types.KustomizationKind && kt.Kind != types.ComponentKind {
		return nil, nil, nil
	}
	kt.FixKustomization()
	node, _ := kyaml.Parse(string(data))
	r := &reader{
		k:    &Kustomization{Path: path, OffName: off, Component: kt.Kind == types.ComponentKind, Namespace: kt.Namespace, NamePrefix: kt.NamePrefix, NameSuffix: kt.NameSuffix},
		dir:  filepath.Dir(path),
		open: open, stat: stat, node: node, lines: entryLines(node),
	}
	for i, res := range kt.Resources {
		r.resource(res, r.lines.at("resources", i))
	}
	for i, c := range kt.Components {
		r.folder(c, Component, r.lines.at("components", i))
	}
	for _, c := range kt.Configurations {
		if p, ok := r.local(c); ok {
			r.k.Configurations = append(r.k.Configurations, p)
		}
	}
	patches, lineOf := allPatches(&kt, r.lines)
	for i, p := range patches {
		r.patch(p, i, lineOf[i])
	}
	return r.k, r.more, r.diags
}

// reader is one kustomization file being read: what it lists so far, and
// how to reach the files it names.
type reader struct {
	k    *Kustomization
	dir  string
	open func(string) string
	stat func(string) (fs.FileInfo, error)
	// node is the file's YAML (nil when kyaml cannot parse it) and lines
	// the lines of its list entries.
	node  *kyaml.RNode
	lines lineIndex
	more  []string
	diags inventory.Diagnostics
}

// local resolves a reference against the kustomization's folder; false
// for a remote one (not migrated here).
func (r *reader) local(ref string) (string, bool) {
	if strings.Contains(ref, "://") || strings.HasPrefix(ref, "github.com/") || strings.Contains(ref, "?ref=") {
		return "", false // remote: not migrated here
	}
	return filepath.Join(r.dir, ref), true
}

// folder lists ref with role when it is a folder holding a kustomization
// (which is read next); it is false only for a local file (true for a
// remote ref, a missing one and any folder).
func (r *reader) folder(ref string, role Role, line int) bool {
	p, ok := r.local(ref)
	if !ok {
		return true
	}
	fi, err := r.stat(p)
	if err != nil {
		return true
	}
	if !fi.IsDir() {
		return false
	}
	if kp := KustomizationIn(p, r.stat); kp != "" {
		r.k.Uses = append(r.k.Uses, Use{Path: kp, Role: role, Line: line})
		r.more = append(r.more, kp)
	}
	return true
}

// resource lists an entry of resources: a base folder, or a file.
func (r *reader) resource(ref string, line int) {
	if r.folder(ref, Base, line) {
		return
	}
	p, _ := r.local(ref)
	r.k.Uses = append(r.k.Uses, Use{Path: p, Role: Resource, Line: line})
}

// allPatches are the kustomization's patches, then those of the deprecated
// fields kustomize still builds: patchesStrategicMerge (a path or an
// inline patch per entry) and patchesJson6902; lineOf holds their lines.
func allPatches(kt *types.Kustomization, lines lineIndex) (patches []types.Patch, lineOf []int) {
	patches = slices.Clone(kt.Patches)
	lineOf = make([]int, 0, len(patches)+len(kt.PatchesStrategicMerge)+len(kt.PatchesJson6902))
	for i := range kt.Patches {
		lineOf = append(lineOf, lines.at("patches", i))
	}
	for i, sm := range kt.PatchesStrategicMerge {
		v := string(sm)
		if strings.Contains(v, "\n") || strings.HasPrefix(strings.TrimSpace(v), "{") {
			patches = append(patches, types.Patch{Patch: v})
		} else {
			patches = append(patches, types.Patch{Path: v})
		}
		lineOf = append(lineOf, lines.at("patchesStrategicMerge", i))
	}
	for i, jp := range kt.PatchesJson6902 {
		patches = append(patches, jp)
		lineOf = append(lineOf, lines.at("patchesJson6902", i))
	}
	return patches, lineOf
}

// patch lists the i-th patch, a file or inline, at line.
func (r *reader) patch(p types.Patch, i, line int) {
	if p.Path != "" {
		r.patchFile(p.Path, line, p.Target)
		return
	}
	if p.Patch != "" {
		r.inlinePatch(p.Patch, i, line, p.Target)
	}
}

// patchFile lists a patch file with its role, and reports the operations
// of a JSON 6902 patch that kubedra cannot migrate.
func (r *reader) patchFile(ref string, line int, target *types.Selector) {
	fp, ok := r.local(ref)
	if !ok {
		return
	}
	content, err := os.ReadFile(r.open(fp))
	if err != nil {
		return // kustomize reports it; a missing patch is no device request
	}
	role := roleOf(content)
	r.k.Uses = append(r.k.Uses, Use{Path: fp, Role: role, Line: line})
	if role == JSON6902 {
		diags, lists, findings, adds := jsonPatch(fp, 1, content, target)
		r.diags = append(r.diags, diags...)
		r.k.ClaimLists = append(r.k.ClaimLists, lists...)
		r.k.Findings = append(r.k.Findings, findings...)
		r.k.MapAdds = append(r.k.MapAdds, adds...)
	}
}

// inlinePatch lists the i-th patch, inline, and reports what in it
// kubedra cannot migrate: JSON 6902 operations on requests, or a
// strategic-merge patch that sets an extended resource.
func (r *reader) inlinePatch(patch string, i, line int, target *types.Selector) {
	role := roleOf([]byte(patch))
	r.k.Uses = append(r.k.Uses, Use{Role: role, Line: line})
	path := r.k.Path
	if role == JSON6902 {
		start := inlineStart(r.node, i, line)
		diags, lists, findings, adds := jsonPatch(path, start, []byte(patch), target)
		r.diags = append(r.diags, diags...)
		r.k.Findings = append(r.k.Findings, findings...)
		r.k.MapAdds = append(r.k.MapAdds, adds...)
		for _, l := range lists {
			l.Inline = start
			r.k.ClaimLists = append(r.k.ClaimLists, l)
		}
	} else if ern := devices(patch); ern != "" {
		r.diags = append(r.diags, inventory.Diagnostic{Severity: inventory.Error, Rule: RulePatch, File: path, Line: line, Resource: ern,
			Message: "an inline strategic-merge patch sets an extended resource: kubedra edits files, not YAML inside a string",
			Fix:     "move the patch into its own file (patches: - path: gpu-patch.yaml) and migrate again"})
	}
}

// lineIndex finds the lines of list entries in a kustomization.
type lineIndex map[string][]int

func entryLines(n *kyaml.RNode) lineIndex {
	li := lineIndex{}
	if n == nil || n.YNode().Kind != kyaml.MappingNode {
		return li
	}
	c := n.YNode().Content
	for i := 0; i+1 < len(c); i += 2 {
		if c[i+1].Kind != kyaml.SequenceNode {
			continue
		}
		for _, e := range c[i+1].Content {
			li[c[i].Value] = append(li[c[i].Value], e.Line)
		}
	}
	return li
}

func (li lineIndex) at(field string, i int) int {
	if i < len(li[field]) {
		return li[field][i]
	}
	return 0
}

// Ordered returns the kustomizations in the order found.
func (t *Tree) Ordered() []*Kustomization {
	out := make([]*Kustomization, 0, len(t.order))
	for _, p := range t.order {
		out = append(out, t.Kustomizations[p])
	}
	return out
}

// PatchOf returns the kustomization (or component) that lists the file as
// a strategic-merge patch, or "". A file listed as a patch by several
// kustomizations gets the first one found.
func (t *Tree) PatchOf(file string) string {
	for _, l := range t.by[filepath.Clean(file)] {
		if l.role == StrategicMerge {
			return l.k.Path
		}
	}
	return ""
}

// Listing returns the kustomizations that list the file (as a resource
// or a patch).
func (t *Tree) Listing(file string) []*Kustomization {
	var out []*Kustomization
	for _, l := range t.by[filepath.Clean(file)] {
		out = append(out, l.k)
	}
	return out
}

// HeldBy returns the kustomization whose patch keeps the file at path
// unchanged (Held), or "".
func (t *Tree) HeldBy(path string) string {
	if t == nil {
		return ""
	}
	if t.held == nil {
		t.held = t.Held()
	}
	return t.held[filepath.Clean(path)]
}

// FailedFiles counts the files of diags holding a patch kubedra cannot
// migrate: their units are left as they were, and the run exits 1.
func FailedFiles(diags inventory.Diagnostics) int {
	files := map[string]bool{}
	for _, d := range diags {
		if d.Rule == RulePatch && d.Severity == inventory.Error {
			files[d.File] = true
		}
	}
	return len(files)
}

// Held returns the files migrate must leave unchanged: everything that a
// kustomization holding a patch kubedra cannot migrate reaches, and,
// because a shared base must be migrated consistently for every overlay,
// everything reached by any kustomization that reaches one of those files.
// The value is the kustomization whose patch is the reason.
func (t *Tree) Held() map[string]string {
	held := map[string]string{}
	cause := map[string]string{} // held kustomization -> the one whose patch is the reason
	var bad []string
	for _, p := range t.order {
		if k := t.Kustomizations[p]; k.OffName {
			// Only its patches: it builds no unit, so it holds no base.
			for _, u := range k.Uses {
				if u.Role == StrategicMerge || u.Role == JSON6902 {
					held[u.Path] = p
				}
			}
			continue
		}
		if t.bad[p] || t.failed[p] {
			bad = append(bad, p)
			cause[p] = p
		}
	}
	for len(bad) > 0 {
		b := bad[0]
		bad = bad[1:]
		seen := map[string]bool{}
		t.reach(b, seen)
		for f := range seen {
			if _, ok := held[f]; !ok {
				held[f] = cause[b]
			}
		}
		// Every other kustomization reaching a held file is held too.
		for _, p := range t.order {
			if _, ok := cause[p]; ok {
				continue
			}
			s := map[string]bool{}
			t.reach(p, s)
			for f := range s {
				if c, ok := held[f]; ok {
					cause[p] = c
					bad = append(bad, p)
					break
				}
			}
		}
	}
	return held
}

// CheckPatches finds the strategic-merge patches migrate cannot make
// exact, and holds their kustomizations (see Held). kustomize's built-in
// schema predates DRA, so a patch replaces the base's pod resourceClaims
// list (and a container's resources.claims) instead of merging it by name:
// a migrated patch is exact only when it gives claims to every container
// of the pod that has them in the migrated base. A patch whose base object
// (same kind and name, among the resources its kustomization reaches) has
// device requests in containers the patch does not set, or claims already,
// is an error at the patch's line. opts is detection's (rules files'
// templatePaths).
func (t *Tree) CheckPatches(open func(string) string, opts detect.Options) inventory.Diagnostics {
	var diags inventory.Diagnostics
	parsed := map[string][]inventory.Finding{}
	findings := func(path string) []inventory.Finding {
		if f, ok := parsed[path]; ok {
			return f
		}
		var out []inventory.Finding
		if data, err := os.ReadFile(open(path)); err == nil {
			out = detect.All(files.Parse(path, data).Docs, opts).Findings
		}
		parsed[path] = out
		return out
	}
	for _, kp := range t.order {
		k := t.Kustomizations[kp]
		for _, u := range k.Uses {
			if u.Role != StrategicMerge || u.Path == "" {
				continue
			}
			patch := findings(u.Path)
			if len(patch) == 0 {
				continue
			}
			sets := map[string]bool{}
			for _, f := range patch {
				sets[f.Kind+"/"+f.Name+"/"+f.PodTemplatePath+"/"+f.Container] = true
			}
			for _, res := range t.resources(kp, map[string]bool{}) {
				for _, f := range findings(res) {
					if !slices.ContainsFunc(patch, func(p inventory.Finding) bool { return p.Kind == f.Kind && p.Name == f.Name }) {
						continue
					}
					missing := !sets[f.Kind+"/"+f.Name+"/"+f.PodTemplatePath+"/"+f.Container]
					claims := f.Workload != nil && len(f.Workload.PodClaims) > 0
					if !missing && !claims {
						continue
					}
					why := fmt.Sprintf("its base %s:%d asks for %s in container %s, which the patch does not set", res, f.Line, f.Resource, f.Container)
					if !missing {
						why = fmt.Sprintf("its base %s:%d has pod resourceClaims already", res, f.Line)
					}
					diags = append(diags, inventory.Diagnostic{Severity: inventory.Error, Rule: RulePatch, File: u.Path, Line: patch[0].Line, Resource: patch[0].Resource,
						Object:  &inventory.ObjectRef{Kind: f.Kind, Name: f.Name},
						Message: "strategic-merge patch cannot be migrated exactly: kustomize replaces the pod's resourceClaims list with the patch's (its schema has no merge key for it), and " + why + "; the kustomizations that reach it are left unchanged",
						Fix:     "set every device request of that pod in the patch (or none), or migrate the build: kustomize build | kubedra migrate -"})
					t.bad[kp] = true
					t.why[kp] = append(t.why[kp], diags[len(diags)-1])
					break
				}
			}
		}
	}
	return diags
}

// resources are the resource files the kustomization at k reaches through
// resources, bases and components (not patches).
func (t *Tree) resources(k string, seen map[string]bool) []string {
	if seen[k] {
		return nil
	}
	seen[k] = true
	kk := t.Kustomizations[k]
	if kk == nil {
		return nil
	}
	var out []string
	for _, u := range kk.Uses {
		switch u.Role {
		case Resource:
			out = append(out, u.Path)
		case Base, Component:
			out = append(out, t.resources(u.Path, seen)...)
		}
	}
	return out
}
