package bundle_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

// TestDriverChartDryRun installs the pinned NVIDIA DRA driver chart on
// paper no longer: kubedra writes the bundle for a cluster holding the
// NVIDIA device plugin, the vendored chart (testdata/charts, see NOTICE)
// is rendered with the Helm SDK against the control plane's capabilities
// and the values kubedra wrote, and every rendered object is server-side
// dry-run. The kubelet plugin must select only DRA nodes and tolerate the
// pools' taints; without kubedra's gpuResourcesEnabledOverride the chart
// refuses to render.
//
// Helm SDK v3.22.0 (not v4.3.1): both build against k8s.io v0.37; v3's
// action.Install and chart/loader API is the one the chart's own docs and
// CI use, and v4 changes the SDK surface (chart v2/v3 packages) for nothing
// this test needs.
func TestDriverChartDryRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	namespaceGone(t, ctx, "nvidia-device-plugin")
	cluster.CreateNode(t, harness.NodeSpec{Name: "chart-nv-1", Labels: map[string]string{"eks.amazonaws.com/nodegroup": "chart-gpu", "nvidia.com/gpu.present": "true"},
		Taints:    []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}},
		Resources: map[string]string{"nvidia.com/gpu": "8"}})
	objs, err := harness.DecodeYAML(must(os.ReadFile("testdata/nvdp.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.CreateAll(ctx, objs[:2], harness.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cluster.RunKubectl(context.Background(), "delete", "namespace", "nvidia-device-plugin", "dra-driver-nvidia-gpu", "--ignore-not-found", "--wait=false")
	})
	dir := t.TempDir()
	env := userEnv(t)
	runStep(t, ctx, dir, env, planStep{cmd: "kubedra bundle --driver nvidia --from-cluster --pools chart-gpu --out cutover"}, 0)
	// PLAN.md phase 2: the namespace (and any classes kubedra writes) first.
	runStep(t, ctx, dir, env, planStep{cmd: "kubectl apply --server-side --force-conflicts --field-manager=kubedra -k cutover/phase-2"}, 0)

	var man struct {
		Driver          string `json:"driver"`
		DriverDaemonSet struct{ Namespace, Name string }
	}
	if err := yaml.Unmarshal(must(os.ReadFile(filepath.Join(dir, "cutover", "kubedra-bundle.yaml"))), &man); err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ReadValuesFile(filepath.Join(dir, "cutover", "phase-2", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := loader.Load("testdata/charts/dra-driver-nvidia-gpu")
	if err != nil {
		t.Fatal(err)
	}
	render := func(values map[string]any) (string, error) {
		flags := genericclioptions.NewConfigFlags(false)
		flags.KubeConfig = &cluster.Kubeconfig
		ns := "dra-driver-nvidia-gpu"
		flags.Namespace = &ns
		cfg := new(action.Configuration)
		if err := cfg.Init(flags, ns, "memory", t.Logf); err != nil {
			return "", err
		}
		inst := action.NewInstall(cfg)
		inst.ReleaseName, inst.Namespace = "dra-driver-nvidia-gpu", ns
		inst.DryRun, inst.DryRunOption = true, "server"
		rel, err := inst.RunWithContext(ctx, ch, values)
		if err != nil {
			return "", err
		}
		return rel.Manifest, nil
	}
	if _, err := render(map[string]any{}); err == nil || !strings.Contains(err.Error(), "gpuResourcesEnabledOverride") {
		t.Errorf("the chart rendered without gpuResourcesEnabledOverride: %v", err)
	}
	manifest, err := render(vals)
	if err != nil {
		t.Fatalf("rendering the chart with kubedra's values: %v", err)
	}
	// The chart's CRDs, as helm install applies them first.
	crds := filepath.Join("testdata", "charts", "dra-driver-nvidia-gpu", "crds")
	if _, err := cluster.RunKubectl(ctx, "apply", "--server-side", "-f", crds); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = cluster.RunKubectl(context.Background(), "delete", "-f", crds, "--ignore-not-found", "--wait=false")
	})

	var kinds []string
	var ds, class string
	for _, m := range releaseutil.SplitManifests(manifest) {
		var head struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal([]byte(m), &head); err != nil || head.Kind == "" {
			continue
		}
		kinds = append(kinds, head.Kind+"/"+head.Metadata.Name)
		switch {
		case head.Kind == "DaemonSet" && head.Metadata.Name == man.DriverDaemonSet.Name:
			ds = m
		case head.Kind == "DeviceClass" && head.Metadata.Name == "gpu.nvidia.com":
			class = m
		}
		cmd := cluster.KubectlCmd(ctx, "apply", "--server-side", "--dry-run=server", "--field-manager=helm", "-n", "dra-driver-nvidia-gpu", "-f", "-")
		cmd.Stdin = bytes.NewReader([]byte(m))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("server-side dry-run of %s/%s: %v\n%s", head.Kind, head.Metadata.Name, err, out)
		}
	}
	t.Logf("rendered and dry-run: %s", strings.Join(kinds, ", "))
	if ds == "" {
		t.Fatalf("the chart renders no DaemonSet %s (kubedra-bundle.yaml's driverDaemonSet): %v", man.DriverDaemonSet.Name, kinds)
	}
	for _, want := range []string{"kubedra.io/device-mode: dra", "key: nvidia.com/gpu"} {
		if !strings.Contains(ds, want) {
			t.Errorf("kubelet-plugin DaemonSet lacks %q:\n%s", want, ds)
		}
	}
	if !strings.Contains(class, "extendedResourceName: nvidia.com/gpu") {
		t.Errorf("gpu.nvidia.com as rendered for v1 (the catalogue says it declares nvidia.com/gpu):\n%s", class)
	}
}

// TestPluginChartFixture renders the NVIDIA device-plugin chart (vendored,
// see testdata/charts/NOTICE) with its default values and checks that the
// unit tests' fixture (bundle/testdata/flavours/nvidia-chart.yaml, which
// TestFlavoursBuild builds every phase for) holds the DaemonSet's affinity
// and pod labels exactly as the chart renders them.
func TestPluginChartFixture(t *testing.T) {
	ch, err := loader.Load("testdata/charts/nvidia-device-plugin")
	if err != nil {
		t.Fatal(err)
	}
	inst := action.NewInstall(new(action.Configuration))
	inst.ReleaseName, inst.Namespace = "nvdp", "nvidia-device-plugin"
	inst.DryRun, inst.ClientOnly = true, true
	rel, err := inst.Run(ch, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	type ds struct {
		Kind     string
		Metadata struct{ Name, Namespace string }
		Spec     struct {
			Template struct {
				Metadata struct{ Labels map[string]string }
				Spec     corev1.PodSpec
			}
		}
	}
	var rendered *ds
	for _, m := range releaseutil.SplitManifests(rel.Manifest) {
		var d ds
		if err := yaml.Unmarshal([]byte(m), &d); err == nil && d.Kind == "DaemonSet" && d.Metadata.Name == "nvdp-nvidia-device-plugin" {
			rendered = &d
		}
	}
	if rendered == nil {
		t.Fatalf("the chart renders no DaemonSet nvdp-nvidia-device-plugin:\n%s", rel.Manifest)
	}
	objs, err := harness.DecodeYAML(must(os.ReadFile("../../../bundle/testdata/flavours/nvidia-chart.yaml")))
	if err != nil {
		t.Fatal(err)
	}
	var fixture *ds
	for _, o := range objs {
		items := []map[string]any{o.Object}
		if o.IsList() {
			l, _ := o.ToList()
			items = items[:0]
			for _, it := range l.Items {
				items = append(items, it.Object)
			}
		}
		for _, it := range items {
			b, _ := yaml.Marshal(it)
			var d ds
			if err := yaml.Unmarshal(b, &d); err == nil && d.Kind == "DaemonSet" {
				fixture = &d
			}
		}
	}
	if fixture == nil {
		t.Fatal("no DaemonSet in the fixture")
	}
	if a, b := must(yaml.Marshal(rendered.Spec.Template.Spec.Affinity)), must(yaml.Marshal(fixture.Spec.Template.Spec.Affinity)); !bytes.Equal(a, b) {
		t.Errorf("the fixture's affinity differs from the chart's:\nchart:\n%s\nfixture:\n%s", a, b)
	}
	for k, v := range fixture.Spec.Template.Metadata.Labels {
		if rendered.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("fixture pod label %s=%s, chart renders %v", k, v, rendered.Spec.Template.Metadata.Labels)
		}
	}
}
