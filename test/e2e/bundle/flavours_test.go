package bundle_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

// TestFlavoursDryRun builds a bundle for each plugin flavour of the unit
// tests' fixtures (bundle/testdata/flavours: the NVIDIA chart, the GPU
// Operator, Neuron, EFA, AMD, Intel GPU, Gaudi) and server-side dry-runs
// every phase and every rollback against those plugin DaemonSets on the
// control plane: phase 1's partial DaemonSets must merge into the real
// ones, phase 2's namespace and classes must be valid.
func TestFlavoursDryRun(t *testing.T) {
	flavours := map[string]string{"nvidia-chart.yaml": "nvidia", "gpu-operator.yaml": "nvidia", "neuron.yaml": "neuron",
		"efa.yaml": "efa", "amd.yaml": "amd", "intel-gpu.yaml": "intel-gpu", "intel-gaudi.yaml": "intel-gaudi"}
	for file, driver := range flavours {
		t.Run(file, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			fixture, err := filepath.Abs(filepath.Join("../../../bundle/testdata/flavours", file))
			if err != nil {
				t.Fatal(err)
			}
			objs, err := harness.DecodeYAML(must(os.ReadFile(fixture)))
			if err != nil {
				t.Fatal(err)
			}
			// The DaemonSets as the fixture holds them (the owner of the GPU
			// Operator's does not exist here: without the reference the
			// garbage collector leaves it).
			for _, ds := range daemonSets(objs) {
				ds.SetOwnerReferences(nil)
				if ns := ds.GetNamespace(); ns != "kube-system" {
					namespaceGone(t, ctx, ns) // an earlier test's
					if err := cluster.EnsureNamespace(ctx, ns); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() {
						_, _ = cluster.RunKubectl(context.Background(), "delete", "namespace", ns, "--ignore-not-found", "--wait=false")
					})
				}
				if _, err := cluster.Create(ctx, ds, harness.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					_, _ = cluster.RunKubectl(context.Background(), "-n", ds.GetNamespace(), "delete", "daemonset", ds.GetName(), "--ignore-not-found", "--wait=false")
				})
			}
			dir, env := t.TempDir(), userEnv(t)
			runStep(t, ctx, dir, env, planStep{cmd: "kubedra bundle --driver " + driver + " --from-dump " + fixture + " --pool-label e2e.kubedra.io/pool --target-version 1.37 --out cutover"}, 0)
			phases := []string{"phase-1", "rollback/phase-1", "phase-2", "quota", "rollback/quota"}
			built := 0
			for _, p := range phases {
				if _, err := os.Stat(filepath.Join(dir, "cutover", p, "kustomization.yaml")); err != nil {
					continue
				}
				built++
				runStep(t, ctx, dir, env, planStep{section: p, cmd: "kubectl apply --server-side --force-conflicts --field-manager=kubedra --dry-run=server -k cutover/" + p}, 0)
			}
			if built == 0 {
				t.Fatalf("the %s bundle has no phase to apply", driver)
			}
		})
	}
}

// daemonSets returns the DaemonSets of a dump, list items included, once.
func daemonSets(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	seen := map[string]bool{}
	var out []*unstructured.Unstructured
	add := func(u *unstructured.Unstructured) {
		if u.GetKind() == "DaemonSet" && !seen[u.GetNamespace()+"/"+u.GetName()] {
			seen[u.GetNamespace()+"/"+u.GetName()] = true
			out = append(out, u)
		}
	}
	for _, o := range objs {
		if o.IsList() {
			l, _ := o.ToList()
			for i := range l.Items {
				add(&l.Items[i])
			}
			continue
		}
		add(o)
	}
	return out
}
