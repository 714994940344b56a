package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/kyaml/yaml"

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
func proveBaseline(ctx context.Context, in Input, base string) ([]proof.Result, inventory.Diagnostics, error) {
	for _, p := range in.Paths {
		if p == "-" || filepath.IsAbs(p) || !filepath.IsLocal(filepath.Clean(p)) {
			return nil, nil, fmt.Errorf("--baseline: input %q must be a path inside the working folder, so that it names the same place in the baseline", p)
		}
	}
	if fi, err := os.Stat(base); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("--baseline %s: not a folder (check out the base revision there, e.g. git worktree add %s origin/main)", base, base)
	}
	classes := families()
	tree, _ := kustomize.Find(in.Paths, in.open)
	var out []proof.Result
	for _, k := range tree.Roots() {
		r := proof.Against(filepath.Join(base, k.Dir()), absPath(in.open(k.Dir())), k.Dir(), classes)
		r.Kustomization = k.Path
		out = append(out, r)
	}
	folders, err := plainFolders(ctx, in, tree)
	if err != nil {
		return nil, nil, err
	}
	for _, dir := range folders {
		out = append(out, proof.Renders(dir.path, folderObjects(filepath.Join(base, dir.path), dir.files), dir.head, classes))
	}
	var diags inventory.Diagnostics
	for _, r := range out {
		diags = append(diags, r.BaselineDiagnostics()...)
	}
	return out, diags, nil
}

// plainFolder is a folder of manifests no kustomization reaches: the
// names of those files in it, and their documents as they are now.
type plainFolder struct {
	path  string
	files []string
	head  []*yaml.RNode
}

// plainFolders are the input's folders of manifests that no kustomization
// reaches and no chart owns, in input order, read as scan reads them
// (files.Read).
func plainFolders(ctx context.Context, in Input, tree *kustomize.Tree) ([]*plainFolder, error) {
	byDir := map[string]*plainFolder{}
	var out []*plainFolder
	err := files.Read(ctx, in.Paths, nil, files.Options{Dir: in.Dir, Ordered: true, Skip: chart.IsChart}, func(f *files.File) error {
		if f.Err != nil || tree.Covers(f.Path) {
			return nil
		}
		d := filepath.Dir(f.Path)
		pf := byDir[d]
		if pf == nil {
			pf = &plainFolder{path: d}
			byDir[d] = pf
			out = append(out, pf)
		}
		pf.files = append(pf.files, filepath.Base(f.Path))
		for _, doc := range f.Docs {
			if doc.Node != nil {
				pf.head = append(pf.head, doc.Node)
			}
		}
		return nil
	})
	return out, err
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
