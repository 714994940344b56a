package action_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// TestCustomResourceMaps: a GPU asked for in a custom resource outside any
// pod template (llmaz's OpenModel flavors) is a finding with the status
// custom-resource in scan, fails check's default gate (and is judged by
// its mapping for the narrow ones), and migrate leaves it with a warning
// that names the object and the field.
func TestCustomResourceMaps(t *testing.T) {
	t.Parallel()
	dir := testfs.Tree(t, map[string]string{"model.yaml": `apiVersion: llmaz.io/v1alpha1
kind: OpenModel
metadata: {name: qwen}
spec:
  inferenceConfig:
    flavors:
    - name: t4
      limits:
        nvidia.com/gpu: 1
`})
	in := action.Input{Paths: []string{"."}, Dir: dir}
	sr, err := action.Scan(t.Context(), in, action.ScanOptions{Target: defaultTarget()})
	if err != nil {
		t.Fatal(err)
	}
	if len(sr.Report.Findings) != 1 || sr.Report.Findings[0].Status != rules.CustomResource || sr.Report.Summary.CustomResource != 1 {
		t.Fatalf("scan: %+v", sr.Report.Findings)
	}
	cr := checkDir(t, dir, defaultTarget())
	if cr.Failures != 1 {
		t.Errorf("check: %d failures, want the OpenModel's GPU", cr.Failures)
	}
	if plan.FailOnUnmapped.Fails(sr.Report.Findings[0]) {
		t.Error("--fail-on unmapped fails a mapped resource in a custom resource")
	}
	res, err := action.Migrate(t.Context(), in, action.MigrateOptions{Output: emit.Write, Plan: plan.Options{Target: defaultTarget()}})
	if err != nil {
		t.Fatal(err)
	}
	said := slices.ContainsFunc(res.Diagnostics, func(d inventory.Diagnostic) bool {
		return d.Rule == plan.RuleCustomResource && d.File == filepath.Join("model.yaml") && d.Line == 9 &&
			d.Object != nil && d.Object.Kind == "OpenModel" && d.Field == "spec.inferenceConfig.flavors[0].limits.nvidia.com/gpu"
	})
	if !said || res.Changed != 0 {
		t.Errorf("migrate: changed %d, diagnostics %v", res.Changed, res.Diagnostics)
	}
}

// TestChartProfiles: GPU profiles a chart's values hand to an operator
// (kubeai's resourceProfiles, rendered into a ConfigMap, never into a pod)
// are helm-values findings at their values line; a container's resources
// in the same values, which the render traces, are not reported twice.
func TestChartProfiles(t *testing.T) {
	t.Parallel()
	dir := testfs.Tree(t, map[string]string{
		"kubeai/Chart.yaml": "apiVersion: v2\nname: kubeai\nversion: 0.1.0\n",
		"kubeai/values.yaml": `resourceProfiles:
  nvidia-gpu-l4:
    nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
    limits:
      nvidia.com/gpu: "1"
  nvidia-gpu-h100:
    limits:
      nvidia.com/gpu: "8"
resources:
  limits:
    nvidia.com/gpu: 1
`,
		"kubeai/templates/config.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: kubeai-config}
data:
  system.yaml: |
    resourceProfiles:
{{ toYaml .Values.resourceProfiles | indent 6 }}
`,
		"kubeai/templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: kubeai}
spec:
  selector: {matchLabels: {app: kubeai}}
  template:
    metadata: {labels: {app: kubeai}}
    spec:
      containers:
      - name: c
        image: kubeai
        resources:
{{ toYaml .Values.resources | indent 10 }}
`,
	})
	sr, err := action.Scan(t.Context(), action.Input{Paths: []string{"kubeai"}, Dir: dir}, action.ScanOptions{Target: defaultTarget()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range sr.Report.Findings {
		got = append(got, fmt.Sprintf("%s %s %s", it.Status, it.Values, it.Resource))
	}
	want := []string{
		"mappable  nvidia.com/gpu",
		"helm-values resourceProfiles.nvidia-gpu-l4.limits.nvidia.com/gpu nvidia.com/gpu",
		"helm-values resourceProfiles.nvidia-gpu-h100.limits.nvidia.com/gpu nvidia.com/gpu",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}
