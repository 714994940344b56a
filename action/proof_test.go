package action_test

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// devicesOf counts, per container of every pod template of a build, the
// devices it gets per family: extended resources and, through its claims,
// the templates' requests (the class's family read off its name's driver
// domain). It is the test's own count, apart from migrate's planner and
// from package proof's comparison.
func devicesOf(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range proof.Pods(kbuild(t, dir)) {
		for _, c := range p.Containers {
			n := map[string]int64{}
			for r, q := range c.Extended {
				n[detect.FamilyOfResource(r)] += q
			}
			for _, d := range c.Devices {
				n[classFamily(d.Class)] += d.Count
			}
			if len(c.Unresolved) > 0 {
				n["unresolved:"+strings.Join(c.Unresolved, ",")]++
			}
			var parts []string
			for _, f := range slices.Sorted(maps.Keys(n)) {
				parts = append(parts, fmt.Sprintf("%s=%d", f, n[f]))
			}
			out[p.Key()+"/"+c.Name] = strings.Join(parts, " ")
		}
	}
	return out
}

func classFamily(class string) string {
	for _, s := range []struct{ suffix, family string }{{".nvidia.com", "nvidia"}, {".amd.com", "amd"}, {"tpu.google.com", "tpu"}, {".intel.com", "intel"}} {
		if strings.HasSuffix(class, s.suffix) {
			if s.family == "intel" {
				return map[string]string{"gaudi.intel.com": "gaudi", "gpu.intel.com": "intel-gpu"}[class]
			}
			return s.family
		}
	}
	return "?" + class
}

// TestProofLLMD: the llm-d guides (testdata/llm-d, vendored) migrated
// whole: every deployable unit builds after as before, no container
// gets other devices than it had (the OCI provider's JSON 6902 patches,
// which add the pods' resourceClaims and the container's claims, now add
// to the lists migrate writes), every unit a change reaches is proved,
// and a second run changes nothing.
func TestProofLLMD(t *testing.T) {
	t.Parallel()
	src := filepath.Join("..", "testdata", "llm-d")
	dir := tempTree(t, src)
	units := topKustomizations(t, dir)
	if len(units) != 13 {
		t.Fatalf("%d units, want the 13 of testdata/llm-d/NOTICE.md", len(units))
	}
	before := map[string]map[string]string{}
	for _, u := range units {
		before[u] = devicesOf(t, u)
	}
	res := migrateTree(t, dir)
	for _, d := range res.Diagnostics {
		if d.Severity == inventory.Error {
			t.Errorf("%s", d.Location()+": "+d.Message)
		}
	}
	proved, asking := 0, 0
	for _, r := range res.Units {
		if r.Status != proof.Proved {
			t.Errorf("unit %s: %s %v %s", r.Unit, r.Status, r.Problems, r.Error)
			continue
		}
		proved++
	}
	for _, u := range units {
		after := devicesOf(t, u)
		if !maps.Equal(before[u], after) {
			t.Errorf("%s: devices per container changed:\nbefore %v\nafter  %v", rel(dir, u), before[u], after)
		}
		for c, d := range before[u] {
			if strings.Contains(d, "nvidia=") || strings.Contains(d, "amd=") || strings.Contains(d, "tpu=") {
				asking++
				if ext := extendedLeft(t, u, c); ext != "" {
					t.Errorf("%s %s: a device-plugin request is left: %s", rel(dir, u), c, ext)
				}
			}
		}
	}
	if proved < 10 || asking < 10 {
		t.Errorf("%d units proved, %d containers asking for devices; want the 10 units with requests", proved, asking)
	}
	if again := migrateTree(t, dir); again.Changed != 0 {
		t.Errorf("second run changed %d files", again.Changed)
	}
}

// extendedLeft is the device-plugin requests a container of a build still has.
func extendedLeft(t *testing.T, dir, key string) string {
	for _, p := range proof.Pods(kbuild(t, dir)) {
		for _, c := range p.Containers {
			if p.Key()+"/"+c.Name == key && len(c.Extended) > 0 {
				return fmt.Sprint(c.Extended)
			}
		}
	}
	return ""
}

// vllmDeployment asks for four GPUs in its container server.
// gpuJob is a Job in namespace ml whose container t asks for n NVIDIA GPUs.
func gpuJob(n int) string {
	return fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: t
        image: t
        resources:
          limits:
            nvidia.com/gpu: %d
`, n)
}

const vllmDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: vllm, namespace: ml}
spec:
  template:
    spec:
      containers:
      - name: server
        image: vllm
        resources:
          limits:
            nvidia.com/gpu: 4
`

// TestProofRefusesUnit: a unit whose JSON 6902 patch replaces the pod's
// resourceClaims (which no append can compose with) would lose its GPUs:
// it is left as it was, byte for byte, with the base it shares, and says
// which container would lose what; a unit apart from it is migrated; the
// run says it failed; the diff shows exactly what -w writes.
func TestProofRefusesUnit(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"base/kustomization.yaml": "resources: [deploy.yaml]\n",
		"base/deploy.yaml":        vllmDeployment,
		"oci/kustomization.yaml": `resources: [../base]
patches:
- target: {kind: Deployment}
  patch: |-
    - op: replace
      path: /spec/template/spec/resourceClaims
      value: [{name: rdma, resourceClaimTemplateName: rdma}]
`,
		"other/kustomization.yaml": "resources: [job.yaml]\n",
		"other/job.yaml":           gpuJob(1),
	}
	for _, mode := range []emit.Mode{emit.Write, emit.Diff} {
		dir := testfs.Tree(t, files)
		var out bytes.Buffer
		res, err := action.Migrate(t.Context(), action.Input{Paths: []string{"."}, Dir: dir},
			action.MigrateOptions{Output: mode, Out: &out, Plan: plan.Options{Target: defaultTarget()}})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"base/deploy.yaml", "oci/kustomization.yaml", "base/kustomization.yaml"} {
			if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != files[name] {
				t.Errorf("%v: %s changed:\n%s", mode, name, b)
			}
		}
		if n, _ := filepath.Glob(filepath.Join(dir, "base", "kubedra-*")); len(n) > 0 {
			t.Errorf("%v: files added to the held base: %v", mode, n)
		}
		var said bool
		for _, d := range res.Diagnostics {
			if d.Rule == proof.RuleProof && d.Severity == inventory.Error && d.File == filepath.Join("oci", "kustomization.yaml") &&
				d.Container == "server" && strings.Contains(d.Message, "before: nvidia.com/gpu: 4; after: no device") {
				said = true
			}
		}
		if !said {
			t.Errorf("%v: no diagnostic names the unit, the container and the GPUs it would lose: %v", mode, res.Diagnostics)
		}
		if res.Failed == 0 || res.Migrated != 1 {
			t.Errorf("%v: failed %d, migrated %d; want a failure and the other unit's Job migrated", mode, res.Failed, res.Migrated)
		}
		job, _ := os.ReadFile(filepath.Join(dir, "other", "job.yaml"))
		switch mode {
		case emit.Write:
			if !strings.Contains(string(job), "resourceClaims") {
				t.Errorf("the unit apart was not migrated:\n%s", job)
			}
		case emit.Diff:
			if d := out.String(); !strings.Contains(d, "+++ b/other/job.yaml") || strings.Contains(d, "base/deploy.yaml") {
				t.Errorf("the diff is not what -w writes:\n%s", d)
			}
		}
	}
}

// TestProofInPlan: --plan proves the units too, lists each with its
// proof, and writes nothing.
func TestProofInPlan(t *testing.T) {
	t.Parallel()
	dir := tempTree(t, filepath.Join("..", "testdata", "llm-d", "wide-ep-lws"))
	was := readTree(t, dir)
	res, err := action.Migrate(t.Context(), action.Input{Paths: []string{"."}, Dir: dir}, action.MigrateOptions{PlanOnly: true, Plan: plan.Options{Target: defaultTarget()}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Plan.Units) != 4 {
		t.Fatalf("plan lists %d units, want the 4 deepseek-v4 deployments: %+v", len(res.Plan.Units), res.Plan.Units)
	}
	for _, u := range res.Plan.Units {
		if u.Status != proof.Proved || u.Devices != 2 {
			t.Errorf("unit %s: %s, %d pod templates with devices", u.Unit, u.Status, u.Devices)
		}
	}
	if now := readTree(t, dir); !maps2Equal(was, now) {
		t.Error("--plan changed files")
	}
}

// TestUnmappedPatchBlocksNothing: a JSON 6902 patch that adds only a
// resource no rule maps (rdma/ib) holds no unit: the base's GPU is
// migrated, the overlay proved, the run does not fail, and the patch is
// said to stay as it is. (Were nvidia.com/gpu the base's only limit,
// migrate would drop the limits map the patch adds into: the proof then
// refuses the overlay, as it no longer builds.)
// rdmaOverlay is an overlay of ../base whose JSON 6902 patch adds rdma/ib
// (which no rule maps) into the first container's limits.
const rdmaOverlay = `resources: [../base]
patches:
- target: {kind: Deployment}
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/resources/limits/rdma~1ib
      value: 1
`

func TestUnmappedPatchBlocksNothing(t *testing.T) {
	t.Parallel()
	dir := testfs.Tree(t, map[string]string{
		"base/kustomization.yaml": "resources: [deploy.yaml]\n",
		"base/deploy.yaml":        strings.Replace(vllmDeployment, "            nvidia.com/gpu: 4\n", "            memory: 64Gi\n            nvidia.com/gpu: 4\n", 1),
		"rdma/kustomization.yaml": rdmaOverlay,
	})
	res := migrateTree(t, dir)
	if res.Failed != 0 || res.Migrated != 1 {
		t.Fatalf("failed %d, migrated %d: %v", res.Failed, res.Migrated, res.Diagnostics)
	}
	if len(res.Units) != 1 || res.Units[0].Status != proof.Proved {
		t.Errorf("units %+v, want the overlay proved", res.Units)
	}
	said := slices.ContainsFunc(res.Diagnostics, func(d inventory.Diagnostic) bool {
		return d.Severity == inventory.Info && d.Resource == "rdma/ib" && strings.Contains(d.Message, "no rule maps")
	})
	if !said {
		t.Errorf("the patch's request is not said to stay: %v", res.Diagnostics)
	}
	build := devicesOf(t, filepath.Join(dir, "rdma"))
	for c, d := range build {
		if d != "=1 nvidia=4" && d != "nvidia=4 =1" {
			t.Errorf("%s gets %s, want its 4 GPUs (claims) and rdma/ib", c, d)
		}
	}
}

// TestPatchOfOffNameKustomization: a patch listed only by a kustomization
// file kustomize does not build from its folder (llm-d's
// tiered-prefix-cache kustomization-gpt-oss-120b.yaml, beside the folder's
// kustomization.yaml) is still a patch: no new object is appended to it,
// it keeps its bytes, and the reason names that kustomization. The folder's
// own unit, with its own patch, is migrated and proved.
func TestPatchOfOffNameKustomization(t *testing.T) {
	t.Parallel()
	patch := func(n int) string {
		return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: vllm
  namespace: ml
spec:
  template:
    spec:
      containers:
      - name: server
        resources:
          limits:
            nvidia.com/gpu: %d
`, n)
	}
	files := map[string]string{
		"base/kustomization.yaml":             "resources: [deploy.yaml]\n",
		"base/deploy.yaml":                    vllmDeployment,
		"gpu/kustomization.yaml":              "resources: [../base]\npatches:\n- path: patch.yaml\n",
		"gpu/patch.yaml":                      patch(2),
		"gpu/kustomization-gpt-oss-120b.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../base]\npatches:\n- path: patch-gpt-oss-120b.yaml\n",
		"gpu/patch-gpt-oss-120b.yaml":         patch(8),
	}
	dir := testfs.Tree(t, files)
	res := migrateTree(t, dir)
	if b, _ := os.ReadFile(filepath.Join(dir, "gpu", "patch-gpt-oss-120b.yaml")); string(b) != files["gpu/patch-gpt-oss-120b.yaml"] {
		t.Errorf("the off-name kustomization's patch changed:\n%s", b)
	}
	said := slices.ContainsFunc(res.Diagnostics, func(d inventory.Diagnostic) bool {
		return d.File == filepath.Join("gpu", "patch-gpt-oss-120b.yaml") && d.Resource == "nvidia.com/gpu" &&
			strings.Contains(d.Message, "kustomization-gpt-oss-120b.yaml")
	})
	if !said {
		t.Errorf("no diagnostic says why the patch stays: %v", res.Diagnostics)
	}
	if len(res.Units) != 1 || res.Units[0].Status != proof.Proved {
		t.Errorf("units %+v, want gpu proved", res.Units)
	}
	for c, d := range devicesOf(t, filepath.Join(dir, "gpu")) {
		if d != "nvidia=2" {
			t.Errorf("%s gets %s, want the patch's 2 GPUs", c, d)
		}
	}
}

// TestProofInMemory: what migrate gives for documents in memory (a KRM
// function's items, a Helm post-renderer's render) is proved like a unit:
// a rules file that maps nvidia.com/gpu to another vendor's class would
// take the pod's GPUs away, so the documents come back as they were, with
// an error naming the container and the run counts a failure. The
// built-in rules prove.
func TestProofInMemory(t *testing.T) {
	t.Parallel()
	wrong := wrongRules(t)
	for _, tc := range []struct {
		name  string
		rules *rules.Set
		proof bool
	}{{"built-in rules", nil, true}, {"a rule mapping to another vendor", wrong, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			docs := files.Parse("in.yaml", []byte(vllmDeployment)).Docs
			res, err := action.Migrate(t.Context(), action.Input{Documents: docs}, action.MigrateOptions{Rules: tc.rules, Plan: plan.Options{Target: defaultTarget()}})
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			for _, d := range res.Documents {
				out.WriteString(d.MustString() + "---\n")
			}
			migrated := strings.Contains(out.String(), "resourceClaims")
			said := slices.ContainsFunc(res.Diagnostics, func(d inventory.Diagnostic) bool {
				return d.Rule == proof.RuleProof && d.Severity == inventory.Error && d.Container == "server" && strings.Contains(d.Message, "before: nvidia.com/gpu: 4; after: no device")
			})
			if migrated != tc.proof || said == tc.proof || (res.Failed > 0) == tc.proof {
				t.Errorf("migrated %v, said %v, failed %d; want the migration kept only when it proves:\n%s\n%v", migrated, said, res.Failed, out.String(), res.Diagnostics)
			}
		})
	}
}

// TestPatchAddsIntoEmptiedMap: an overlay's JSON 6902 patch adds rdma/ib
// into the limits of a base whose only limit is the GPU migrate moves to a
// claim: migrate keeps the emptied map (limits: {}), so that the add still
// has its parent and the overlay builds; the base is migrated and the
// overlay proved, with its GPUs and rdma/ib.
func TestPatchAddsIntoEmptiedMap(t *testing.T) {
	t.Parallel()
	dir := testfs.Tree(t, map[string]string{
		"base/kustomization.yaml": "resources: [deploy.yaml]\n",
		"base/deploy.yaml":        vllmDeployment,
		"rdma/kustomization.yaml": rdmaOverlay,
	})
	res := migrateTree(t, dir)
	if res.Failed != 0 || res.Migrated != 1 || len(res.Units) != 1 || res.Units[0].Status != proof.Proved {
		t.Fatalf("failed %d, migrated %d, units %+v: %v", res.Failed, res.Migrated, res.Units, res.Diagnostics)
	}
	for c, d := range devicesOf(t, filepath.Join(dir, "rdma")) {
		if d != "=1 nvidia=4" && d != "nvidia=4 =1" {
			t.Errorf("%s gets %s, want its 4 GPUs (claims) and rdma/ib", c, d)
		}
	}
	if again := migrateTree(t, dir); again.Changed != 0 || again.Failed != 0 {
		t.Errorf("a second run changed %d files, failed %d: %v", again.Changed, again.Failed, again.Diagnostics)
	}
}

// wrongRules map nvidia.com/gpu to AMD's class: a migration with them
// would take a pod's NVIDIA GPUs away.
func wrongRules(t *testing.T) *rules.Set {
	t.Helper()
	set, err := rules.LoadBytes("wrong.yaml", []byte("apiVersion: kubedra.dev/v1alpha1\nkind: Rules\nrules:\n- id: nvidia-to-amd\n  resource: nvidia.com/gpu\n  driver: gpu.amd.com\n  deviceClass: gpu.amd.com\n"))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestProofPlainFiles: a file no kustomize unit covers is proved batch by
// batch before it is written: with rules that would take the GPUs away,
// the file keeps its bytes (in -w and in the diff), each container says
// why, and the run fails; the other files are migrated.
func TestProofPlainFiles(t *testing.T) {
	t.Parallel()
	files := map[string]string{"a/deploy.yaml": vllmDeployment, "b/job.yaml": strings.Replace(gpuJob(2), "nvidia.com/gpu", "amd.com/gpu", 1)}
	for _, mode := range []emit.Mode{emit.Write, emit.Diff} {
		dir := testfs.Tree(t, files)
		var out bytes.Buffer
		res, err := action.Migrate(t.Context(), action.Input{Paths: []string{"."}, Dir: dir},
			action.MigrateOptions{Output: mode, Out: &out, Rules: wrongRules(t), Plan: plan.Options{Target: defaultTarget()}})
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a", "deploy.yaml")); string(b) != vllmDeployment {
			t.Errorf("%v: the file whose migration fails the proof changed:\n%s", mode, b)
		}
		said := slices.ContainsFunc(res.Diagnostics, func(d inventory.Diagnostic) bool {
			return d.Rule == proof.RuleProof && d.File == filepath.Join("a", "deploy.yaml") && d.Container == "server" && strings.Contains(d.Message, "before: nvidia.com/gpu: 4; after: no device")
		})
		if !said || res.Failed == 0 || res.Migrated != 1 {
			t.Errorf("%v: said %v, failed %d, migrated %d: %v", mode, said, res.Failed, res.Migrated, res.Diagnostics)
		}
		if mode == emit.Diff && (strings.Contains(out.String(), "a/deploy.yaml") || !strings.Contains(out.String(), "b/job.yaml")) {
			t.Errorf("the diff is not what -w writes:\n%s", out.String())
		}
	}
}
