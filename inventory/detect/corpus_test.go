package detect_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
)

// corpusDir is the shared real-world corpus, next to the repository.
const corpusDir = "../../../shared/corpus/dev"

// TestCorpus reads every file of the real-world corpus and checks, per
// file: no crash; every request an independent structural walk finds is
// reported; and the prefilter changes nothing.
func TestCorpus(t *testing.T) {
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skip("corpus not present:", err)
	}
	var paths []string
	err := filepath.WalkDir(corpusDir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	scan := func(filter func([]byte) bool) (map[string][]string, map[string][]*inventory.Document) {
		var mu sync.Mutex
		found := map[string][]string{}
		docs := map[string][]*inventory.Document{}
		// Every file is named explicitly, so that non-manifest extensions
		// (.tpl, .txt) are read too and must not crash anything.
		err := files.Read(context.Background(), paths, nil, files.Options{Filter: filter}, func(f *files.File) error {
			fs := detect.Documents(f.Docs, detect.Options{})
			mu.Lock()
			defer mu.Unlock()
			for _, fd := range fs {
				found[f.Path] = append(found[f.Path], key(fd.Origin.Index, fd.Container, fd.Resource))
			}
			docs[f.Path] = append(docs[f.Path], f.Docs...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return found, docs
	}
	all, docs := scan(nil)
	filtered, _ := scan(detect.MayRequest)

	negative := map[string]bool{}
	if b, err := os.ReadFile(filepath.Join(corpusDir, "..", "MANIFEST.tsv")); err == nil {
		for l := range strings.SplitSeq(string(b), "\n") {
			c := strings.Split(l, "\t")
			if len(c) > 9 && (c[9] == "negative" || c[9] == "hard-negative") {
				negative[filepath.Join(corpusDir, "..", c[0])] = true
			}
		}
	}

	walked, files := 0, 0
	for _, p := range paths {
		for _, d := range docs[p] {
			for _, k := range structuralWalk(d) {
				walked++
				if !slices.Contains(all[p], k) {
					t.Errorf("%s: request %s found by the structural walk is not reported", p, k)
				}
			}
		}
		a, f := all[p], filtered[p]
		slices.Sort(a)
		slices.Sort(f)
		if !slices.Equal(a, f) {
			t.Errorf("%s: prefilter changed findings: without %v, with %v", p, a, f)
		}
		if len(a) > 0 {
			files++
			if negative[p] {
				t.Errorf("%s: a negative example has findings %v", p, a)
			}
		}
	}
	if walked < 100 {
		t.Errorf("structural walk found only %d requests: is the corpus complete?", walked)
	}
	t.Logf("%d files, %d with findings, %d requests found by the structural walk", len(paths), files, walked)
}

func key(index int, container, resource string) string {
	return fmt.Sprintf("doc %d container %q resource %s", index, container, resource)
}

// structuralWalk is deliberately simple and independent of detect: any map
// with name and image whose resources.limits or resources.requests map has
// a key with a domain prefix (not kubernetes.io, except the DRA-backed
// deviceclass names) is a request.
func structuralWalk(d *inventory.Document) []string {
	var out []string
	var visit func(n *yaml.Node)
	visit = func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode {
			return
		}
		if n.Kind == yaml.MappingNode {
			m := map[string]*yaml.Node{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				m[n.Content[i].Value] = n.Content[i+1]
			}
			if m["name"] != nil && m["image"] != nil && m["resources"] != nil && m["resources"].Kind == yaml.MappingNode {
				for i := 0; i+1 < len(m["resources"].Content); i += 2 {
					field, v := m["resources"].Content[i].Value, m["resources"].Content[i+1]
					if (field != "limits" && field != "requests") || v.Kind != yaml.MappingNode {
						continue
					}
					for j := 0; j+1 < len(v.Content); j += 2 {
						r := v.Content[j].Value
						if strings.Contains(r, "/") && (!strings.Contains(r, "kubernetes.io/") || strings.HasPrefix(r, "deviceclass.resource.kubernetes.io/")) {
							k := key(d.Origin.Index, m["name"].Value, r)
							if !slices.Contains(out, k) {
								out = append(out, k)
							}
						}
					}
				}
			}
		}
		for _, c := range n.Content {
			visit(c)
		}
	}
	visit(d.Node.YNode())
	return out
}
