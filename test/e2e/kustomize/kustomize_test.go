// Package kustomize checks migrate on kustomize trees against a real
// control plane: for every overlay of the fixture repo
// (action/testdata/kustomize/repo) and of every kustomize tree in
// ../shared/corpus/dev, `kustomize build` (kustomize's krusty, in process:
// the real kustomize) after `kubedra migrate -w` of the tree gives the
// objects `kubedra migrate -` gives over `kustomize build` before, names
// aside (normalize; docs/migrate.md "Kustomize repositories"), both sides
// are accepted by a server-side dry run with strict field validation, and a
// second `migrate -w` changes no byte.
package kustomize

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }

// tree is one kustomize tree under the repository root or the corpus.
type tree struct {
	name, dir string
	// hintsApart: the tree's nodeSelector (a JSON patch) and its GPU
	// request (a strategic-merge patch) meet only in the build, so
	// migrating the build adds a CEL selector from the node label that
	// migrating the files cannot; the nodeSelector stays in both, and
	// template selectors are not compared.
	hintsApart bool
	// remote: the build fetches a remote resource (no network here): only
	// checked to be left unchanged.
	remote bool
}

func trees(t *testing.T) []tree {
	root := repoRoot(t)
	corpus := filepath.Join(root, "..", "shared", "corpus", "dev")
	return []tree{
		{name: "fixture", dir: filepath.Join(root, "action", "testdata", "kustomize", "repo")},
		{name: "gke-a100-jax", dir: filepath.Join(corpus, "GoogleCloudPlatform__kubernetes-engine-samples", "ai-ml", "gke-a100-jax", "kubernetes"), hintsApart: true},
		{name: "torchtune", dir: filepath.Join(corpus, "kubeflow__trainer", "manifests", "base", "runtimes", "torchtune")},
		{name: "kueue-remote", dir: filepath.Join(corpus, "GoogleCloudPlatform__kubernetes-engine-samples", "ai-ml", "mix-train-and-inference", "kueue"), remote: true},
	}
}

var (
	crdsOnce sync.Once
	crdsErr  error
)

func TestKustomizeOverlays(t *testing.T) {
	if _, err := harness.KubedraBin(); err != nil {
		t.Fatal(err)
	}
	crdsOnce.Do(func() {
		_, crdsErr = cluster.InstallCRDs(context.Background(), filepath.Join("..", "validate", "testdata", "crds"))
	})
	if crdsErr != nil {
		t.Fatalf("installing the framework CRDs: %v", crdsErr)
	}
	for _, tr := range trees(t) {
		t.Run(tr.name, func(t *testing.T) {
			if _, err := os.Stat(tr.dir); err != nil {
				t.Skipf("%s: %v", tr.dir, err)
			}
			dir := copyTree(t, tr.dir)
			overlays := overlaysOf(t, dir)
			if len(overlays) == 0 {
				t.Fatal("no overlay")
			}
			target := cluster.Version.TargetVersion()
			want := map[string][]*yaml.RNode{}
			if !tr.remote {
				for _, o := range overlays {
					before := kbuild(t, o)
					dryRunAll(t, "before: "+rel(dir, o), before)
					res := run(t, yamlOf(t, before), "migrate", "--target-version", target, "-")
					want[o] = parse(t, res.Stdout)
				}
			}
			orig := readTree(t, dir)
			if res := run(t, nil, "migrate", "--target-version", target, "-w", dir); tr.remote && !equalTrees(orig, readTree(t, dir)) {
				t.Errorf("a tree without device requests changed:\n%s", res.Stderr)
			}
			for _, o := range overlays {
				if tr.remote {
					break
				}
				after := kbuild(t, o)
				dryRunAll(t, "after: "+rel(dir, o), after)
				got, orphans := normalize(t, after, tr.hintsApart)
				exp, _ := normalize(t, want[o], tr.hintsApart)
				if got != exp {
					t.Errorf("%s: kustomize build after migrate differs from migrate of kustomize build\n--- build after migrate\n%s\n--- migrate of build\n%s", rel(dir, o), got, exp)
				}
				t.Logf("%s: %d objects equal; unreferenced templates dropped: %v", rel(dir, o), len(after)-len(orphans), orphans)
			}
			snapshot := readTree(t, dir)
			run(t, nil, "migrate", "--target-version", target, "-w", dir)
			if !equalTrees(snapshot, readTree(t, dir)) {
				t.Error("a second migration changed bytes")
			}
		})
	}
}

func run(t *testing.T, stdin []byte, args ...string) harness.KubedraResult {
	t.Helper()
	res, err := harness.RunKubedra(context.Background(), nil, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("kubedra %s: exit %d\n%s", strings.Join(args, " "), res.ExitCode, res.Stderr)
	}
	return res
}

// dryRunAll creates every object with a server-side dry run, after the
// namespaces they name.
func dryRunAll(t *testing.T, what string, nodes []*yaml.RNode) {
	t.Helper()
	ctx := context.Background()
	for _, n := range nodes {
		if ns := n.GetNamespace(); ns != "" {
			if err := cluster.EnsureNamespace(ctx, ns); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, n := range nodes {
		b, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := json.Unmarshal(b, &u.Object); err != nil {
			t.Fatal(err)
		}
		_, err = cluster.Create(ctx, u, harness.CreateOptions{DryRun: true})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Errorf("%s: %s %s/%s rejected: %v", what, u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
}

// normalize is "names aside": every ResourceClaimTemplate is renamed after
// its first reference (referring kind and name, pod claim name, in stream
// order) and the references with it; templates nothing references are
// dropped and returned; objects compare as JSON, sorted. With noSelectors,
// template device selectors are not compared.
func normalize(t *testing.T, nodes []*yaml.RNode, noSelectors bool) (string, []string) {
	t.Helper()
	canon := map[string]string{}
	for _, n := range nodes {
		if n.GetKind() == "ResourceClaimTemplate" {
			continue
		}
		for _, pc := range podClaims(n) {
			if k := n.GetNamespace() + "/" + pc.tmpl; canon[k] == "" {
				canon[k] = "rct." + n.GetKind() + "." + n.GetName() + "." + pc.name
			}
		}
	}
	var orphans, out []string
	for _, n := range nodes {
		n = n.Copy()
		if n.GetKind() == "ResourceClaimTemplate" {
			c, ok := canon[n.GetNamespace()+"/"+n.GetName()]
			if !ok {
				orphans = append(orphans, n.GetNamespace()+"/"+n.GetName())
				continue
			}
			if err := n.SetName(c); err != nil {
				t.Fatal(err)
			}
			if reqs, _ := n.Pipe(yaml.Lookup("spec", "spec", "devices", "requests")); noSelectors && reqs != nil {
				for _, r := range reqs.Content() {
					if ex := yaml.NewRNode(r).Field("exactly"); ex != nil {
						_, _ = ex.Value.Pipe(yaml.Clear("selectors"))
					}
				}
			}
		}
		for _, pc := range podClaims(n) {
			if err := pc.node.PipeE(yaml.SetField("resourceClaimTemplateName", yaml.NewStringRNode(canon[n.GetNamespace()+"/"+pc.tmpl]))); err != nil {
				t.Fatal(err)
			}
		}
		b, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	sort.Strings(out)
	return strings.Join(out, "\n"), orphans
}

type podClaim struct {
	name, tmpl string
	node       *yaml.RNode
}

func podClaims(n *yaml.RNode) []podClaim {
	var out []podClaim
	var walk func(*yaml.RNode)
	walk = func(n *yaml.RNode) {
		switch n.YNode().Kind {
		case yaml.MappingNode:
			_ = n.VisitFields(func(f *yaml.MapNode) error {
				if f.Key.YNode().Value == "resourceClaims" && f.Value.YNode().Kind == yaml.SequenceNode {
					for _, el := range f.Value.Content() {
						e := yaml.NewRNode(el)
						if tn := e.Field("resourceClaimTemplateName"); tn != nil {
							out = append(out, podClaim{name: yaml.GetValue(e.Field("name").Value), tmpl: yaml.GetValue(tn.Value), node: e})
						}
					}
					return nil
				}
				walk(f.Value)
				return nil
			})
		case yaml.SequenceNode:
			for _, el := range n.Content() {
				walk(yaml.NewRNode(el))
			}
		}
	}
	walk(n)
	return out
}

func kbuild(t *testing.T, dir string) []*yaml.RNode {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	return m.ToRNodeSlice()
}

func yamlOf(t *testing.T, nodes []*yaml.RNode) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := (kio.ByteWriter{Writer: &b}).Write(nodes); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func parse(t *testing.T, data []byte) []*yaml.RNode {
	t.Helper()
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// overlaysOf are the kustomization folders under dir that no other
// kustomization lists as a resource or component.
func overlaysOf(t *testing.T, dir string) []string {
	t.Helper()
	listed := map[string]bool{}
	var all []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (d.Name() != "kustomization.yaml" && d.Name() != "kustomization.yml" && d.Name() != "Kustomization") {
			return nil
		}
		b, _ := os.ReadFile(p)
		var k struct {
			Kind       string   `json:"kind"`
			Resources  []string `json:"resources"`
			Components []string `json:"components"`
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if k.Kind != "Component" {
			all = append(all, filepath.Dir(p))
		}
		for _, r := range append(k.Resources, k.Components...) {
			listed[filepath.Join(filepath.Dir(p), r)] = true
		}
		return nil
	})
	var out []string
	for _, d := range all {
		if !listed[d] {
			out = append(out, d)
		}
	}
	return out
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "kubedra")); err != nil {
		t.Fatalf("%s does not look like the kubedra clone: %v", root, err)
	}
	return root
}

func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, r), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, r), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := os.ReadFile(p)
			out[p] = b
		}
		return nil
	})
	return out
}

func equalTrees(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func rel(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil {
		return r
	}
	return p
}
