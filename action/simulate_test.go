package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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
	want := map[string]string{"chat": "same 12/12", "llama-trn": "same 2/2", "pretrain": "worse 2/0", "finetune": "same 2/2"}
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
}

// knownWorse are the corpus workloads that fit worse after migrate
// because of migrate bugs issue 13 fixes. The gate asserts this table
// exactly: when a fix makes an entry fit, the test fails until the entry
// is deleted.
var knownWorse = map[string]string{
	"../../shared/corpus/dev/aws-samples__awsome-inference/1.infrastructure/1_setup_cluster/multinode-triton-trtllm-inference/nccl_test.yaml MPIJob/test-nccl spec.mpiReplicaSpecs.Worker.template.spec": "8 GPUs and 32 EFA in one claim of 40 devices: issue 13 item 1 (claims with more than 32 devices)",
}

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
