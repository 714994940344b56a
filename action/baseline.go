package action

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/chart"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/proof"
)

// proveBaseline proves every deployable unit of the input against the same
// unit in base, the repository before a change (check --baseline): each
// kustomize unit (a kustomization nothing else lists) is built at both,
// and each folder of plain manifests (files no kustomization reaches) is
// read at both; every pod template must get the devices it had (package
// proof). Input paths name the same places in both trees, so they must be
// relative and inside the working folder. Charts are not compared.
func proveBaseline(in Input, base string) ([]proof.Result, inventory.Diagnostics, error) {
	for _, p := range in.Paths {
		if p == "-" || filepath.IsAbs(p) || !filepath.IsLocal(filepath.Clean(p)) {
			return nil, nil, fmt.Errorf("--baseline: input %q must be a path inside the working folder, so that it names the same place in the baseline", p)
		}
	}
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("--baseline %s: not a folder (check out the base revision there, e.g. git worktree add %s origin/main)", base, base)
	}
	classes := bundle.CatalogueFamilies()
	tree, _ := kustomize.Find(in.Paths, in.open)
	var out []proof.Result
	for _, k := range tree.Roots() {
		r := proof.Against(filepath.Join(base, k.Dir()), absPath(in.open(k.Dir())), k.Dir(), classes)
		r.Kustomization = k.Path
		out = append(out, r)
	}
	for _, dir := range plainFolders(in, tree) {
		before, after := folderObjects(filepath.Join(base, dir.path), dir.files), folderObjects(in.open(dir.path), dir.files)
		out = append(out, proof.Renders(dir.path, before, after, classes))
	}
	var diags inventory.Diagnostics
	for _, r := range out {
		diags = append(diags, r.BaselineDiagnostics()...)
	}
	return out, diags, nil
}

// plainFolder is a folder of manifests no kustomization reaches, and the
// names of those files in it.
type plainFolder struct {
	path  string
	files []string
}

// plainFolders are the input's folders of manifests that no kustomization
// reaches and no chart owns, in order.
func plainFolders(in Input, tree *kustomize.Tree) []plainFolder {
	byDir := map[string][]string{}
	var dirs []string
	add := func(p string) {
		ext := strings.ToLower(filepath.Ext(p))
		if (ext != ".yaml" && ext != ".yml" && ext != ".json") || tree.Covers(p) {
			return
		}
		d := filepath.Dir(p)
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], filepath.Base(p))
	}
	for _, root := range in.Paths {
		if !in.isDir(root) {
			add(filepath.Clean(root))
			continue
		}
		_ = filepath.WalkDir(in.open(root), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if p != in.open(root) && (strings.HasPrefix(d.Name(), ".") || chart.IsChart(p)) {
					return filepath.SkipDir
				}
				return nil
			}
			if rel, err := filepath.Rel(in.open(root), p); err == nil && d.Type().IsRegular() {
				add(filepath.Join(root, rel))
			}
			return nil
		})
	}
	out := make([]plainFolder, 0, len(dirs))
	for _, d := range dirs {
		out = append(out, plainFolder{path: d, files: slices.Compact(byDir[d])})
	}
	return out
}

// folderObjects are the documents of the named files in dir (absent files
// and unparsable documents give none).
func folderObjects(dir string, names []string) []*yaml.RNode {
	var out []*yaml.RNode
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		for _, d := range files.Parse(n, data).Docs {
			if d.Node != nil {
				out = append(out, d.Node)
			}
		}
	}
	return out
}
