package validate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }

var (
	crdsOnce sync.Once
	crds     []string
	crdsErr  error
)

// installCRDs installs, once per test binary, the CRDs of the frameworks
// whose kinds migrate rewrites (testdata/crds, vendored with their
// licences), so that migrated custom resources are dry-run too.
// KUBEDRA_E2E_NO_CRDS=1 skips it, to compare with a bare API server.
func installCRDs(t *testing.T) {
	t.Helper()
	crdsOnce.Do(func() {
		if os.Getenv("KUBEDRA_E2E_NO_CRDS") == "1" {
			return
		}
		crds, crdsErr = cluster.InstallCRDs(context.Background(), filepath.Join("testdata", "crds"))
	})
	if crdsErr != nil {
		t.Fatalf("installing the framework CRDs: %v", crdsErr)
	}
	if len(crds) == 0 {
		t.Logf("no framework CRDs installed (KUBEDRA_E2E_NO_CRDS=1): custom resources are checked structurally only")
	}
}

// repoRoot is the kubedra clone: test/e2e/validate -> ../../..
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "cmd", "kubedra")); err != nil {
		t.Fatalf("%s does not look like the kubedra clone (no cmd/kubedra): %v", root, err)
	}
	return root
}

// TestGoldenFixtures migrates each rewrite golden fixture's input (stdin
// mode, with the case's flags) and dry-runs the result.
func TestGoldenFixtures(t *testing.T) {
	if _, err := harness.KubedraBin(); err != nil {
		t.Fatal(err)
	}
	installCRDs(t)
	dirs, err := filepath.Glob(filepath.Join(repoRoot(t), "rewrite", "testdata", "*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, dir := range dirs {
		input := ""
		for _, name := range []string{"input.yaml", "input.json"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				input = filepath.Join(dir, name)
			}
		}
		if input == "" {
			continue
		}
		n++
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in, err := os.ReadFile(input)
			if err != nil {
				t.Fatal(err)
			}
			args := append([]string{"migrate", "--target-version", cluster.Version.TargetVersion()}, fixtureFlags(t, dir)...)
			args = append(args, "-")
			res, err := harness.RunKubedra(context.Background(), nil, in, args...)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 {
				t.Logf("kubedra %s exited %d (validating its output anyway); stderr:\n%s", strings.Join(args, " "), res.ExitCode, res.Stderr)
			}
			inDocs, _ := decodeDocs(in)
			outDocs, skipped := decodeDocs(res.Stdout)
			if skipped != "" {
				t.Errorf("kubedra %s wrote a stream that does not decode: %s\n%s", strings.Join(args, " "), skipped, res.Stdout)
			}
			v := newValidator(t)
			v.stream(t, filepath.Base(input), inDocs, outDocs)
			v.checkClaimRefs(t)
			t.Logf("%s", v.summary())
		})
	}
	if n == 0 {
		t.Fatal("no golden fixtures found under rewrite/testdata/*/input.{yaml,json}")
	}
}

// fixtureFlags reads a case's flags file (one flag per line, without the
// dashes: "strategy=auto"). A target flag is dropped: the suite always
// targets the running cluster's version.
func fixtureFlags(t *testing.T, dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "flags"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "target=") || strings.HasPrefix(line, "target-version=") {
			t.Logf("flags: %s replaced by --target-version %s (the cluster's)", line, cluster.Version.TargetVersion())
			continue
		}
		out = append(out, "--"+line)
	}
	return out
}

// TestTestdataManifests migrates testdata/manifests (the scan fixtures) with --out.
func TestTestdataManifests(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "testdata", "manifests")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no %s yet: %v", dir, err)
	}
	migrateTree(t, dir)
}

// TestCorpus migrates all of ../shared/corpus/dev with --out.
func TestCorpus(t *testing.T) {
	dir := os.Getenv("KUBEDRA_CORPUS_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot(t), "..", "shared", "corpus", "dev")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("skipping the corpus validation: %s is not there (the shared corpus lives beside the clone; set KUBEDRA_CORPUS_DIR to use another copy)", dir)
	}
	migrateTree(t, dir)
}

func migrateTree(t *testing.T, dir string) {
	if _, err := harness.KubedraBin(); err != nil {
		t.Fatal(err)
	}
	installCRDs(t)
	out := t.TempDir()
	args := []string{"migrate", "--target-version", cluster.Version.TargetVersion(), "--out", out, dir}
	res, err := harness.RunKubedra(context.Background(), nil, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	summary := lastLine(res.Stderr)
	switch res.ExitCode {
	case 0:
	case 1:
		// Exit 1 = some files could not be migrated and were left unchanged
		// (reported); the copy is still written, and that is what is validated.
		t.Logf("kubedra migrate exit 1 (%s); files it left unchanged:\n%s", summary, grepLines(res.Stderr, ": error: "))
	default:
		t.Fatalf("kubedra %s exited %d\nstderr:\n%s", strings.Join(args, " "), res.ExitCode, res.Stderr)
	}
	t.Logf("kubedra migrate: %s", summary)

	v := newValidator(t)
	files, changed := 0, 0
	var unvalidated []string
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		rel, _ := filepath.Rel(out, path)
		outBytes, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		outDocs, skipped := decodeDocs(outBytes)
		if skipped != "" {
			v.skippedFiles = append(v.skippedFiles, rel+": "+skipped)
		}
		if len(outDocs) == 0 {
			return nil
		}
		inBytes, _ := os.ReadFile(filepath.Join(dir, rel))
		inDocs, _ := decodeDocs(inBytes)
		files++
		dryRunBefore := v.notDryRun
		v.stream(t, rel, inDocs, outDocs)
		if !bytes.Equal(inBytes, outBytes) {
			changed++
			if v.notDryRun > dryRunBefore {
				unvalidated = append(unvalidated, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	v.checkClaimRefs(t)
	t.Logf("%d files with Kubernetes objects; %s", files, v.summary())
	t.Logf("%d of the %d files migrate changed hold documents the API server could not dry-run (kinds it does not serve): %s",
		len(unvalidated), changed, strings.Join(unvalidated, ", "))
	if v.dryRun == 0 {
		t.Errorf("no document was dry-run: the migrated copy in %s holds no core/apps/batch/resource.k8s.io objects?", out)
	}
}

// doc is one decoded document with where it came from.
type doc struct {
	obj   *unstructured.Unstructured
	file  string
	index int
}

func (d doc) String() string {
	return fmt.Sprintf("%s (document %d: %s %s)", d.file, d.index, d.obj.GetKind(), d.obj.GetName())
}

// decodeDocs splits a YAML/JSON stream into objects that have apiVersion
// and kind, expanding Lists. skipped says why the rest of the stream could not
// be read (Helm templates, values files), "" when all of it decoded.
func decodeDocs(data []byte) ([]*unstructured.Unstructured, string) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, ""
			}
			return out, fmt.Sprintf("document %d does not decode: %v", i, err)
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			continue
		}
		if u.IsList() {
			l, err := u.ToList()
			if err != nil {
				return out, fmt.Sprintf("document %d: %v", i, err)
			}
			for j := range l.Items {
				out = append(out, &l.Items[j])
			}
			continue
		}
		out = append(out, u)
	}
}

// validator dry-runs documents and collects what the claim cross-check needs.
type validator struct {
	namespaces map[string]bool
	templates  map[string]map[string]bool // ResourceClaimTemplate name -> its request names
	podRefs    []podRef
	dryRun     int // documents dry-run
	notDryRun  int // documents of kinds the server does not serve
	accepted   int // of which the server accepted
	structural int
	inputBad   []string
	other      map[string]int
	// skippedFiles could not be decoded (Helm templates, values files).
	skippedFiles []string
}

type podRef struct {
	d         doc
	templates map[string]string // pod claim name -> template name
	requests  map[string][]string
	had       map[string]bool // pod claim names the input already had
}

func newValidator(t *testing.T) *validator {
	return &validator{namespaces: map[string]bool{}, templates: map[string]map[string]bool{}, other: map[string]int{}}
}

// served reports whether the API server serves the document's kind:
// the built-in groups, and the framework CRDs installCRDs installed.
func served(o *unstructured.Unstructured) bool {
	gvk := o.GroupVersionKind()
	servedMu.Lock()
	defer servedMu.Unlock()
	if ok, seen := servedKinds[gvk]; seen {
		return ok
	}
	_, err := cluster.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	servedKinds[gvk] = err == nil
	return err == nil
}

var (
	servedMu    sync.Mutex
	servedKinds = map[schema.GroupVersionKind]bool{}
)

// stream validates the documents of one migrated file (or stream), with the
// input documents for telling migrate's faults from the input's.
func (v *validator) stream(t *testing.T, file string, in, out []*unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	inputs := map[string]*unstructured.Unstructured{}
	for _, o := range in {
		inputs[key(o)] = o
	}
	for i, o := range out {
		d := doc{obj: o, file: file, index: i}
		v.collect(t, d, inputs[key(o)])
		if !served(o) {
			v.notDryRun++
			v.other[o.GetAPIVersion()+" "+o.GetKind()]++
			v.structural += v.structuralCheck(t, d, inputs[key(o)])
			continue
		}
		if ns := o.GetNamespace(); ns != "" && !v.namespaces[ns] {
			if err := cluster.EnsureNamespace(ctx, ns); err != nil {
				// An invalid name ("FILLED BY THE OPERATOR"): the dry run below
				// then fails for the input as well and is reported as such.
				t.Logf("%s: %v", d, err)
			}
			v.namespaces[ns] = true
		}
		err := dryRun(ctx, o)
		v.dryRun++
		if err == nil {
			v.accepted++
			continue
		}
		orig, ok := inputs[key(o)]
		if ok {
			if inErr := dryRun(ctx, orig); inErr != nil && !mentionsClaims(err.Error(), inErr.Error()) {
				v.inputBad = append(v.inputBad, fmt.Sprintf("%s: %v", d, inErr))
				continue
			}
		}
		what := "a document migrate added"
		if ok {
			what = "the input document is accepted, the migrated one is not"
		}
		t.Errorf("%s rejected by kube-apiserver %s (%s):\n  %v\n%s", d, cluster.Version.Kubernetes, what, err, yamlish(o))
	}
}

// mentionsClaims reports whether the output's rejection is about DRA fields
// that the input's rejection does not mention: then migrate made it worse.
func mentionsClaims(outErr, inErr string) bool {
	for _, s := range []string{"resourceClaims", "claims", "ResourceClaim", "resource.k8s.io"} {
		if strings.Contains(outErr, s) && !strings.Contains(inErr, s) {
			return true
		}
	}
	return false
}

func dryRun(ctx context.Context, o *unstructured.Unstructured) error {
	_, err := cluster.Create(ctx, o, harness.CreateOptions{DryRun: true})
	if apierrors.IsAlreadyExists(err) {
		// Existence is checked after validation and admission: the object was
		// accepted (e.g. a Namespace this suite created for other documents).
		return nil
	}
	return err
}

func key(o *unstructured.Unstructured) string {
	return o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName() + o.GetGenerateName()
}

// collect records claim templates and pod claim references for checkClaimRefs.
// References the input document already had (to claims defined elsewhere)
// are not migrate's and are not checked.
func (v *validator) collect(t *testing.T, d doc, orig *unstructured.Unstructured) {
	o := d.obj
	had := map[string]bool{}
	if orig != nil {
		for _, spec := range podSpecs(orig.Object) {
			rcs, _, _ := unstructured.NestedSlice(spec, "resourceClaims")
			for _, rc := range rcs {
				if m, ok := rc.(map[string]any); ok {
					had[fmt.Sprint(m["name"])] = true
				}
			}
		}
	}
	if o.GetKind() == "ComputeDomain" && strings.HasPrefix(o.GetAPIVersion(), "resource.nvidia.com/") {
		// NVIDIA's ComputeDomain controller makes its channel template.
		if name, _, _ := unstructured.NestedString(o.Object, "spec", "channel", "resourceClaimTemplate", "name"); name != "" {
			v.templates[name] = map[string]bool{}
		}
	}
	if o.GetKind() == "ResourceClaimTemplate" {
		reqs := map[string]bool{}
		list, _, _ := unstructured.NestedSlice(o.Object, "spec", "spec", "devices", "requests")
		for _, r := range list {
			if m, ok := r.(map[string]any); ok {
				if name, ok := m["name"].(string); ok {
					reqs[name] = true
					subs, _, _ := unstructured.NestedSlice(m, "firstAvailable")
					for _, s := range subs {
						if sm, ok := s.(map[string]any); ok {
							reqs[name+"/"+fmt.Sprint(sm["name"])] = true
						}
					}
				}
			}
		}
		v.templates[o.GetName()] = reqs
	}
	for _, spec := range podSpecs(o.Object) {
		ref := podRef{d: d, templates: map[string]string{}, requests: map[string][]string{}, had: had}
		rcs, _, _ := unstructured.NestedSlice(spec, "resourceClaims")
		for _, rc := range rcs {
			if m, ok := rc.(map[string]any); ok {
				tmpl, _ := m["resourceClaimTemplateName"].(string)
				ref.templates[fmt.Sprint(m["name"])] = tmpl
			}
		}
		for _, field := range []string{"initContainers", "containers"} {
			cs, _, _ := unstructured.NestedSlice(spec, field)
			for _, c := range cs {
				cm, _ := c.(map[string]any)
				claims, _, _ := unstructured.NestedSlice(cm, "resources", "claims")
				for _, cl := range claims {
					if m, ok := cl.(map[string]any); ok {
						req, _ := m["request"].(string)
						ref.requests[fmt.Sprint(m["name"])] = append(ref.requests[fmt.Sprint(m["name"])], fmt.Sprintf("%v:%s", cm["name"], req))
					}
				}
			}
		}
		if len(ref.templates) > 0 || len(ref.requests) > 0 {
			v.podRefs = append(v.podRefs, ref)
		}
	}
}

// checkClaimRefs: container claims name pod claims, templates exist in the
// output, and named requests exist in them. (The API server checks the first
// for core kinds only; nothing checks the others before a pod is created.)
func (v *validator) checkClaimRefs(t *testing.T) {
	t.Helper()
	for _, r := range v.podRefs {
		for claim, users := range r.requests {
			if r.had[claim] {
				continue // not added by migrate: may name a claim defined elsewhere
			}
			tmpl, ok := r.templates[claim]
			if !ok {
				t.Errorf("%s: containers %v use claim %q, which the pod spec's resourceClaims do not define", r.d, users, claim)
				continue
			}
			if tmpl == "" {
				continue // resourceClaimName: an existing claim, not ours to check
			}
			reqs, ok := v.templates[tmpl]
			if !ok {
				t.Errorf("%s: claim %q names ResourceClaimTemplate %q, which is not in the migrated output", r.d, claim, tmpl)
				continue
			}
			for _, u := range users {
				req := u[strings.LastIndex(u, ":")+1:]
				if req != "" && !reqs[req] {
					t.Errorf("%s: container %s uses request %q of claim %q, but template %s has requests %v", r.d, u[:strings.LastIndex(u, ":")], req, claim, tmpl, sortedKeys(reqs))
				}
			}
		}
	}
}

// structuralCheck decodes each pod spec embedded in a CRD document strictly
// into a core/v1 PodSpec (unless the input's already fails to). It returns
// the number of pod specs checked.
func (v *validator) structuralCheck(t *testing.T, d doc, orig *unstructured.Unstructured) int {
	t.Helper()
	specs := podSpecs(d.obj.Object)
	var origSpecs []map[string]any
	if orig != nil {
		origSpecs = podSpecs(orig.Object)
	}
	for i, s := range specs {
		err := strictPodSpec(s)
		if err == nil {
			continue
		}
		if i < len(origSpecs) && strictPodSpec(origSpecs[i]) != nil {
			v.inputBad = append(v.inputBad, fmt.Sprintf("%s: embedded pod spec %d: %v (input too)", d, i, err))
			continue
		}
		t.Errorf("%s: embedded pod spec %d is not a valid core/v1 PodSpec after migration: %v", d, i, err)
	}
	return len(specs)
}

func strictPodSpec(m map[string]any) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var spec corev1.PodSpec
	return dec.Decode(&spec)
}

// podSpecs finds pod specs anywhere in an object: maps with a "containers"
// list whose items have a "name" (Pod.spec, templates, and CRD fields such as
// RayCluster workerGroupSpecs[].template.spec).
func podSpecs(v any) []map[string]any {
	var out []map[string]any
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if cs, ok := x["containers"].([]any); ok && len(cs) > 0 {
				if c, ok := cs[0].(map[string]any); ok && c["name"] != nil {
					out = append(out, x)
					return
				}
			}
			keys := sortedKeys(x)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

func (v *validator) summary() string {
	var other []string
	for k, n := range v.other {
		other = append(other, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(other)
	s := fmt.Sprintf("%d documents dry-run on %s, %d accepted; %d embedded pod specs of other kinds checked structurally",
		v.dryRun, cluster.Version.Kubernetes, v.accepted, v.structural)
	if len(other) > 0 {
		s += fmt.Sprintf(" (kinds not dry-run: %s)", strings.Join(other, ", "))
	}
	if len(v.inputBad) > 0 {
		s += fmt.Sprintf("; %d rejected as input already, not migrate's doing:\n  %s", len(v.inputBad), strings.Join(v.inputBad, "\n  "))
	}
	if n := len(v.skippedFiles); n > 0 {
		show := v.skippedFiles
		if n > 5 {
			show = append(show[:5:5], fmt.Sprintf("... and %d more", n-5))
		}
		s += fmt.Sprintf("\n%d files are not plain manifests (Helm templates, invalid YAML) and were read only up to their first undecodable document:\n  %s",
			n, strings.Join(show, "\n  "))
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func grepLines(b []byte, sub string) string {
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) {
			out = append(out, "  "+l)
		}
	}
	return strings.Join(out, "\n")
}

func yamlish(o *unstructured.Unstructured) string {
	b, err := json.MarshalIndent(o.Object, "  ", "  ")
	if err != nil {
		return err.Error()
	}
	if len(b) > 4000 {
		b = append(b[:4000], []byte("\n  ...")...)
	}
	return "  " + string(b)
}
