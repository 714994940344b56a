package simulate

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/inventory"
)

func TestParseInventoryErrors(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"unknown key", "apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n- name: a\n  shape: p5.48xlarge\n  count: 1\n  colour: red\n", "inv.yaml:7: unknown key \"colour\" in pools[0]"},
		{"unknown shape", "apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n- name: a\n  count: 1\n  shape: p9.huge\n", "inv.yaml:6: pool a: unknown shape \"p9.huge\""},
		{"missing count", "apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n- name: a\n  shape: g5.xlarge\n", "inv.yaml:4: pool a: count is required"},
		{"wrong kind", "apiVersion: kubedra.io/v1alpha1\nkind: Nodes\npools:\n- {name: a, shape: g5.xlarge, count: 1}\n", "inv.yaml:2: kind must be NodeInventory"},
		{"MIG on a GPU without it", "apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n- {name: a, shape: g5.xlarge, count: 1, mig: all-1g.10gb}\n", "inv.yaml:4: pool a: shape g5.xlarge has no MIG-capable GPU"},
		{"bad mode", "apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n- name: a\n  shape: g5.xlarge\n  count: 1\n  mode: {after: cdi}\n", "inv.yaml:7: pool a: mode \"cdi\""},
		{"unknown device key", "apiVersion: kubedra.io/v1alpha1\nkind: NodeInventory\npools:\n- name: a\n  count: 1\n  shape:\n    devices:\n    - {driver: gpu.example.com, name: gpu, colour: 1}\n", "inv.yaml:8: unknown key \"colour\" in pool a.shape.devices[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseInventory("inv.yaml", []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			// The position is in the diagnostic's fields, not only its text.
			var de *inventory.DiagnosticsError
			if !errors.As(err, &de) || !slices.ContainsFunc(de.Diagnostics, func(d inventory.Diagnostic) bool {
				return d.Rule == RuleInventory && d.Severity == inventory.Error && strings.HasPrefix(fmt.Sprintf("%s:%d: %s", d.File, d.Line, d.Message), tc.want)
			}) {
				t.Errorf("no %s diagnostic is %q: %#v", RuleInventory, tc.want, err)
			}
		})
	}
}

func TestParseInventory(t *testing.T) {
	inv, err := ParseInventory("inv.yaml", []byte(`apiVersion: kubedra.io/v1alpha1
kind: NodeInventory
pools:
- name: infer
  shape: g5.12xlarge
  count: 10
  labels: {team: serving}
  taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
- name: stay
  shape: a3-highgpu-8g
  count: 2
  mode: plugin
- name: box
  count: 3
  mode: {before: dra, after: dra}
  shape:
    name: example
    labels: {kind: example}
    devices:
    - driver: gpu.example.com
      name: gpu
      count: 4
      attributes: {model: {string: LATEST-GPU-MODEL}}
      capacity: {memory: 80Gi}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Pools) != 3 {
		t.Fatalf("pools = %d", len(inv.Pools))
	}
	p := inv.Pools[0]
	if p.Count != 10 || p.Labels["team"] != "serving" || len(p.Taints) != 1 || p.Before != ModePlugin || p.After != ModeDRA {
		t.Errorf("infer = %+v", p)
	}
	if s := inv.Pools[1]; s.Before != ModePlugin || s.After != ModePlugin {
		t.Errorf("stay modes %s/%s", s.Before, s.After)
	}
	box := inv.Pools[2].Shape.DRAView(PoolOptions{})
	if devs := box.Devices["gpu.example.com"]; len(devs) != 4 || *devs[0].Attributes["model"].StringValue != "LATEST-GPU-MODEL" || devs[3].Name != "gpu-3" {
		t.Errorf("custom devices = %+v", devs)
	}
}

// Every shape the issue names is built in, with both views.
func TestShapes(t *testing.T) {
	for _, name := range []string{"p4d.24xlarge", "p5.48xlarge", "p5e.48xlarge", "g5.xlarge", "g5.12xlarge", "g5.48xlarge", "g6.xlarge",
		"g6e.12xlarge", "p6e-gb200.36xlarge", "trn1.32xlarge", "trn2.48xlarge", "inf2.48xlarge", "a2-highgpu-8g", "a3-highgpu-8g",
		"g2-standard-48", "ct5lp-hightpu-4t", "Standard_ND96isr_H100_v5"} {
		s, ok := LookupShape(name)
		if !ok {
			t.Errorf("shape %s missing", name)
			continue
		}
		pv, dv := s.PluginView(PoolOptions{}), s.DRAView(PoolOptions{})
		var units, devices int64
		for r, v := range pv.Allocatable {
			if !alias(r, pv.Allocatable) {
				units += v
			}
		}
		for _, d := range dv.Devices {
			devices += int64(len(d))
		}
		if units == 0 || units != devices || s.Source == "" {
			t.Errorf("%s: plugin units %d, DRA devices %d, source %q", name, units, devices, s.Source)
		}
	}
	p5, _ := LookupShape("p5.48xlarge")
	if got := p5.PluginView(PoolOptions{}).Allocatable; got["nvidia.com/gpu"] != 8 || got["vpc.amazonaws.com/efa"] != 32 {
		t.Errorf("p5 allocatable %v", got)
	}
	mig := p5.PluginView(PoolOptions{MIG: "all-1g.10gb"}).Allocatable["nvidia.com/mig-1g.10gb"]
	if mig != 56 || len(p5.DRAView(PoolOptions{MIG: "all-1g.10gb"}).Devices[DriverNVIDIA]) != 56 {
		t.Errorf("p5 MIG 1g.10gb: plugin %d", mig)
	}
}

func TestReplicas(t *testing.T) {
	m := manifests(t, `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: js}
spec:
  replicatedJobs:
  - name: workers
    replicas: 3
    template:
      spec:
        parallelism: 4
        template:
          spec:
            containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pt}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 5
      template:
        spec:
          containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]
`)
	want := []int{12, 5, 1}
	if len(m.Templates) != 3 {
		t.Fatalf("templates = %d", len(m.Templates))
	}
	for i, tpl := range m.Templates {
		if tpl.Pods != want[i] {
			t.Errorf("%s %s: pods %d, want %d", tpl.Kind, tpl.PodTemplatePath, tpl.Pods, want[i])
		}
	}
}
