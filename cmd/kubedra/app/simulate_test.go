package app_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
)

const simFleet = `apiVersion: kubedra.io/v1alpha1
kind: NodeInventory
pools:
- {name: train, shape: p5.48xlarge, count: 2}
`

const simGPU = `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  parallelism: 2
  template:
    spec:
      containers:
      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}
`

const simEFA = `apiVersion: batch/v1
kind: Job
metadata: {name: big}
spec:
  template:
    spec:
      containers:
      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 32}}}
`

// simEFAAfter is simEFA migrated by hand into one claim of 40 devices,
// which no allocator accepts.
const simEFAAfter = `apiVersion: batch/v1
kind: Job
metadata: {name: big}
spec:
  template:
    spec:
      resourceClaims: [{name: all, resourceClaimTemplateName: big-all}]
      containers:
      - {name: c, image: x, resources: {claims: [{name: all}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: big-all}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com, count: 8}}
      - {name: efa, exactly: {deviceClassName: efa.networking.k8s.aws, count: 32}}
`

func TestSimulateExitCodes(t *testing.T) {
	dir := app.WriteFiles(t, t.TempDir(), map[string]string{"fleet.yaml": simFleet, "gpu.yaml": simGPU, "efa.yaml": simEFA, "efa-after.yaml": simEFAAfter,
		"empty.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", "bad.yaml": "kind: [\n",
		"badfleet.yaml": strings.Replace(simFleet, "count: 2", "count: 2, gpus: 8", 1)})
	env := map[string]string{"NO_COLOR": "1", "KUBEDRA_CONFIG": "none"}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"same", []string{"simulate", "--nodes", "fleet.yaml", "gpu.yaml"}, 0, "same", ""},
		{"worse", []string{"simulate", "--nodes", "fleet.yaml", "--after", "efa-after.yaml", "efa.yaml"}, 2, "asks 40 devices, more than the 32", ""},
		{"migrated in memory", []string{"simulate", "--nodes", "fleet.yaml", "efa.yaml"}, 0, "same", ""},
		{"bad manifest, the rest simulated", []string{"simulate", "--nodes", "fleet.yaml", "bad.yaml", "gpu.yaml"}, 1, "same", "bad.yaml"},
		{"bad inventory", []string{"simulate", "--nodes", "badfleet.yaml", "gpu.yaml"}, 1, "", "badfleet.yaml:4: unknown key \"gpus\""},
		{"markdown", []string{"simulate", "--nodes", "fleet.yaml", "-o", "md", "gpu.yaml"}, 0, "| Workload |", ""},
		{"list shapes", []string{"simulate", "--list-shapes"}, 0, "Standard_ND96isr_H100_v5", ""},
		{"nodes and a dump", []string{"simulate", "--nodes", "fleet.yaml", "--from-dump", "d.yaml", "gpu.yaml"}, 1, "", "cannot be used together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := app.Invoke(t, app.Invocation{Args: tc.args, Env: env, Dir: dir})
			if code != tc.code || !strings.Contains(out, tc.stdout) || !strings.Contains(errOut, tc.stderr) {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
		})
	}
	// JSON is valid and complete when nothing asks for devices.
	code, out, _ := app.Invoke(t, app.Invocation{Args: []string{"simulate", "--nodes", "fleet.yaml", "-o", "json", "empty.yaml"}, Env: env, Dir: dir})
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 {
		t.Fatalf("exit %d, %v:\n%s", code, err, out)
	}
	for _, k := range []string{"workloads", "pools", "summary", "diagnostics"} {
		if doc[k] == nil {
			t.Errorf("%s is null or missing:\n%s", k, out)
		}
	}
}

// TestOneObjectReference (issue 28): every command names an object the
// same way, Kind/namespace/name (as scan's table and Flux do; Kind/name
// for a cluster-scoped one), in tables, messages and diagnostics.
func TestOneObjectReference(t *testing.T) {
	t.Parallel()
	job := strings.Replace(simGPU, "metadata: {name: j}", "metadata: {name: j, namespace: ml}", 1)
	lossy := strings.Replace(job, "nvidia.com/gpu: 8", "nvidia.com/gpu: 8, example.com/fpga: 1", 1)
	dir := app.WriteFiles(t, t.TempDir(), map[string]string{"fleet.yaml": simFleet, "job.yaml": job, "fpga.yaml": strings.Replace(lossy, "name: j,", "name: f,", 1)})
	env := map[string]string{"NO_COLOR": "1", "KUBEDRA_CONFIG": "none"}
	for _, args := range [][]string{
		{"scan", "job.yaml"},
		{"check", "-o", "github", "job.yaml"},
		{"check", "-o", "markdown", "job.yaml"},
		{"migrate", "fpga.yaml"},
		{"simulate", "--nodes", "fleet.yaml", "job.yaml"},
		{"simulate", "--nodes", "fleet.yaml", "-o", "markdown", "job.yaml"},
	} {
		_, out, errOut := app.Invoke(t, app.Invocation{Args: args, Env: env, Dir: dir})
		all := out + errOut
		if !strings.Contains(all, "Job/ml/") {
			t.Errorf("%s: no Job/ml/<name>:\n%s", strings.Join(args, " "), all)
		}
		for _, other := range []string{"ml/Job/", "Job ml/", "Job/j ", "Job/f "} {
			if strings.Contains(all, other) {
				t.Errorf("%s: %q:\n%s", strings.Join(args, " "), other, all)
			}
		}
	}
}

// A never-fit verdict gives its reasons in the table and in JSON; every
// outcome has its reasons list, [] when every pod fits.
func TestSimulateReasons(t *testing.T) {
	three := strings.Replace(simGPU, "parallelism: 2", "parallelism: 3", 1)
	dir := app.WriteFiles(t, t.TempDir(), map[string]string{"fleet.yaml": simFleet, "gpu.yaml": simGPU, "three.yaml": three})
	env := map[string]string{"NO_COLOR": "1", "KUBEDRA_CONFIG": "none"}
	code, out, errOut := app.Invoke(t, app.Invocation{Args: []string{"simulate", "--nodes", "fleet.yaml", "three.yaml"}, Env: env, Dir: dir})
	if code != 0 || !strings.Contains(out, "never-fit  2 nodes: too few free devices of class gpu.nvidia.com (8 asked; the pods placed before took the rest)") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, f := range []string{"gpu.yaml", "three.yaml"} {
		code, out, _ = app.Invoke(t, app.Invocation{Args: []string{"simulate", "--nodes", "fleet.yaml", "-o", "json", f}, Env: env, Dir: dir})
		var doc struct {
			Workloads []struct {
				Verdict       string
				Before, After struct {
					Reasons *[]string
				}
			}
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 0 || len(doc.Workloads) != 1 {
			t.Fatalf("%s: exit %d, %v:\n%s", f, code, err, out)
		}
		w := doc.Workloads[0]
		if w.Before.Reasons == nil || w.After.Reasons == nil || (w.Verdict == "same") != (len(*w.After.Reasons) == 0) {
			t.Errorf("%s: verdict %s, reasons missing or wrong:\n%s", f, w.Verdict, out)
		}
	}
}

// A placeholder quantity is a skip with its reason, listed in the report;
// the exit code is that of the rest.
func TestSimulatePlaceholder(t *testing.T) {
	ph := strings.NewReplacer("nvidia.com/gpu: 8}", "nvidia.com/gpu: \"${GPUS}\"}", "name: j}", "name: ph}").Replace(simGPU)
	dir := app.WriteFiles(t, t.TempDir(), map[string]string{"fleet.yaml": simFleet, "ph.yaml": ph, "gpu.yaml": simGPU})
	env := map[string]string{"NO_COLOR": "1", "KUBEDRA_CONFIG": "none"}
	code, out, errOut := app.Invoke(t, app.Invocation{Args: []string{"simulate", "--nodes", "fleet.yaml", "ph.yaml", "gpu.yaml"}, Env: env, Dir: dir})
	if code != 0 || !strings.Contains(out, "quantity is a placeholder: render it first (nvidia.com/gpu: ${GPUS} in container c)") || !strings.Contains(out, "Job/ph") || !strings.Contains(out, "1 skipped") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, out, _ = app.Invoke(t, app.Invocation{Args: []string{"simulate", "--nodes", "fleet.yaml", "-o", "json", "gpu.yaml"}, Env: env, Dir: dir})
	if code != 0 || !strings.Contains(out, `"skipped": []`) {
		t.Errorf("exit %d, skipped not [] in:\n%s", code, out)
	}
}
