package kustomize

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory/detect"
)

const smp = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"

// TestFindRoles: every way a kustomization lists a file gets its role, a
// base two overlays list is shared, and remote resources are left out.
func TestFindRoles(t *testing.T) {
	root := t.TempDir()
	testfs.Write(t, root, map[string]string{
		"base/kustomization.yaml": "resources:\n- web.yaml\n",
		"base/web.yaml":           smp,
		"comp/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- path: gpu.yaml\n",
		"comp/gpu.yaml":           smp,
		"a/kustomization.yaml": "resources:\n- ../base\n- https://example.com/x.yaml\ncomponents:\n- ../comp\n" +
			"patches:\n- path: p.yaml\n- path: ops.yaml\n  target: {kind: Deployment}\n- patch: |-\n    - op: add\n      path: /spec/replicas\n      value: 2\n  target: {kind: Deployment}\n" +
			"patchesStrategicMerge:\n- old.yaml\npatchesJson6902:\n- path: ops6902.yaml\n  target: {version: v1, kind: Deployment, name: web}\n",
		"a/p.yaml":                smp,
		"a/old.yaml":              smp,
		"a/ops.yaml":              "# ops\n- op: replace\n  path: /spec/replicas\n  value: 3\n",
		"a/ops6902.yaml":          "[{\"op\": \"remove\", \"path\": \"/spec/paused\"}]\n",
		"b/Kustomization":         "resources:\n- ../base\nnamePrefix: b-\nnamespace: nb\n",
		".git/kustomization.yaml": "resources: [nothing.yaml]\n",
	})
	tree, diags := Find([]string{root}, func(p string) string { return p })
	if len(diags) != 0 {
		t.Fatalf("diagnostics: %v", diags)
	}
	if len(tree.Kustomizations) != 4 {
		t.Fatalf("found %v, want base, comp, a and b (not .git)", tree.Ordered())
	}
	a := tree.Kustomizations[filepath.Join(root, "a", "kustomization.yaml")]
	got := map[string]Role{}
	inline := 0
	for _, u := range a.Uses {
		if u.Path == "" {
			inline++
			if u.Role != JSON6902 || u.Line != 10 {
				t.Errorf("inline patch: %v at line %d, want %s at 10", u.Role, u.Line, JSON6902)
			}
			continue
		}
		r, _ := filepath.Rel(root, u.Path)
		got[r] = u.Role
	}
	want := map[string]Role{
		"base/kustomization.yaml": Base, "comp/kustomization.yaml": Component,
		"a/p.yaml": StrategicMerge, "a/old.yaml": StrategicMerge, "a/ops.yaml": JSON6902, "a/ops6902.yaml": JSON6902,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: role %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) || inline != 1 {
		t.Errorf("uses %v (+%d inline), want %v (+1): the remote resource is not a use", got, inline, want)
	}
	if !tree.Kustomizations[filepath.Join(root, "comp", "kustomization.yaml")].Component {
		t.Error("comp is not a Component")
	}
	b := tree.Kustomizations[filepath.Join(root, "b", "Kustomization")]
	if b.NamePrefix != "b-" || b.Namespace != "nb" {
		t.Errorf("b: %+v", b)
	}
	if s := tree.Shared(); !slices.Equal(s, []string{filepath.Join(root, "base", "kustomization.yaml")}) {
		t.Errorf("shared: %v, want the base", s)
	}
	if k := tree.PatchOf(filepath.Join(root, "comp", "gpu.yaml")); k != filepath.Join(root, "comp", "kustomization.yaml") {
		t.Errorf("the component's patch belongs to %q, want the component", k)
	}
	if k := tree.PatchOf(filepath.Join(root, "base", "web.yaml")); k != "" {
		t.Errorf("a resource is a patch of %q", k)
	}
	if len(tree.Held()) != 0 {
		t.Errorf("held %v: no patch sets devices", tree.Held())
	}
}

// TestJSONPatchesThatSetDevices: operations adding, replacing or removing
// an extended resource (in the path, or in the value under limits or
// requests) are errors at their line; the kustomizations that reach them
// and every kustomization sharing a base with them are held.
func TestJSONPatchesThatSetDevices(t *testing.T) {
	root := t.TempDir()
	testfs.Write(t, root, map[string]string{
		"base/kustomization.yaml":  "resources:\n- w.yaml\n",
		"base/w.yaml":              smp,
		"other/kustomization.yaml": "resources:\n- o.yaml\n",
		"other/o.yaml":             smp,
		"bad/kustomization.yaml":   "resources:\n- ../base\npatches:\n- path: ops.yaml\n  target: {kind: Deployment}\n",
		"bad/ops.yaml": "- op: replace\n  path: /spec/replicas\n  value: 1\n" +
			"- op: add\n  path: /spec/template/spec/containers/0/resources\n  value:\n    limits:\n      amd.com/gpu: 1\n" +
			"- op: remove\n  path: /spec/template/spec/containers/1/resources/requests/nvidia.com~1gpu\n" +
			"- op: add\n  path: /spec/template/spec/nodeSelector\n  value: {nvidia.com/gpu.present: \"true\"}\n",
		"sibling/kustomization.yaml": "resources:\n- ../base\n",
		"inline/kustomization.yaml":  "resources:\n- ../other\npatches:\n- target: {kind: Deployment}\n  patch: |\n    spec:\n      template:\n        spec:\n          containers:\n          - name: a\n            resources: {limits: {nvidia.com/gpu: 1}}\n",
	})
	tree, diags := Find([]string{root}, func(p string) string { return p })
	type at struct {
		file     string
		line     int
		resource string
	}
	var got []at
	for _, d := range diags {
		if d.Rule != RulePatch {
			t.Errorf("unexpected %v", d)
			continue
		}
		r, _ := filepath.Rel(root, d.File)
		got = append(got, at{r, d.Line, d.Resource})
	}
	want := []at{{"bad/ops.yaml", 4, "amd.com/gpu"}, {"bad/ops.yaml", 9, "nvidia.com/gpu"}, {"inline/kustomization.yaml", 4, "nvidia.com/gpu"}}
	if !slices.Equal(got, want) {
		t.Errorf("diagnostics at %v, want %v", got, want)
	}
	held := tree.Held()
	for _, f := range []string{"bad/ops.yaml", "base/w.yaml", "base/kustomization.yaml", "sibling/kustomization.yaml", "inline/kustomization.yaml", "other/o.yaml"} {
		if _, ok := held[filepath.Join(root, f)]; !ok {
			t.Errorf("%s is not held", f)
		}
	}
	if len(held) != 8 {
		t.Errorf("held %d files, want 8: %v", len(held), held)
	}
	// The reason named is the kustomization with the patch, also for the
	// overlay held only because it shares the base.
	if c := held[filepath.Join(root, "sibling", "kustomization.yaml")]; c != filepath.Join(root, "bad", "kustomization.yaml") {
		t.Errorf("sibling held because of %q, want bad/kustomization.yaml", c)
	}
}

// TestFindFromAFile: a patch given alone is still known as a patch, from
// the kustomization beside it.
func TestFindFromAFile(t *testing.T) {
	root := t.TempDir()
	testfs.Write(t, root, map[string]string{"o/kustomization.yaml": "resources: [../b]\npatches:\n- path: p.yaml\n", "o/p.yaml": smp})
	p := filepath.Join(root, "o", "p.yaml")
	tree, _ := Find([]string{p}, func(p string) string { return p })
	if k := tree.PatchOf(p); k != filepath.Join(root, "o", "kustomization.yaml") {
		t.Errorf("PatchOf = %q", k)
	}
}

// TestCheckPatches: a strategic-merge patch is exact only when it sets the
// devices of every container of the base pod that has some (kustomize
// replaces resourceClaims instead of merging it).
func TestCheckPatches(t *testing.T) {
	dep := func(containers ...string) string {
		s := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n"
		for _, c := range containers {
			s += "      - name: " + c + "\n        resources:\n          limits:\n            nvidia.com/gpu: 1\n"
		}
		return s
	}
	for _, c := range []struct {
		name       string
		base, ptch []string
		bad        bool
	}{
		{"same container", []string{"a"}, []string{"a"}, false},
		{"base without devices", nil, []string{"a"}, false},
		{"other container of the base", []string{"a"}, []string{"b"}, true},
		{"one of two", []string{"a", "b"}, []string{"a"}, true},
		{"both", []string{"a", "b"}, []string{"b", "a"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			base := dep(c.base...)
			if len(c.base) == 0 {
				base = smp
			}
			testfs.Write(t, root, map[string]string{
				"base/kustomization.yaml": "resources: [web.yaml]\n", "base/web.yaml": base,
				"o/kustomization.yaml": "resources: [../base]\npatches:\n- path: p.yaml\n", "o/p.yaml": dep(c.ptch...),
			})
			tree, _ := Find([]string{root}, func(p string) string { return p })
			diags := tree.CheckPatches(func(p string) string { return p }, detect.Options{})
			if bad := len(diags) > 0; bad != c.bad {
				t.Fatalf("diagnostics %v, want bad=%v", diags, c.bad)
			}
			if c.bad {
				if d := diags[0]; d.Rule != RulePatch || d.File != filepath.Join(root, "o", "p.yaml") || d.Line != 12 {
					t.Errorf("diagnostic %+v: want %s at o/p.yaml:12 (the request)", d, RulePatch)
				}
				if _, ok := tree.Held()[filepath.Join(root, "base", "web.yaml")]; !ok {
					t.Error("the base is not held")
				}
			}
		})
	}
}

// TestJSONPatchVerbs: a JSON 6902 operation on a device resource is said
// as what it does: a remove removes it, it does not set it.
func TestJSONPatchVerbs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(`resources: [d.yaml]
patches:
- target: {kind: Deployment}
  patch: |-
    - op: remove
      path: /spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu
    - op: replace
      path: /spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu
      value: 2
`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, diags := Find([]string{dir}, func(p string) string { return p })
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.Message)
	}
	if len(msgs) != 2 || !strings.Contains(msgs[0], `"remove" on /spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu removes nvidia.com/gpu`) ||
		!strings.Contains(msgs[1], "sets nvidia.com/gpu") {
		t.Errorf("messages %q", msgs)
	}
}
