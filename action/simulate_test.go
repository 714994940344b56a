package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/cluster/clustertest"
	"github.com/kubedra/kubedra/simulate"
)

// fleetOfAllShapes writes an inventory with four nodes of every built-in
// shape: a workload's nodeSelector and affinity pick the shapes that fit
// its labels.
func fleetOfAllShapes(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n")
	for _, s := range simulate.Shapes() {
		fmt.Fprintf(&b, "- {name: %s, shape: %s, count: 4}\n", strings.ToLower(strings.NewReplacer(".", "-", "_", "-").Replace(s.Name)), s.Name)
	}
	p := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSimulateExample(t *testing.T) {
	r, err := Simulate(context.Background(), Input{Paths: []string{"../examples/simulate/manifests"}}, SimulateOptions{Nodes: "../examples/simulate/fleet.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range r.Workloads {
		got[w.Name] = fmt.Sprintf("%s %d/%d", w.Verdict, w.Before.Pods, w.After.Pods)
	}
	want := map[string]string{"chat": "worse 12/0", "llama-trn": "same 2/2", "pretrain": "same 2/2", "finetune": "same 2/2"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s, want %s", k, got[k], v)
		}
	}
	if !r.Worse() || len(r.Diagnostics) != 0 {
		t.Errorf("worse %v, diagnostics %v", r.Worse(), r.Diagnostics)
	}
}

// A bad inventory fails; a bad manifest is a diagnostic and the rest is
// still simulated.
func TestSimulateBadInput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte("kind: [\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "inv.yaml"), []byte("apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n- {name: a, shape: nope, count: 1}\n"), 0o644)
	if _, err := Simulate(context.Background(), Input{Paths: []string{"bad.yaml"}, Dir: dir}, SimulateOptions{Nodes: "inv.yaml"}); err == nil || !strings.Contains(err.Error(), "inv.yaml:4") {
		t.Errorf("bad inventory: %v", err)
	}
	r, err := Simulate(context.Background(), Input{Paths: []string{"bad.yaml", "../examples/simulate/manifests"}, Dir: "."}, SimulateOptions{Nodes: "../examples/simulate/fleet.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Diagnostics) == 0 || len(r.Workloads) != 4 {
		t.Errorf("diagnostics %v, workloads %d", r.Diagnostics, len(r.Workloads))
	}

	// An object simulate cannot decode is at its file and line.
	os.WriteFile(filepath.Join(dir, "old.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: resource.k8s.io/v1beta1\nkind: DeviceClass\nmetadata: {name: old}\n"), 0o644)
	fleet, err := filepath.Abs("../examples/simulate/fleet.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, err = Simulate(context.Background(), Input{Paths: []string{"old.yaml"}, Dir: dir}, SimulateOptions{Nodes: fleet})
	if err != nil {
		t.Fatal(err)
	}
	want := inventory.Diagnostics{{Severity: inventory.Error, Rule: simulate.RuleBadInput, File: "old.yaml", Line: 5,
		Object:  &inventory.ObjectRef{APIVersion: "resource.k8s.io/v1beta1", Kind: "DeviceClass", Name: "old"},
		Message: "DeviceClass old: resource.k8s.io/v1beta1 is not simulated (resource.k8s.io/v1 and v1beta2 are)"}}
	if d := cmp.Diff(want, r.Diagnostics); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

// knownWorse are the corpus workloads that fit worse after migrate
// because of migrate bugs issue 13 fixes. The gate asserts this table
// exactly: when a fix makes an entry fit, the test fails until the entry
// is deleted.
var knownWorse = map[string]string{}

// TestCorpusGate runs simulate over every workload migrate changes in
// ../shared/corpus/dev and testdata/, against every built-in shape, and
// fails on any worse verdict not in knownWorse.
func TestCorpusGate(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus gate")
	}
	fleet := fleetOfAllShapes(t)
	var roots []string
	for _, r := range []string{"../../shared/corpus/dev", "../testdata"} {
		if _, err := os.Stat(r); err == nil {
			roots = append(roots, r)
		}
	}
	if len(roots) == 0 {
		t.Skip("no corpus")
	}
	got := map[string]string{}
	simulated := 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml") || strings.HasSuffix(p, ".json")) {
				return err
			}
			r, err := Simulate(context.Background(), Input{Paths: []string{p}}, SimulateOptions{Nodes: fleet})
			if err != nil {
				t.Errorf("%s: %v", p, err)
				return nil
			}
			for _, w := range r.Workloads {
				if !w.Migrated {
					continue
				}
				simulated++
				if w.Verdict == simulate.Worse {
					got[fmt.Sprintf("%s %s/%s %s", p, w.Kind, w.Name, w.PodTemplatePath)] = strings.Join(w.After.Reasons, "; ")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d migrated pod templates simulated, %d worse", simulated, len(got))
	var keys []string
	for k := range got {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := knownWorse[k]; !ok {
			t.Errorf("worse after migrate: %s: %s", k, got[k])
		}
	}
	for k, why := range knownWorse {
		if _, ok := got[k]; !ok {
			t.Errorf("no longer worse (delete the entry): %s (%s)", k, why)
		}
	}
}

// From a dump: nodes keep their allocatable before; after, the nodes of a
// known instance type get the shape's devices, and a node whose
// ResourceSlices are in the dump keeps those.
func TestSimulateFromDump(t *testing.T) {
	dir := t.TempDir()
	node := func(name, alloc string) string {
		return fmt.Sprintf("---\napiVersion: v1\nkind: Node\nmetadata: {name: %s, labels: {node.kubernetes.io/instance-type: p5.48xlarge}}\nstatus:\n  allocatable: {cpu: \"192\"%s}\n", name, alloc)
	}
	dump := node("p5-a", `, nvidia.com/gpu: "8", vpc.amazonaws.com/efa: "32"`) + node("p5-b", `, nvidia.com/gpu: "8", vpc.amazonaws.com/efa: "32"`) + node("p5-dra", "")
	dump += "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: p5-dra-gpu}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: p5-dra\n  pool: {name: p5-dra, generation: 1, resourceSliceCount: 1}\n  devices:\n"
	for i := range 8 {
		dump += fmt.Sprintf("  - {name: gpu-%d, attributes: {type: {string: gpu}}}\n", i)
	}
	os.WriteFile(filepath.Join(dir, "dump.yaml"), []byte(dump), 0o644)
	os.WriteFile(filepath.Join(dir, "app.yaml"), []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: t}\nspec:\n  replicas: 3\n  template:\n    spec:\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]\n"), 0o644)
	r, err := Simulate(context.Background(), Input{Paths: []string{"app.yaml"}, Dir: dir}, SimulateOptions{Cluster: ClusterSource{Dump: "dump.yaml", Dir: dir}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Workloads) != 1 {
		t.Fatalf("workloads %+v", r.Workloads)
	}
	// The same objects in a live cluster (client-go fakes seeded with the
	// dump): simulate reads its nodes, ResourceSlices and DeviceClasses
	// (issue 25: they came only from a dump), nothing else, and judges as
	// from the dump.
	fakes, err := clustertest.Load(filepath.Join(dir, "dump.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	live := ClusterSource{NewReader: func(genericclioptions.RESTClientGetter) (*cluster.Reader, error) { return fakes.Reader(), nil }}
	rl, err := Simulate(context.Background(), Input{Paths: []string{"app.yaml"}, Dir: dir}, SimulateOptions{Cluster: live})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(r.Result, rl.Result); d != "" {
		t.Errorf("live cluster and dump differ (-dump +live):\n%s", d)
	}
	listed := map[string]bool{}
	for _, a := range append(fakes.Client.Actions(), fakes.Dynamic.Actions()...) {
		if a.GetVerb() == "get" && (a.GetResource().Resource == "version" || a.GetResource().Resource == "group") {
			continue // discovery: the server version, the served resource.k8s.io versions
		}
		if a.GetVerb() != "list" {
			t.Errorf("simulate asked the cluster to %s %s", a.GetVerb(), a.GetResource().Resource)
		}
		listed[a.GetResource().Resource] = true
	}
	if !listed["nodes"] || !listed["resourceslices"] || !listed["deviceclasses"] || listed["pods"] || len(listed) != 3 {
		t.Errorf("simulate listed %v, want nodes, resourceslices and deviceclasses only", listed)
	}
	w := r.Workloads[0]
	if w.Before.Pods != 2 || w.After.Pods != 3 || w.Verdict != simulate.Better {
		t.Errorf("before %d after %d verdict %s (%q)", w.Before.Pods, w.After.Pods, w.Verdict, w.After.Reasons)
	}
	// Per device family, never added up: GPUs 2 x 8 advertised and 8
	// published before, 3 x 8 after; EFA 2 x 32 in both.
	if p := r.Pools; len(p) != 1 || p[0].Before.Mode != simulate.ModeMixed || p[0].After.Mode != simulate.ModeDRA {
		t.Fatalf("pools %+v", r.Pools)
	}
	want := []simulate.FamilyUsage{{Family: "efa", Used: 0, Total: 64}, {Family: "nvidia", Used: 16, Total: 24}}
	if d := cmp.Diff(want, r.Pools[0].Before.Devices); d != "" {
		t.Errorf("before (-want +got):\n%s", d)
	}
	want[1].Used = 24
	if d := cmp.Diff(want, r.Pools[0].After.Devices); d != "" {
		t.Errorf("after (-want +got):\n%s", d)
	}
}

// --after: the migrated manifests are read, not made; a workload missing
// from them is worse.
func TestSimulateAfter(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "after.yaml"), []byte(`apiVersion: batch/v1
kind: Job
metadata: {name: finetune, namespace: ml}
spec:
  parallelism: 2
  template:
    spec:
      containers:
      - {name: trainer, image: x, resources: {claims: [{name: g}]}}
      resourceClaims: [{name: g, resourceClaimTemplateName: ft}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: ft, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}]
`), 0o644)
	r, err := Simulate(context.Background(), Input{Paths: []string{"../examples/simulate/manifests/train.yaml"}},
		SimulateOptions{Nodes: "../examples/simulate/fleet.yaml", After: []string{filepath.Join(dir, "after.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, w := range r.Workloads {
		got[w.Name] = fmt.Sprintf("%s %d/%d %s", w.Verdict, w.Before.Pods, w.After.Pods, strings.Join(w.After.Reasons, ";"))
	}
	if got["finetune"] != "same 2/2 " || got["pretrain"] != "worse 2/0 not in the after manifests" {
		t.Errorf("got %q", got)
	}
}

// A DaemonSet whose after form asks no device is judged, not missing: no
// false gate failure.
func TestSimulateAfterWithoutDevices(t *testing.T) {
	dir := t.TempDir()
	ds := "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: ml}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: c, image: x%s}\n"
	os.WriteFile(filepath.Join(dir, "before.yaml"), []byte(fmt.Sprintf(ds, ", resources: {limits: {nvidia.com/gpu: 1}}")), 0o644)
	os.WriteFile(filepath.Join(dir, "after.yaml"), []byte(fmt.Sprintf(ds, "")), 0o644)
	r, err := Simulate(context.Background(), Input{Paths: []string{filepath.Join(dir, "before.yaml")}},
		SimulateOptions{Nodes: "../examples/simulate/fleet.yaml", After: []string{filepath.Join(dir, "after.yaml")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Workloads) != 1 || r.Worse() || r.Workloads[0].After.Pods != r.Workloads[0].Pods {
		t.Errorf("worse %v, workloads %+v", r.Worse(), r.Workloads)
	}
}
