package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/config"
	"github.com/kubedra/kubedra/internal/golden"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/rules"
)

func readFacts(t *testing.T, file string) *Facts {
	t.Helper()
	return readFactsAt(t, filepath.Join("testdata", file))
}

func readFactsAt(t *testing.T, file string) *Facts {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cf, err := cluster.ReadDump(f, Scope)
	if err != nil {
		t.Fatal(err)
	}
	facts, err := NewFacts(cf, "dump "+filepath.Base(file))
	if err != nil {
		t.Fatal(err)
	}
	return facts
}

func mustDriver(t *testing.T, name string) Driver {
	t.Helper()
	d, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// flatten renders a tree as one reviewable text: each file under a header.
func flatten(t Tree) []byte {
	var b strings.Builder
	for _, p := range t.Paths() {
		b.WriteString("=== " + p + " ===\n")
		b.Write(t[p])
		if !strings.HasSuffix(string(t[p]), "\n") {
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}

func TestCatalogue(t *testing.T) {
	all, err := Catalogue()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range all {
		names = append(names, d.Name)
		if d.Release.URL == "" {
			t.Errorf("%s: no release URL", d.Name)
		}
		if d.Install.Manifests != nil {
			if _, err := d.manifests(); err != nil {
				t.Errorf("%s: %v", d.Name, err)
			}
		}
	}
	want := []string{"amd", "efa", "example", "intel-gaudi", "intel-gpu", "neuron", "nvidia"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("drivers (-want +got):\n%s", diff)
	}
	nv := mustDriver(t, "nvidia")
	if nv.Install.Helm.Values["gpuResourcesEnabledOverride"] != true {
		t.Errorf("nvidia values lack gpuResourcesEnabledOverride=true: %v", nv.Install.Helm.Values)
	}
}

// The catalogue's classes are those of every driver, in catalogue order,
// with the extended resource a class declares, and the TPU reference
// class last.
func TestCatalogueClasses(t *testing.T) {
	classes, err := CatalogueClasses()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	var names []string
	for _, c := range classes {
		names = append(names, c.Name)
		if len(c.Spec.Selectors) != 1 || c.Spec.Selectors[0].CEL == nil || c.Spec.Selectors[0].CEL.Expression == "" {
			t.Errorf("%s: selectors %+v", c.Name, c.Spec.Selectors)
		}
		if c.Spec.ExtendedResourceName != nil {
			got[c.Name] = *c.Spec.ExtendedResourceName
		}
	}
	want := []string{"gpu.amd.com", "efa.networking.k8s.aws", "gpu.example.com", "gaudi.intel.com", "gpu.intel.com", "neuron.aws.com",
		"gpu.nvidia.com", "mig.nvidia.com", "tpu.google.com"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"gpu.amd.com": "amd.com/gpu", "gpu.nvidia.com": "nvidia.com/gpu"}, got); diff != "" {
		t.Errorf("extended resources (-want +got):\n%s", diff)
	}
}

func TestLookupUnknown(t *testing.T) {
	_, err := Lookup("nvidai")
	var ue *UnknownDriverError
	if !errors.As(err, &ue) {
		t.Fatalf("want UnknownDriverError, got %v", err)
	}
	if !strings.Contains(err.Error(), "amd, efa, example, intel-gaudi, intel-gpu, neuron, nvidia") {
		t.Errorf("error does not list the valid drivers: %v", err)
	}
}

func TestGenerateGolden(t *testing.T) {
	tests := []struct {
		name     string
		driver   string
		facts    string
		pools    []string
		label    string
		target   string
		strategy Strategy
	}{
		{name: "example-claims", driver: "example", facts: "example-cluster.yaml", target: "1.34", strategy: StrategyClaims},
		{name: "example-extended", driver: "example", facts: "example-cluster.yaml", pools: []string{"gpu-b"}, target: "1.36", strategy: StrategyExtendedResource},
		{name: "nvidia-defaults", driver: "nvidia", target: "1.34", strategy: StrategyClaims},
		{name: "nvidia-cluster", driver: "nvidia", facts: "nvidia-cluster.yaml", target: "1.37", strategy: StrategyExtendedResource},
		{name: "neuron-defaults-pools", driver: "neuron", pools: []string{"trn2-a", "trn2-b"}, label: "eks.amazonaws.com/nodegroup", target: "1.36", strategy: StrategyExtendedResource},
		{name: "amd-defaults-133", driver: "amd", target: "1.33", strategy: StrategyClaims},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := rules.ParseVersion(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Driver: mustDriver(t, tt.driver), Pools: tt.pools, PoolLabel: tt.label, Target: v, Strategy: tt.strategy, Out: "cutover"}
			if tt.facts != "" {
				opts.Facts = readFacts(t, tt.facts)
			}
			res, err := Generate(opts)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "golden", tt.name+".txt"), flatten(res.Tree))
			buildKustomizations(t, res.Tree)
			for _, w := range res.Warnings {
				if !strings.HasPrefix(w.Rule, "bundle/") || w.Severity != inventory.Warning {
					t.Errorf("a warning without its bundle rule: %+v", w)
				}
			}
		})
	}
}

// buildKustomizations runs kustomize (krusty) on every kustomization in the
// tree, so `kubectl apply -k` can read them.
func buildKustomizations(t *testing.T, tree Tree) {
	t.Helper()
	fs := filesys.MakeFsInMemory()
	for _, p := range tree.Paths() {
		if err := fs.WriteFile("/b/"+p, tree[p]); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range tree.Paths() {
		if filepath.Base(p) != "kustomization.yaml" {
			continue
		}
		dir := "/b/" + filepath.Dir(p)
		m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
		if err != nil {
			t.Errorf("kustomize build %s: %v", p, err)
			continue
		}
		if len(m.Resources()) == 0 {
			t.Errorf("kustomize build %s: no resources", p)
		}
	}
}

func TestGenerateProblems(t *testing.T) {
	v134, v136 := rules.Version{Major: 1, Minor: 34}, rules.Version{Major: 1, Minor: 36}
	owned := func(f *Facts) {
		f.DaemonSets[0].OwnerReferences = []metav1OwnerRef{{APIVersion: "amd.com/v1alpha1", Kind: "DeviceConfig", Name: "gpu-operator", Controller: ptr(true)}}
	}
	addon := func(f *Facts) {
		f.DaemonSets[0].Labels = map[string]string{"addonmanager.kubernetes.io/mode": "Reconcile"}
	}
	baked := func(f *Facts) { f.DaemonSets[0].Spec.Template.Spec.NodeSelector["example.com/gpu.present"] = "false" }
	autoMode := func(f *Facts) { f.Nodes[2].Labels["eks.amazonaws.com/compute-type"] = "auto" }
	tests := []struct {
		name   string
		driver string
		facts  string
		mutate func(*Facts)
		pools  []string
		target rules.Version
		strat  Strategy
		rule   string
		want   string
	}{
		{name: "pool matches no node", driver: "example", facts: "example-cluster.yaml", pools: []string{"gpu-z"}, target: v134, rule: RulePools, want: `pool "gpu-z" matches no node (eks.amazonaws.com/nodegroup=gpu-z); known pools: cpu, gpu-a, gpu-b`},
		{name: "extended resource before 1.36", driver: "example", facts: "example-cluster.yaml", target: v134, strat: StrategyExtendedResource, rule: RuleStrategy, want: "--strategy extended-resource needs --target-version 1.36 or later"},
		{name: "no mapping", driver: "efa", target: v136, strat: "sideways", rule: RuleStrategy, want: `unknown strategy "sideways"`},
		{name: "operator owned", driver: "example", facts: "example-cluster.yaml", mutate: owned, target: v134, rule: RuleUnsafe, want: "is controlled by DeviceConfig gpu-operator (amd.com/v1alpha1), which would revert a patch"},
		{name: "managed add-on", driver: "example", facts: "example-cluster.yaml", mutate: addon, target: v134, rule: RuleUnsafe, want: "is a managed add-on (addonmanager.kubernetes.io/mode=Reconcile)"},
		{name: "plugin outside kubernetes", driver: "example", facts: "example-cluster.yaml", mutate: baked, target: v134, rule: RuleUnsafe, want: "node(s) gpu-a-1, gpu-a-2, gpu-b-1 advertise example.com/gpu but no example device-plugin DaemonSet can run there"},
		{name: "eks auto mode", driver: "example", facts: "example-cluster.yaml", mutate: autoMode, target: v134, rule: RuleUnsafe, want: "EKS Auto Mode node(s) gpu-b-1"},
		{name: "pools without label", driver: "nvidia", pools: []string{"a"}, target: v134, rule: RulePools, want: "--pools without cluster facts needs --pool-label"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := Options{Driver: mustDriver(t, tt.driver), Pools: tt.pools, Target: tt.target, Strategy: tt.strat}
			if tt.facts != "" {
				opts.Facts = readFacts(t, tt.facts)
				if tt.mutate != nil {
					tt.mutate(opts.Facts)
				}
			}
			_, err := Generate(opts)
			var de *inventory.DiagnosticsError
			if !errors.As(err, &de) {
				t.Fatalf("want a DiagnosticsError, got %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if !slices.ContainsFunc(de.Diagnostics, func(d inventory.Diagnostic) bool {
				return d.Rule == tt.rule && d.Severity == inventory.Error && strings.Contains(d.Message, tt.want)
			}) {
				t.Errorf("no %s error says %q: %+v", tt.rule, tt.want, de.Diagnostics)
			}
		})
	}
}

// TestUnread: what could not be read is never taken for "none": unseen
// nodes or DaemonSets make the bundle unsafe, unseen quotas a warning.
func TestUnread(t *testing.T) {
	for _, tt := range []struct {
		resource string
		wantErr  bool
	}{{"daemonsets.apps", true}, {"nodes", true}, {"resourcequotas", false}} {
		t.Run(tt.resource, func(t *testing.T) {
			facts := readFacts(t, "example-cluster.yaml")
			facts.Unread = inventory.Diagnostics{cluster.Problem(tt.resource, "forbidden")}
			res, err := Generate(Options{Driver: mustDriver(t, "example"), Target: rules.Version{Major: 1, Minor: 34}, Facts: facts})
			want := "could not read " + tt.resource + ": forbidden in dump example-cluster.yaml"
			if tt.wantErr {
				var de *inventory.DiagnosticsError
				if !errors.As(err, &de) || !strings.Contains(err.Error(), want) || de.Diagnostics[0].Rule != RuleUnread {
					t.Fatalf("want a DiagnosticsError with %q (%s), got %v", want, RuleUnread, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(res.Warnings, func(d inventory.Diagnostic) bool {
				return d.Severity == inventory.Warning && d.Rule == RuleUnread && strings.Contains(d.Message, want)
			}) {
				t.Errorf("warnings %+v lack %q", res.Warnings, want)
			}
		})
	}
}

// NewFacts keeps a kubectl dump's missing types out of Unread, and takes
// only bundle's resource types.
func TestNewFacts(t *testing.T) {
	cf, err := cluster.ReadDump(strings.NewReader(`{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": 1}}]}`), Scope)
	if err != nil {
		t.Fatalf("a pod (even a broken one) is outside bundle's scope: %v", err)
	}
	facts, err := NewFacts(cf, "dump")
	if err != nil {
		t.Fatal(err)
	}
	if len(facts.Unread) != 0 || len(facts.Nodes) != 1 || len(facts.DaemonSets) != 0 {
		t.Errorf("unread %v, nodes %d, DaemonSets %d", facts.Unread, len(facts.Nodes), len(facts.DaemonSets))
	}
	if _, err := NewFacts(&cluster.Facts{}, "x"); err == nil {
		t.Error("facts read without objects: want an error")
	}
}

// TestGKEManagedPlugin: the GKE-managed plugin is excluded by its node-pool
// label when its affinity honours it, and is an error when it does not.
func TestGKEManagedPlugin(t *testing.T) {
	gke := func(honours bool) *Facts {
		ds := appsv1.DaemonSet{}
		ds.Namespace, ds.Name = "kube-system", "nvidia-gpu-device-plugin"
		ds.Labels = map[string]string{"addonmanager.kubernetes.io/mode": "Reconcile", "k8s-app": "nvidia-gpu-device-plugin"}
		ds.Spec.Template.Labels = map[string]string{"k8s-app": "nvidia-gpu-device-plugin"}
		term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cloud.google.com/gke-accelerator", Operator: corev1.NodeSelectorOpExists}}}
		if honours {
			term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{Key: "gke-no-default-nvidia-gpu-device-plugin", Operator: corev1.NodeSelectorOpDoesNotExist})
		}
		ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{term}}}}
		n := corev1.Node{}
		n.Name = "gke-gpu-1"
		n.Labels = map[string]string{"cloud.google.com/gke-nodepool": "gpu", "cloud.google.com/gke-accelerator": "nvidia-l4"}
		return &Facts{Source: "test", Nodes: []corev1.Node{n}, DaemonSets: []appsv1.DaemonSet{ds}}
	}
	res, err := Generate(Options{Driver: mustDriver(t, "nvidia"), Target: rules.Version{Major: 1, Minor: 34}, Facts: gke(true)})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Manifest.NodeLabels["gke-no-default-nvidia-gpu-device-plugin"]; got != "true" {
		t.Errorf("node labels %v lack the GKE opt-out label", res.Manifest.NodeLabels)
	}
	if _, ok := res.Tree["phase-1/kustomization.yaml"]; ok {
		t.Errorf("phase 1 patches a managed add-on")
	}
	_, err = Generate(Options{Driver: mustDriver(t, "nvidia"), Target: rules.Version{Major: 1, Minor: 34}, Facts: gke(false)})
	if err == nil || !strings.Contains(err.Error(), "cannot be excluded") {
		t.Errorf("want a cannot-be-excluded error, got %v", err)
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	tree := Tree{"a.txt": []byte("1"), "sub/b.txt": []byte("2")}
	if err := Write(dir, tree, false); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, Tree{"c.txt": []byte("3")}, false); !errors.Is(err, ErrNotEmpty) {
		t.Fatalf("want ErrNotEmpty, got %v", err)
	}
	if err := Write(dir, Tree{"c.txt": []byte("3")}, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); !os.IsNotExist(err) {
		t.Errorf("--force kept a stale file: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("temporary folders left behind: %v", entries)
	}
	if err := Write(t.TempDir(), tree, false); err != nil {
		t.Errorf("an empty existing folder is fine: %v", err)
	}
}

// applyPhase1 applies the bundle's phase-1 configurations to the facts the
// way server-side apply does for the fields they set.
func applyPhase1(t *testing.T, tree Tree, f *Facts, dir string) {
	t.Helper()
	for i := range f.DaemonSets {
		ds := &f.DaemonSets[i]
		b, ok := tree[dir+"/"+ds.Namespace+"."+ds.Name+".yaml"]
		if !ok {
			continue
		}
		var patch appsv1.DaemonSet
		if err := yaml.Unmarshal(b, &patch); err != nil {
			t.Fatal(err)
		}
		ds.Spec.Template.Spec.Affinity = patch.Spec.Template.Spec.Affinity
	}
}

func TestVerify(t *testing.T) {
	d := mustDriver(t, "example")
	facts := readFacts(t, "example-cluster.yaml")
	res, err := Generate(Options{Driver: d, Target: rules.Version{Major: 1, Minor: 34}, Facts: facts})
	if err != nil {
		t.Fatal(err)
	}
	m := &res.Manifest

	// Before phase 1, labelling a node would put the driver next to the plugin.
	r := Verify(m, d, readFacts(t, "example-cluster.yaml"))
	if len(r.Conflicts) == 0 || r.Conflicts[0].State != StateDRA {
		t.Fatalf("unpatched plugin: want conflicts in the labelled state, got %+v", r.Conflicts)
	}
	if !r.DriverFromBundle {
		t.Errorf("no driver installed: the bundle's selector should stand in")
	}

	// After phase 1 and 2 and a labelled pool: no conflict.
	after := readFacts(t, "example-cluster.yaml")
	applyPhase1(t, res.Tree, after, "phase-1")
	var drv appsv1.DaemonSet
	docs := strings.Split(string(res.Tree["phase-2/driver.yaml"]), "\n---\n")
	if err := yaml.Unmarshal([]byte(docs[len(docs)-1]), &drv); err != nil || drv.Kind != "DaemonSet" {
		t.Fatalf("last document of driver.yaml is not the DaemonSet: %v", err)
	}
	after.DaemonSets = append(after.DaemonSets, drv)
	for i := range after.Nodes {
		if after.Nodes[i].Labels["eks.amazonaws.com/nodegroup"] == "gpu-a" {
			after.Nodes[i].Labels[ModeLabel] = ModeDRA
		}
	}
	r = Verify(m, d, after)
	if len(r.Conflicts) != 0 || r.DriverFromBundle {
		t.Fatalf("after the cutover: want no conflict and the real driver, got %+v", r)
	}
	want := map[string][2]int{"gpu-a-1": {0, 1}, "gpu-a-2": {0, 1}, "gpu-b-1": {1, 0}, "cpu-1": {0, 0}}
	for _, p := range r.Placements {
		if got := [2]int{len(p.Plugins), len(p.Drivers)}; got != want[p.Node] {
			t.Errorf("%s: plugins/drivers = %v, want %v", p.Node, got, want[p.Node])
		}
	}

	// A driver DaemonSet without the bundle's selector conflicts now.
	after.DaemonSets[len(after.DaemonSets)-1].Spec.Template.Spec.NodeSelector = nil
	r = Verify(m, d, after)
	if !hasConflict(r, "gpu-b-1", StateNow) {
		t.Errorf("unrestricted driver: want a conflict on gpu-b-1 now, got %+v", r.Conflicts)
	}

	// Rollback of phase 1 restores the plugin's original placement.
	back := readFacts(t, "example-cluster.yaml")
	applyPhase1(t, res.Tree, back, "phase-1")
	applyPhase1(t, res.Tree, back, "rollback/phase-1")
	orig := readFacts(t, "example-cluster.yaml")
	if diff := cmp.Diff(orig.DaemonSets[0].Spec.Template.Spec, back.DaemonSets[0].Spec.Template.Spec); diff != "" {
		t.Errorf("rollback (-orig +after):\n%s", diff)
	}
}

func hasConflict(r *Report, node string, st State) bool {
	for _, c := range r.Conflicts {
		if c.Node == node && c.State == st {
			return true
		}
	}
	return false
}

func TestExcludeEveryTerm(t *testing.T) {
	orig := &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{
		{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "a", Operator: corev1.NodeSelectorOpExists}}},
		{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}},
	}}
	got := exclude(orig)
	for i, term := range got.NodeSelectorTerms {
		last := term.MatchExpressions[len(term.MatchExpressions)-1]
		if last.Key != ModeLabel || last.Operator != corev1.NodeSelectorOpNotIn {
			t.Errorf("term %d lacks the exclusion: %+v", i, term)
		}
	}
	if again := exclude(got); !cmp.Equal(again, got) {
		t.Errorf("exclude is not idempotent:\n%s", cmp.Diff(got, again))
	}
	if len(orig.NodeSelectorTerms[0].MatchExpressions) != 1 {
		t.Errorf("exclude mutated its input")
	}
}

// TestVerifyTaintedBeforeInstall: before the driver exists, its stand-in
// tolerates every taint, so a tainted GPU node with an unpatched plugin is
// still a conflict once labelled.
func TestVerifyTaintedBeforeInstall(t *testing.T) {
	d := mustDriver(t, "nvidia")
	res, err := Generate(Options{Driver: d, Target: rules.Version{Major: 1, Minor: 34}, Facts: readFacts(t, "nvidia-cluster.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	r := Verify(&res.Manifest, d, readFacts(t, "nvidia-cluster.yaml"))
	if !hasConflict(r, "h100-1", StateDRA) {
		t.Errorf("want a labelled-state conflict on the tainted h100-1, got %+v", r.Conflicts)
	}
}

// TestExclusionPlacement: the inverse affinity keeps a plugin on unlabelled
// nodes and off labelled ones.
func TestExclusionPlacement(t *testing.T) {
	ds := &appsv1.DaemonSet{}
	ds.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: exclude(nil)}}
	n := &corev1.Node{}
	n.Name = "n1"
	if !runs(ds, n) {
		t.Error("NotIn [dra] keeps the plugin off an unlabelled node")
	}
	n.Labels = map[string]string{ModeLabel: ModeDRA}
	if runs(ds, n) {
		t.Error("NotIn [dra] lets the plugin onto a labelled node")
	}
}

// Step 7's migrate moves only the kit's family (issue 26): the kit's
// migrate.kubedra.yaml, read by kubedra's own config loader, ignores EFA
// (and every other catalogue family) and not NVIDIA's requests; PLAN.md
// passes it to migrate, and nodes that also advertise EFA are named with
// the kit that moves it.
func TestMigrateConfigLeavesOtherFamilies(t *testing.T) {
	facts := readFacts(t, "nvidia-cluster.yaml")
	efaNodes := 0
	for i := range facts.Nodes {
		n := &facts.Nodes[i]
		if _, ok := n.Status.Allocatable["nvidia.com/gpu"]; ok {
			n.Status.Allocatable["vpc.amazonaws.com/efa"] = resource.MustParse("4")
			efaNodes++
		}
	}
	if efaNodes == 0 {
		t.Fatal("no GPU node in the facts")
	}
	res, err := Generate(Options{Driver: mustDriver(t, "nvidia"), Target: rules.Version{Major: 1, Minor: 34}, Strategy: StrategyClaims, Facts: facts, Out: "cutover"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Tree["PLAN.md"]), "kubedra migrate --config cutover/"+MigrateConfigFile+" ") {
		t.Errorf("PLAN.md's step 7 does not pass %s", MigrateConfigFile)
	}
	if !slices.ContainsFunc(res.Warnings, func(d inventory.Diagnostic) bool {
		return strings.Contains(d.Message, "also advertise efa (vpc.amazonaws.com/efa)") && strings.Contains(d.Message, "kubedra bundle --driver efa")
	}) {
		t.Errorf("no warning names the EFA devices of the GPU nodes: %+v", res.Warnings)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, MigrateConfigFile)
	if err := os.WriteFile(path, res.Tree[MigrateConfigFile], 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	ig := cfg.Ignores(dir)
	for res, ignored := range map[string]bool{"vpc.amazonaws.com/efa": true, "aws.amazon.com/neuron": true, "amd.com/gpu": true, "nvidia.com/gpu": false, "nvidia.com/mig-1g.10gb": false} {
		f := inventory.Finding{Resource: res, Kind: "Pod", Name: "p", Namespace: "ml"}
		if got := ig.Reason(f); (got != "") != ignored {
			t.Errorf("%s: ignore reason %q, want ignored %v", res, got, ignored)
		}
	}
}

// Every command of PLAN.md that waits is bounded (issue 26: an unbounded
// `rollout status` of a DaemonSet whose pods never become ready hung an
// e2e run for 20 minutes): rollout status, drain and kubectl wait carry a
// --timeout of at most 15 minutes.
func TestPlanWaitsAreBounded(t *testing.T) {
	res, err := Generate(Options{Driver: mustDriver(t, "nvidia"), Target: rules.Version{Major: 1, Minor: 34}, Strategy: StrategyClaims,
		Facts: readFacts(t, "nvidia-cluster.yaml"), Out: "cutover"})
	if err != nil {
		t.Fatal(err)
	}
	waits := 0
	for _, l := range strings.Split(string(res.Tree["PLAN.md"]), "\n") {
		if !strings.Contains(l, "rollout status") && !strings.Contains(l, "kubectl wait") && !strings.Contains(l, "kubectl drain") {
			continue
		}
		waits++
		if !strings.Contains(l, "--timeout=10m") && !strings.Contains(l, "--timeout=15m") {
			t.Errorf("PLAN.md waits without a bound: %s", l)
		}
	}
	if waits < 2 {
		t.Errorf("PLAN.md has %d waiting commands; the test needs a plan with a phase-1 rollout and a drain", waits)
	}
}
