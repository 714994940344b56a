package action_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// kustomizeTrees are the trees TestKustomize migrates: the fixture repo and
// every kustomize tree of ../shared/corpus/dev (found by
// TestKustomizeCorpusTreesAreListed).
var kustomizeTrees = []struct {
	name, dir string
	// offline is false when the tree's build fetches a remote resource:
	// the test then checks only that migrate leaves it unchanged.
	offline bool
	// hintsApart: a node-label hint (a nodeSelector) and the request it
	// would narrow come from different files (a JSON patch and a
	// strategic-merge patch), so only the build puts them together:
	// migrating the build adds a CEL selector from the hint, migrating the
	// files cannot. The nodeSelector stays in both, so the pods land on the
	// same nodes; the device selectors are not compared.
	hintsApart bool
}{
	{"fixture", "testdata/kustomize/repo", true, false},
	{"gke-a100-jax", "../../shared/corpus/dev/GoogleCloudPlatform__kubernetes-engine-samples/ai-ml/gke-a100-jax/kubernetes", true, true},
	{"torchtune", "../../shared/corpus/dev/kubeflow__trainer/manifests/base/runtimes/torchtune", true, false},
	{"kueue-remote", "../../shared/corpus/dev/GoogleCloudPlatform__kubernetes-engine-samples/ai-ml/mix-train-and-inference/kueue", false, false},
}

// unusedTemplates are the templates an overlay's build holds that no object
// references: a base's, for a request the overlay's patch replaced.
var unusedTemplates = map[string][]string{"fixture:overlays/prod": {"ml-prod/prod-train-gpu"}}

// TestKustomize: for every overlay (every kustomization no other lists) of
// each tree, `kustomize build` after `migrate -w` of the tree gives the
// objects that migrating `kustomize build` before gives, names aside
// (normalizeBuild), and a second migration changes no byte.
func TestKustomize(t *testing.T) {
	for _, tree := range kustomizeTrees {
		t.Run(tree.name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(tree.dir); err != nil {
				t.Skipf("%s: %v", tree.dir, err)
			}
			dir := tempTree(t, tree.dir)
			overlays := topKustomizations(t, dir)
			if len(overlays) == 0 {
				t.Fatal("no kustomization")
			}
			want := map[string][]*yaml.RNode{}
			if tree.offline {
				for _, o := range overlays {
					before := kbuild(t, o)
					res, err := action.Migrate(t.Context(), action.Input{Documents: docs(before)}, action.MigrateOptions{Plan: plan.Options{Target: defaultTarget()}})
					if err != nil {
						t.Fatal(err)
					}
					want[o] = res.Documents
				}
			}
			res := migrateTree(t, dir)
			for _, d := range res.Diagnostics {
				if d.Severity == inventory.Error {
					t.Errorf("%+v", d)
				}
			}
			snapshot := readTree(t, dir)
			for _, o := range overlays {
				if !tree.offline {
					continue
				}
				got, orphans := normalizeBuild(t, kbuild(t, o), tree.hintsApart)
				exp, _ := normalizeBuild(t, want[o], tree.hintsApart)
				if got != exp {
					t.Errorf("%s: kustomize build after migrate differs from migrate of kustomize build\n--- build after migrate\n%s\n--- migrate of build\n%s", rel(dir, o), got, exp)
				}
				// The only unused template: the base's of the Job whose
				// request prod's patch replaces.
				if want := unusedTemplates[tree.name+":"+rel(dir, o)]; !slices.Equal(orphans, want) {
					t.Errorf("%s: templates no object of the build references: %v, want %v", rel(dir, o), orphans, want)
				}
			}
			if !tree.offline && res.Changed != 0 {
				t.Errorf("a tree without device requests changed %d files", res.Changed)
			}
			again := migrateTree(t, dir)
			if again.Changed != 0 || again.Migrated != 0 {
				t.Errorf("second migration: %d files changed, %d workloads migrated", again.Changed, again.Migrated)
			}
			if after := readTree(t, dir); !maps2Equal(snapshot, after) {
				t.Error("second migration changed bytes")
			}
		})
	}
}

// TestKustomizeFixture pins what the fixture's migration edits where: the
// patches' templates go into claims files their kustomization (the
// component's for the component's patch) lists, the names tell the overlay
// apart, and namePrefix/nameSuffix rename the references.
func TestKustomizeFixture(t *testing.T) {
	t.Parallel()
	dir := tempTree(t, "testdata/kustomize/repo")
	migrateTree(t, dir)
	for path, want := range map[string][]string{
		"overlays/prod/kustomization.yaml":       {"- ../../base\n", "- kubedra-claims.yaml\n", "configurations:\n- kubedra-namereference.yaml\n", "    - op: replace\n      path: /spec/replicas\n"},
		"overlays/prod/kubedra-claims.yaml":      {"name: train-prod-gpu\n", "count: 2\n"},
		"components/gpu-web/kustomization.yaml":  {"resources:\n- kubedra-claims.yaml\n", "configurations:\n- kubedra-namereference.yaml\n"},
		"components/gpu-web/kubedra-claims.yaml": {"name: web-gpu-web-gpu\n"},
		"components/gpu-web/web-gpu.yaml":        {"# The web front end renders on a GPU.\n", "resourceClaimTemplateName: web-gpu-web-gpu\n"},
		"overlays/dev/kubedra-claims.yaml":       {"name: web-dev-gpu\n", "deviceClassName: gpu.amd.com\n"},
		"base/train.yaml":                        {"resourceClaimTemplateName: train-gpu\n", "name: train-gpu\n", "cpu: \"4\"\n"},
		"base/kustomization.yaml":                {"configurations:\n- kubedra-namereference.yaml\n"},
		"base/kubedra-namereference.yaml":        {"kind: ResourceClaimTemplate\n", "- path: spec/template/spec/resourceClaims/resourceClaimTemplateName\n"},
	} {
		b, err := os.ReadFile(filepath.Join(dir, path))
		if err != nil {
			t.Error(err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %q:\n%s", path, w, b)
			}
		}
		if strings.Contains(string(b), "nvidia.com/gpu") || strings.Contains(string(b), "amd.com/gpu") {
			t.Errorf("%s still asks for an extended resource:\n%s", path, b)
		}
	}
	for _, patch := range []string{"overlays/prod/train-gpus.yaml", "overlays/dev/web-amd.yaml", "components/gpu-web/web-gpu.yaml"} {
		b, _ := os.ReadFile(filepath.Join(dir, patch))
		if strings.Contains(string(b), "kind: ResourceClaimTemplate") {
			t.Errorf("%s: a ResourceClaimTemplate landed in the patch:\n%s", patch, b)
		}
	}
	prod := kbuild(t, filepath.Join(dir, "overlays", "prod"))
	refs := map[string]bool{}
	for _, n := range prod {
		if n.GetKind() == "ResourceClaimTemplate" {
			if n.GetNamespace() != "ml-prod" || !strings.HasPrefix(n.GetName(), "prod-") {
				t.Errorf("template %s/%s: not in the overlay's namespace or without its prefix", n.GetNamespace(), n.GetName())
			}
			continue
		}
		for _, r := range templateRefs(n) {
			refs[r] = true
		}
	}
	if !refs["prod-train-prod-gpu"] || !refs["prod-web-gpu-web-gpu"] {
		t.Errorf("prod's pods reference %v: namePrefix did not rename the references", refs)
	}
	// A configuration declared in a base applies to an overlay's
	// namePrefix (kustomize merges it upwards): staging, which only
	// renames, is not edited and still gets its references renamed.
	if b, _ := os.ReadFile(filepath.Join(dir, "overlays", "staging", "kustomization.yaml")); strings.Contains(string(b), "configurations") {
		t.Errorf("staging was edited:\n%s", b)
	}
	var staging []string
	for _, n := range kbuild(t, filepath.Join(dir, "overlays", "staging")) {
		staging = append(staging, templateRefs(n)...)
	}
	if !slices.Equal(staging, []string{"staging-train-gpu"}) {
		t.Errorf("staging's pods reference %v, want [staging-train-gpu]", staging)
	}
}

// TestKustomizeJSONPatchSettingDevices: a JSON 6902 patch that sets an
// extended resource cannot be rewritten exactly; it is reported at its
// line, and the overlay and its base stay as they are (a base must be
// migrated the same way for every overlay).
func TestKustomizeJSONPatchSettingDevices(t *testing.T) {
	t.Parallel()
	dir := tempTree(t, "testdata/kustomize/jsonpatch")
	before := readTree(t, dir)
	res := migrateTree(t, dir)
	if res.Changed != 0 || res.Migrated != 0 || res.Failed != 1 {
		t.Errorf("%d files changed, %d workloads migrated, %d failed; want none, none, and the patch's file (exit code 1)", res.Changed, res.Migrated, res.Failed)
	}
	if !maps2Equal(before, readTree(t, dir)) {
		t.Error("files changed")
	}
	var patch, held bool
	for _, d := range res.Diagnostics {
		switch d.Rule {
		case kustomize.RulePatch:
			patch = d.Severity == inventory.Error && d.File == "overlay/kustomization.yaml" && d.Line == 10 && d.Resource == "nvidia.com/gpu"
		case kustomize.RuleHeld:
			held = d.File == "base/train.yaml" && d.Line > 0
		}
	}
	if !patch || !held {
		t.Errorf("want %s at overlay/kustomization.yaml:10 and %s at base/train.yaml; got %v", kustomize.RulePatch, kustomize.RuleHeld, res.Diagnostics)
	}
}

// TestKustomizePatchesInScanAndCheck: a JSON 6902 operation that sets a
// GPU is a device request no workload shows: scan and check report it as
// a finding at the operation's line (so check's gate fails on it: exit 2),
// not an input that could not be read.
func TestKustomizePatchesInScanAndCheck(t *testing.T) {
	t.Parallel()
	dir := "testdata/kustomize/jsonpatch"
	in := action.Input{Paths: []string{"."}, Dir: dir}
	sr, err := action.Scan(t.Context(), in, action.ScanOptions{Target: defaultTarget()})
	if err != nil {
		t.Fatal(err)
	}
	unread := func(ds inventory.Diagnostics) bool {
		return slices.ContainsFunc(ds, func(d inventory.Diagnostic) bool { return d.Rule == kustomize.RulePatch })
	}
	finding := func(items []plan.Item) bool {
		for _, it := range items {
			if it.File == "overlay/kustomization.yaml" && it.Line == 10 && it.Resource == "nvidia.com/gpu" && it.Status == rules.Mappable && it.Kind == "Job" {
				return true
			}
		}
		return false
	}
	if unread(sr.Diagnostics) || len(sr.Report.Skipped) != 0 || sr.Failed != 0 || !finding(sr.Report.Findings) {
		t.Errorf("scan: want a mappable finding at overlay/kustomization.yaml:10 and no input skipped; got %d failed, %v, %+v", sr.Failed, sr.Diagnostics, sr.Report.Findings)
	}
	cr := checkDir(t, dir, defaultTarget())
	if cr.FailedInputs != 0 || cr.Failures == 0 || !finding(cr.Report.Findings) {
		t.Errorf("check: want the patch's request failing the gate (exit 2), no input unread; got %d unread, %d failing, %+v", cr.FailedInputs, cr.Failures, cr.Report.Findings)
	}
	// The fixture repo's patches can all be migrated: no such error.
	sr, err = action.Scan(t.Context(), action.Input{Paths: []string{"."}, Dir: "testdata/kustomize/repo"}, action.ScanOptions{Target: defaultTarget()})
	if err != nil {
		t.Fatal(err)
	}
	if sr.Failed != 0 {
		t.Errorf("scan of the fixture repo: %d failed: %v", sr.Failed, sr.Diagnostics)
	}
}

// TestKustomizeCorpusTreesAreListed keeps kustomizeTrees in step with the
// corpus.
func TestKustomizeCorpusTreesAreListed(t *testing.T) {
	root := "../../shared/corpus/dev"
	if _, err := os.Stat(root); err != nil {
		t.Skip(err)
	}
	var found []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && slices.Contains(kustomize.Names, d.Name()) {
			found = append(found, filepath.Dir(p))
		}
		return nil
	})
	for _, f := range found {
		listed := false
		for _, tr := range kustomizeTrees {
			if r, err := filepath.Rel(tr.dir, f); err == nil && !strings.HasPrefix(r, "..") {
				listed = true
			}
		}
		if !listed {
			t.Errorf("%s: a kustomize tree of the corpus that TestKustomize does not migrate", f)
		}
	}
}

func defaultTarget() rules.Version { return rules.DefaultTarget }

// migrateTree runs migrate -w over dir.
func migrateTree(t *testing.T, dir string) *action.MigrateResult {
	t.Helper()
	res, err := action.Migrate(t.Context(), action.Input{Paths: []string{"."}, Dir: dir}, action.MigrateOptions{Output: emit.Write, Plan: plan.Options{Target: defaultTarget()}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// kbuild is `kustomize build dir` with the real kustomize, in process.
func kbuild(t *testing.T, dir string) []*yaml.RNode {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	return m.ToRNodeSlice()
}

func docs(nodes []*yaml.RNode) []*inventory.Document {
	out := make([]*inventory.Document, len(nodes))
	for i, n := range nodes {
		out[i] = &inventory.Document{Node: n, Origin: inventory.Origin{Path: "-", Index: i, ListIndex: -1}}
	}
	return out
}

// normalizeBuild is what "names aside" means: every ResourceClaimTemplate
// is renamed after its first reference (the referring object's kind,
// namespace and name and the pod claim's name, in stream order), the
// references with it; templates no object references are dropped and
// returned (a base's template whose request an overlay's patch replaced
// stays in the overlay's build, unused). Everything else compares as is:
// the objects, sorted by kind, namespace and name, as YAML.
//
// With noSelectors, device selectors of templates are not compared (see
// kustomizeTrees' hintsApart).
func normalizeBuild(t *testing.T, nodes []*yaml.RNode, noSelectors bool) (string, []string) {
	t.Helper()
	canon := map[string]string{} // namespace/name -> canonical name
	for _, n := range nodes {
		if n.GetKind() == "ResourceClaimTemplate" {
			continue
		}
		for _, pc := range podClaims(n) {
			key := n.GetNamespace() + "/" + pc.tmpl
			if _, ok := canon[key]; !ok {
				canon[key] = "rct." + n.GetKind() + "." + n.GetName() + "." + pc.name
			}
		}
	}
	var orphans []string
	var out []string
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
		// As JSON: keys sorted, comments and styles gone.
		b, err := n.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		s := string(b) + "\n"
		out = append(out, n.GetKind()+"/"+n.GetNamespace()+"/"+n.GetName()+"\n"+s)
	}
	sort.Strings(out)
	return strings.Join(out, "---\n"), orphans
}

type podClaim struct {
	name, tmpl string
	node       *yaml.RNode
}

// podClaims finds every pod claim with a template name in the object.
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

func templateRefs(n *yaml.RNode) []string {
	var out []string
	for _, pc := range podClaims(n) {
		out = append(out, pc.tmpl)
	}
	return out
}

// topKustomizations are the kustomization folders under dir that no other
// kustomization lists: the overlays one would build.
func topKustomizations(t *testing.T, dir string) []string {
	t.Helper()
	tree, _ := kustomize.Find([]string{dir}, func(p string) string { return p })
	var out []string
	for _, k := range tree.Ordered() {
		if !k.Component && len(tree.Listing(k.Path)) == 0 {
			out = append(out, k.Dir())
		}
	}
	return out
}

// tempTree copies a tree into a temporary folder, writable.
func tempTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	testfs.Copy(t, src, dst)
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

func maps2Equal(a, b map[string][]byte) bool {
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
	r, err := filepath.Rel(dir, p)
	if err != nil {
		return p
	}
	return r
}

// TestKustomizeSharedBaseOnce: a base shared by two overlays is migrated
// the same way whichever overlay is migrated with it, and alone.
func TestKustomizeSharedBaseOnce(t *testing.T) {
	t.Parallel()
	var bases []map[string][]byte
	for _, paths := range [][]string{{"."}, {"overlays/prod", "base"}, {"overlays/dev", "base"}, {"base"}} {
		dir := tempTree(t, "testdata/kustomize/repo")
		res, err := action.Migrate(t.Context(), action.Input{Paths: paths, Dir: dir}, action.MigrateOptions{Output: emit.Write, Plan: plan.Options{Target: defaultTarget()}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Migrated == 0 {
			t.Fatalf("%v: nothing migrated", paths)
		}
		base := map[string][]byte{}
		for p, b := range readTree(t, filepath.Join(dir, "base")) {
			base[rel(dir, p)] = b
		}
		bases = append(bases, base)
	}
	for i := 1; i < len(bases); i++ {
		if !maps2Equal(bases[0], bases[i]) {
			t.Errorf("run %d migrated the base differently from run 0", i)
			for p, b := range bases[i] {
				if !bytes.Equal(b, bases[0][p]) {
					t.Logf("%s:\n%s\n--- vs\n%s", p, b, bases[0][p])
				}
			}
		}
	}
}
