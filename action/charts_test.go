package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/chart"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

const chartTestdata = "../inventory/chart/testdata"

func scanCharts(t *testing.T, in action.Input, target rules.Version) *action.ScanResult {
	t.Helper()
	res, err := action.Scan(context.Background(), in, action.ScanOptions{Target: target})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestChartTemplatesRendered: the templates of a chart that renders are not
// listed as Go-template skips (its requests are found in the render); those
// of a chart that does not render are, with the chart's error at the
// template line; a template outside any chart still is; the other inputs
// are scanned, and the failed chart counts as an input not read (exit 1).
func TestChartTemplatesRendered(t *testing.T) {
	dir := t.TempDir()
	testfs.Copy(t, filepath.Join(chartTestdata, "gpu-app"), filepath.Join(dir, "repo", "gpu-app"))
	write := func(name, text string) {
		p := filepath.Join(dir, "repo", name)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("broken/Chart.yaml", "apiVersion: v2\nname: broken\nversion: 0.1.0\n")
	write("broken/templates/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ required \"name is required\" .Values.name }}\n")
	write("loose/templates/job.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}\n")
	write("plain.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {limits: {nvidia.com/gpu: 1}}\n")

	res := scanCharts(t, action.Input{Paths: []string{"repo"}, Dir: dir}, rules.DefaultTarget)
	var skipped []string
	for _, s := range res.Report.Skipped {
		skipped = append(skipped, s.File+": "+s.Reason)
	}
	want := []string{
		"repo/broken/templates/pod.yaml: Go template syntax",
		"repo/broken/templates/pod.yaml: the chart does not render: ",
		"repo/loose/templates/job.yaml: Go template syntax",
	}
	if len(skipped) != len(want) {
		t.Fatalf("skipped %q, want %d entries like %q", skipped, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(skipped[i], want[i]) {
			t.Errorf("skipped[%d] = %q, want %q...", i, skipped[i], want[i])
		}
	}
	var chartDiag *inventory.Diagnostic
	for i, d := range res.Diagnostics {
		if d.Rule == chart.RuleRender {
			chartDiag = &res.Diagnostics[i]
		}
	}
	if chartDiag == nil || chartDiag.Line != 4 || chartDiag.Severity != inventory.Error {
		t.Errorf("chart diagnostic %+v, want an error at the template's line 4", chartDiag)
	}
	if res.Failed != 1 {
		t.Errorf("Failed = %d, want 1 (the chart that does not render)", res.Failed)
	}
	var at []string
	for _, it := range res.Report.Findings {
		at = append(at, it.File)
	}
	if want := []string{"repo/gpu-app/templates/deployment.yaml", "repo/plain.yaml"}; !slices.Equal(at, want) {
		t.Errorf("findings in %q, want %q", at, want)
	}
	var names []string
	for _, c := range res.Report.Charts {
		names = append(names, c.Chart+"="+string(c.Strategy))
	}
	if want := []string{"repo/broken=not-rendered", "repo/gpu-app=values-file"}; !slices.Equal(names, want) {
		t.Errorf("charts %q, want %q", names, want)
	}
}

// corpusChartValues are the values corpus charts need to render.
var corpusChartValues = map[string]action.ChartValues{
	"aws-samples__awsome-inference/2.projects/multinode-triton-trtllm-inference/multinode_helm_chart/chart": {Values: []string{"example_values.yaml"}},
	"triton-inference-server__server/deploy/fleetcommand":                                                   {Set: []string{"image.serverArgs={--model-repository=s3://bucket/models}"}},
}

// assembled are corpus charts whose file:// dependency the corpus lacks,
// rendered with it vendored (inventory/chart/testdata/deps) and the values
// their READMEs pass, with the strategy expected on 1.34 and 1.36.
var assembled = []struct {
	chart, dep   string
	values       action.ChartValues
	on134, on136 plan.ChartStrategy
}{
	{"opea-project__GenAIInfra/helm-charts/common/tgi", "commonlib", action.ChartValues{Values: []string{"nv-values.yaml"}}, plan.ChartPostRenderer, plan.ChartExtendedResource},
	{"opea-project__GenAIInfra/helm-charts/common/tei", "commonlib", action.ChartValues{Values: []string{"gaudi-values.yaml"}}, plan.ChartPostRenderer, plan.ChartExtendedResource},
	{"opea-project__GenAIInfra/helm-charts/common/vllm", "commonlib", action.ChartValues{Values: []string{"gaudi-values.yaml"}}, plan.ChartPostRenderer, plan.ChartExtendedResource},
	{"run-ai__runai-cli/charts/runai", "runai-common", action.ChartValues{Set: []string{"gitSync.sync=false", "gpuInt=1"}}, plan.ChartPostRenderer, plan.ChartExtendedResource},
	{"run-ai__runai-cli/charts/mpijob", "runai-common", action.ChartValues{Set: []string{"gitSync.sync=false", "gpuInt=1"}}, plan.ChartPostRenderer, plan.ChartExtendedResource},
}

func TestCorpusAssembledChartStrategies(t *testing.T) {
	const corpus = "../../shared/corpus/dev"
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("the corpus is not here (%v): this test needs ../shared/corpus/dev beside the repo", err)
	}
	for _, tc := range assembled {
		t.Run(tc.chart, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), filepath.Base(tc.chart))
			testfs.Copy(t, filepath.Join(corpus, tc.chart), dir)
			testfs.Copy(t, filepath.Join(chartTestdata, "deps", tc.dep), filepath.Join(dir, "charts", tc.dep))
			vals := tc.values
			vals.Values = slices.Clone(vals.Values)
			for i, v := range vals.Values {
				vals.Values[i] = filepath.Join(dir, v)
			}
			for _, target := range []rules.Version{{Major: 1, Minor: 34}, {Major: 1, Minor: 36}} {
				res := scanCharts(t, action.Input{Paths: []string{dir}, Charts: vals}, target)
				if len(res.Report.Charts) != 1 {
					t.Fatalf("%s: charts %+v", target, res.Report.Charts)
				}
				c := res.Report.Charts[0]
				want := tc.on134
				if target.Minor == 36 {
					want = tc.on136
				}
				if c.Strategy != want || c.Findings == 0 || c.Why == "" {
					t.Errorf("%s: %s (%d findings) because %q, want %s", target, c.Strategy, c.Findings, c.Why, want)
				}
				if len(res.Report.Skipped) > 0 {
					t.Errorf("%s: skipped %+v", target, res.Report.Skipped)
				}
			}
		})
	}
}

// TestCorpusChartStrategies asserts the strategy chosen for each chart of
// ../shared/corpus/dev on two targets, and that the reason is given.
func TestCorpusChartStrategies(t *testing.T) {
	const corpus = "../../shared/corpus/dev"
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("the corpus is not here (%v): this test needs ../shared/corpus/dev beside the repo", err)
	}
	const (
		pr  = plan.ChartPostRenderer
		er  = plan.ChartExtendedResource
		not = plan.ChartNotRendered
	)
	for _, tc := range []struct {
		chart    string
		on134    plan.ChartStrategy
		on136    plan.ChartStrategy
		why136   string
		findings int
	}{
		// A KubeRay cluster whose GPU group selects by node labels: claims.
		{"GoogleCloudPlatform__kubernetes-engine-samples/ai-ml/nemo-rl-on-gke/nemoRL", pr, pr, "needs claims: a claim is needed for device selectors", 2},
		{"GoogleCloudPlatform__kubernetes-engine-samples/app-design-center/ai-inference", pr, pr, "needs claims", 1},
		{"NVIDIA__nim-deploy/cloud-service-providers/google-cloud/gke/terraform/infra/3-config/helm/ngc-cache", pr, er, "only a count is needed", 1},
		{"NVIDIA__nim-deploy@be34031ce621/helm/nim-llm", pr, er, "only a count is needed", 1},
		{"aws-neuron__neuron-helm-charts/charts/neuron-helm-chart", pr, er, "only a count is needed", 1},
		{"aws-samples__awsome-inference/2.projects/multinode-triton-trtllm-inference/multinode_helm_chart/chart", pr, pr, "needs claims", 4},
		// kubeVersion: 1.27 - 1.29 in Chart.yaml: no supported target renders it.
		{"huggingface__optimum-habana/examples/kubernetes", not, not, "incompatible with Kubernetes v1.36", 0},
		{"opea-project__GenAIInfra/helm-charts/common/tei", not, not, "missing in charts/ directory: commonlib", 0},
		{"opea-project__GenAIInfra/helm-charts/common/tgi", not, not, "missing in charts/ directory: commonlib", 0},
		{"opea-project__GenAIInfra/helm-charts/common/vllm", not, not, "missing in charts/ directory: commonlib", 0},
		{"run-ai__runai-cli/charts/mpijob", not, not, "missing in charts/ directory: runai-common", 0},
		{"run-ai__runai-cli/charts/runai", not, not, "missing in charts/ directory: runai-common", 0},
		{"triton-inference-server__server/deploy/aws", pr, er, "only a count is needed", 1},
		{"triton-inference-server__server/deploy/fleetcommand", pr, er, "only a count is needed", 1},
		{"triton-inference-server__server/deploy/gke-marketplace-app/server-deployer/chart/triton", pr, er, "only a count is needed", 1},
		{"triton-inference-server__server/deploy/k8s-onprem", not, not, "missing in charts/ directory: traefik, prometheus-adapter", 0},
	} {
		t.Run(tc.chart, func(t *testing.T) {
			dir := filepath.Join(corpus, tc.chart)
			vals := corpusChartValues[tc.chart]
			vals.Values = slices.Clone(vals.Values)
			for i, v := range vals.Values {
				vals.Values[i] = filepath.Join(dir, v)
			}
			for _, target := range []rules.Version{{Major: 1, Minor: 34}, {Major: 1, Minor: 36}} {
				res := scanCharts(t, action.Input{Paths: []string{dir}, Charts: vals}, target)
				if len(res.Report.Charts) != 1 {
					t.Fatalf("%s: charts %+v, want one", target, res.Report.Charts)
				}
				c := res.Report.Charts[0]
				want, why := tc.on134, ""
				if target.Minor == 36 {
					want, why = tc.on136, tc.why136
				}
				if c.Strategy != want || !strings.Contains(c.Why, why) || c.Findings != tc.findings {
					t.Errorf("%s: %s (%d findings) because %q, want %s (%d) because ...%q...", target, c.Strategy, c.Findings, c.Why, want, tc.findings, why)
				}
				switch c.Strategy {
				case pr:
					if !strings.Contains(c.Command, "--post-renderer kubedra --post-renderer-args migrate --post-renderer-args -") ||
						!strings.Contains(c.Why, "values file: the chart's values expose no pod-level resourceClaims") {
						t.Errorf("%s: post-renderer command %q, why %q", target, c.Command, c.Why)
					}
					if target.Minor == 34 && !strings.Contains(c.Why, "DRAExtendedResource is not on by default on Kubernetes 1.34") {
						t.Errorf("%s: why %q does not say why not KEP-5004", target, c.Why)
					}
				case er:
					if !strings.HasPrefix(c.Why, "no chart change") {
						t.Errorf("%s: why %q", target, c.Why)
					}
				}
				if c.Strategy != not && len(res.Report.Skipped) > 0 {
					t.Errorf("%s: a chart that renders left skips: %+v", target, res.Report.Skipped)
				}
			}
		})
	}
}

// renderedObjects decodes documents to plain values, keyed by object, with
// the names of the ResourceClaimTemplates set aside (a name is chosen per
// run; what refers to it is compared through the template's content).
func renderedObjects(t *testing.T, nodes []*yaml.RNode) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, n := range nodes {
		s, err := n.String()
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := sigsyaml.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		id := n.GetApiVersion() + " " + n.GetKind() + " " + n.GetName()
		if n.GetKind() == "ResourceClaimTemplate" {
			b, _ := json.Marshal(v.(map[string]any)["spec"])
			id = n.GetKind() + " " + string(b)
		}
		out[id] = v
	}
	return out
}

// TestChartValuesFileInstalled: once migrate wrote values-kubedra.yaml,
// scan and check render the chart with it, as it is installed, so the
// migrated chart passes the gate; without the file they render the
// chart's own values. The values file itself is the chart's, not a file
// of manifests.
func TestChartValuesFileInstalled(t *testing.T) {
	dir := t.TempDir()
	testfs.Copy(t, filepath.Join(chartTestdata, "gpu-app"), filepath.Join(dir, "gpu-app"))
	in := action.Input{Paths: []string{"gpu-app"}, Dir: dir}
	count := func() (mappable, unmapped int, with string) {
		r := scanCharts(t, in, rules.DefaultTarget)
		if len(r.Report.Charts) != 1 {
			t.Fatalf("charts %+v", r.Report.Charts)
		}
		return r.Report.Summary.Mappable, r.Report.Summary.Unmapped, r.Report.Charts[0].RenderedWith
	}
	if m, u, with := count(); m != 1 || u != 0 || with != "" {
		t.Fatalf("before: %d mappable, %d unmapped, rendered with %q; want 1, 0, none", m, u, with)
	}
	migrate(t, in, emit.Write, plan.Options{})
	if m, u, with := count(); m != 0 || u != 0 || with != filepath.Join("gpu-app", chart.ValuesFileName) {
		t.Errorf("after: %d mappable, %d unmapped, rendered with %q; want none, none, the values file", m, u, with)
	}
	cr, err := action.Check(context.Background(), in, action.CheckOptions{ScanOptions: action.ScanOptions{Target: rules.DefaultTarget}})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range cr.Failing {
		if f {
			t.Errorf("after migrate, check fails on %s", cr.Report.Findings[i].Message())
		}
	}
	// migrate still plans from the chart's own values: a second run
	// changes nothing.
	if res, _ := migrate(t, in, emit.Write, plan.Options{}); res.Changed != 0 {
		t.Errorf("a second migrate changed %d files", res.Changed)
	}
}

// TestChartValuesFile: migrate writes the values file of a chart whose
// values take claims and extra objects, beside Chart.yaml (the diff is what
// -w writes, templates unchanged), and rendering the chart with it gives
// the objects that migrating the chart's render gives.
func TestChartValuesFile(t *testing.T) {
	dir := t.TempDir()
	testfs.Copy(t, filepath.Join(chartTestdata, "gpu-app"), filepath.Join(dir, "gpu-app"))
	in := action.Input{Paths: []string{"gpu-app"}, Dir: dir}
	template, _ := os.ReadFile(filepath.Join(dir, "gpu-app", "templates", "deployment.yaml"))

	diffRes, diff := migrate(t, in, emit.Diff, plan.Options{})
	if len(diffRes.Charts) != 1 || diffRes.Charts[0].Strategy != plan.ChartValuesFile {
		t.Fatalf("charts %+v, want the values-file strategy", diffRes.Charts)
	}
	valuesPath := filepath.Join("gpu-app", chart.ValuesFileName)
	if diffRes.Charts[0].ValuesFile != valuesPath {
		t.Errorf("values file %q, want %q", diffRes.Charts[0].ValuesFile, valuesPath)
	}
	res, _ := migrate(t, in, emit.Write, plan.Options{})
	if res.Changed != 1 {
		t.Errorf("-w changed %d files, want 1 (the values file)", res.Changed)
	}
	written, err := os.ReadFile(filepath.Join(dir, valuesPath))
	if err != nil {
		t.Fatal(err)
	}
	var plus []string
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "+++") {
			plus = append(plus, l[1:])
		}
	}
	if got := strings.Join(plus, "\n") + "\n"; got != string(written) {
		t.Errorf("the diff adds\n%s\nbut -w wrote\n%s", got, written)
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "gpu-app", "templates", "deployment.yaml")); !bytes.Equal(now, template) {
		t.Error("migrate edited a template")
	}

	// Render before, migrate the render; render after with the values file.
	c, err := chart.Load(filepath.Join(dir, "gpu-app"), chart.Options{KubeVersion: "1.34"})
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.Read(context.Background(), nil, detect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []*inventory.Document
	for _, f := range before.Files {
		docs = append(docs, files.Parse(f.Path, f.Text).Docs...)
	}
	mres, err := action.Migrate(context.Background(), action.Input{Documents: docs}, action.MigrateOptions{Plan: plan.Options{Target: rules.DefaultTarget}})
	if err != nil {
		t.Fatal(err)
	}
	if mres.Migrated != 1 {
		t.Fatalf("migrating the render migrated %d workloads, want 1", mres.Migrated)
	}
	withValues, err := chart.Load(filepath.Join(dir, "gpu-app"), chart.Options{KubeVersion: "1.34", Flags: chart.Flags{Values: []string{filepath.Join(dir, valuesPath)}}})
	if err != nil {
		t.Fatal(err)
	}
	after, err := withValues.Read(context.Background(), nil, detect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Findings) != 0 {
		t.Errorf("the chart rendered with the values file still requests %+v", after.Findings)
	}
	var afterNodes []*yaml.RNode
	for _, d := range after.Docs {
		afterNodes = append(afterNodes, d.Node)
	}
	if d := cmp.Diff(renderedObjects(t, mres.Documents), renderedObjects(t, afterNodes)); d != "" {
		t.Errorf("render with the values file differs from migrating the render (-migrated +rendered):\n%s", d)
	}

	// A second migration writes the same values file: nothing changes.
	again, _ := migrate(t, in, emit.Write, plan.Options{})
	if again.Changed != 0 {
		t.Errorf("a second migration changed %d files", again.Changed)
	}
}

// TestChartRequestsOfOnePod: requests of one pod traced to different files
// (a helper, the template) are still resolved as one pod, and each is
// reported at its own file and line.
func TestChartRequestsOfOnePod(t *testing.T) {
	res := scanCharts(t, action.Input{Paths: []string{filepath.Join(chartTestdata, "umbrella")}}, rules.DefaultTarget)
	var at []string
	groups := map[string]bool{}
	for _, it := range res.Report.Findings {
		rel, _ := filepath.Rel(filepath.Join(chartTestdata, "umbrella"), it.File)
		at = append(at, fmt.Sprintf("%s:%d %s", filepath.ToSlash(rel), it.Line, it.Container))
		groups[it.Group] = true
	}
	want := []string{"charts/worker/templates/_helpers.tpl:2 worker", "charts/worker/templates/deployment.yaml:21 sidecar"}
	if !slices.Equal(at, want) {
		t.Errorf("findings at %q, want %q", at, want)
	}
	if len(groups) != 1 {
		t.Errorf("the pod's requests were resolved in %d groups, want 1", len(groups))
	}
}

// TestChartValuesFileProved: a values file is chosen only when rendering
// with it gives what migrating the render gives. Migrate moves a GPU-model
// nodeSelector into the claim's selector: when the values hold the
// nodeSelector verbatim the values file drops the label too; when the
// template writes the label from another value, it cannot, and the chart
// gets the post-renderer, and why.
func TestChartValuesFileProved(t *testing.T) {
	for _, tc := range []struct {
		set, values string
		strategy    plan.ChartStrategy
		why         string
		probes      int
	}{
		{strategy: plan.ChartValuesFile, probes: 2},
		// The label from a values file: the values file after it drops it.
		{values: "selector.yaml", strategy: plan.ChartValuesFile, probes: 2},
		// The label from --set: helm applies --set after every values
		// file, so no values file can drop it.
		{set: `nodeSelector.nvidia\.com/gpu\.product=NVIDIA-A100-SXM4-40GB`, strategy: plan.ChartPostRenderer,
			why: "values file: the user's --set flags do not apply over the values file (helm would fail too)"},
		{set: "gpuModel=NVIDIA-A100-SXM4-40GB", strategy: plan.ChartPostRenderer,
			why: "rendering with the values file differs from migrating the render: apps/v1/Deployment//release-name-gpu-app differs"},
	} {
		t.Run(tc.set+tc.values, func(t *testing.T) {
			dir := t.TempDir()
			testfs.Copy(t, filepath.Join(chartTestdata, "gpu-app"), filepath.Join(dir, "gpu-app"))
			in := action.Input{Paths: []string{"gpu-app"}, Dir: dir}
			if tc.set != "" {
				in.Charts.Set = []string{tc.set}
			}
			if tc.values != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.values), []byte("nodeSelector:\n  nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				in.Charts.Values = []string{tc.values}
			}
			res := scanCharts(t, in, rules.DefaultTarget)
			if len(res.Report.Charts) != 1 {
				t.Fatalf("charts %+v", res.Report.Charts)
			}
			c := res.Report.Charts[0]
			if c.Strategy != tc.strategy || !strings.Contains(c.Why, tc.why) || tc.probes > 0 && c.ProbeRenders != tc.probes {
				t.Fatalf("%s (%d probe renders) because %q, want %s (%d) because ...%q", c.Strategy, c.ProbeRenders, c.Why, tc.strategy, tc.probes, tc.why)
			}
			if tc.set != "" && !strings.Contains(c.Command, "--set "+shellQuoted(tc.set)) {
				t.Errorf("command %q does not pass the user's --set", c.Command)
			}
			if c.Strategy != plan.ChartValuesFile {
				return
			}
			// Independently of the choice: the written file renders what
			// migrating the render gives, and no GPU-model label is left.
			migrate(t, in, emit.Write, plan.Options{})
			var user []string
			for _, v := range in.Charts.Values {
				user = append(user, filepath.Join(dir, v))
			}
			assertValuesFileRender(t, filepath.Join(dir, "gpu-app"), in.Charts.Set, user, filepath.Join(dir, "gpu-app", chart.ValuesFileName))
			if tc.values != "" {
				data, _ := os.ReadFile(filepath.Join(dir, "gpu-app", chart.ValuesFileName))
				if !strings.Contains(string(data), "\nnodeSelector: null\n") {
					t.Errorf("the values file does not drop the GPU-model label:\n%s", data)
				}
			}
		})
	}
}

// shellQuoted is s as the printed command quotes it.
func shellQuoted(s string) string {
	if strings.ContainsAny(s, `\ `) {
		return "'" + s + "'"
	}
	return s
}

// assertValuesFileRender renders the chart with set, migrates that render
// in memory, renders it again with set and the values files, and compares
// the objects (claim template names aside).
func assertValuesFileRender(t *testing.T, dir string, set, user []string, values string) {
	t.Helper()
	c, err := chart.Load(dir, chart.Options{KubeVersion: "1.34", Flags: chart.Flags{Set: set, Values: user}})
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.Read(context.Background(), nil, detect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []*inventory.Document
	for _, f := range before.Files {
		docs = append(docs, files.Parse(f.Path, f.Text).Docs...)
	}
	mres, err := action.Migrate(context.Background(), action.Input{Documents: docs}, action.MigrateOptions{Plan: plan.Options{Target: rules.DefaultTarget}})
	if err != nil {
		t.Fatal(err)
	}
	if mres.Migrated == 0 {
		t.Fatal("migrating the render migrated nothing")
	}
	withValues, err := chart.Load(dir, chart.Options{KubeVersion: "1.34", Flags: chart.Flags{Set: set, Values: append(slices.Clone(user), values)}})
	if err != nil {
		t.Fatal(err)
	}
	after, err := withValues.Read(context.Background(), nil, detect.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.Findings) != 0 {
		t.Errorf("the chart rendered with the values file still requests %+v", after.Findings)
	}
	var afterNodes []*yaml.RNode
	for _, d := range after.Docs {
		afterNodes = append(afterNodes, d.Node)
	}
	if d := cmp.Diff(renderedObjects(t, mres.Documents), renderedObjects(t, afterNodes)); d != "" {
		t.Errorf("render with the values file differs from migrating the render (-migrated +rendered):\n%s", d)
	}
}

// TestChartSourceDetectsLikeFiles (issue 23): a chart's templates are
// detected as the same documents in a folder are, by the one detection
// call: device requests, objects that count devices (a ResourceQuota) and
// DRA written for older releases alike. (The chart source ran device
// detection only: the quota and the beta claim template were lost.)
func TestChartSourceDetectsLikeFiles(t *testing.T) {
	docs := map[string]string{
		"pod.yaml":   "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n  - name: c\n    image: cuda\n    resources: {limits: {nvidia.com/gpu: 1}}\n",
		"quota.yaml": "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpus, namespace: ml}\nspec:\n  hard:\n    requests.nvidia.com/gpu: \"4\"\n",
		"claim.yaml": betaClaim,
	}
	dir := t.TempDir()
	for name, text := range docs {
		for _, p := range []string{filepath.Join(dir, "plain", name), filepath.Join(dir, "chart", "templates", name)} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "chart", "Chart.yaml"), []byte("apiVersion: v2\nname: c\nversion: 0.1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds := func(path string) []string {
		res := scanCharts(t, action.Input{Paths: []string{path}, Dir: dir}, rules.DefaultTarget)
		var out []string
		for _, it := range res.Report.Findings {
			out = append(out, filepath.Base(it.File)+" "+it.Resource+" "+string(it.Status))
		}
		slices.Sort(out)
		return out
	}
	plain, charted := kinds("plain"), kinds("chart")
	if len(plain) < 3 {
		t.Fatalf("the folder gives %q: want the request, the quota and the claim template", plain)
	}
	if !slices.Equal(plain, charted) {
		t.Errorf("as a chart's templates: %q\nas a folder:          %q", charted, plain)
	}
}

// A values file outside a chart that renders is one thing to every
// command: scan and check list its requests with the status helm-values
// (not mappable: migrate does not edit values files), check fails on
// them, and migrate warns about each one at the same line and changes
// nothing.
func TestLooseValuesFileIsOneThing(t *testing.T) {
	t.Parallel()
	dir := testfs.Tree(t, map[string]string{
		"values.yaml": "replicaCount: 1\nresources:\n  limits:\n    nvidia.com/gpu: 1\nworker:\n  resources:\n    requests:\n      amd.com/gpu: 2\n",
	})
	ctx := context.Background()
	in := action.Input{Paths: []string{"values.yaml"}, Dir: dir}
	cr, err := action.Check(ctx, in, action.CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var scanned []string
	for _, it := range cr.Report.Findings {
		scanned = append(scanned, fmt.Sprintf("%s:%d %s %s", it.File, it.Line, it.Resource, it.Status))
	}
	want := []string{"values.yaml:4 nvidia.com/gpu helm-values", "values.yaml:8 amd.com/gpu helm-values"}
	if diff := cmp.Diff(want, scanned); diff != "" {
		t.Errorf("scan (-want +got):\n%s", diff)
	}
	if cr.Failures != 2 || cr.Report.Summary.HelmValues != 2 || cr.Report.Summary.Mappable != 0 {
		t.Errorf("check: %d failures, summary %+v; want both requests failing the gate and counted as helm-values", cr.Failures, cr.Report.Summary)
	}
	mr, err := action.Migrate(ctx, in, action.MigrateOptions{Output: emit.Diff, Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, d := range mr.Diagnostics {
		if d.Rule == plan.RuleHelmValues {
			warned = append(warned, fmt.Sprintf("%s:%d %s %s", d.File, d.Line, d.Resource, d.Rule))
		}
	}
	if diff := cmp.Diff([]string{"values.yaml:4 nvidia.com/gpu helm/values", "values.yaml:8 amd.com/gpu helm/values"}, warned); diff != "" {
		t.Errorf("migrate's warnings (-want +got):\n%s", diff)
	}
	if mr.Changed != 0 || mr.Migrated != 0 {
		t.Errorf("migrate changed %d files, migrated %d workloads: want nothing", mr.Changed, mr.Migrated)
	}
}

// TestChartOwnDRAValues: a chart whose values offer DRA themselves
// (ollama's ollama.gpu.draEnabled) is told which value to set, when the
// chart rendered with it gives every pod its devices through claims: at
// 1.33 (its ResourceClaimTemplate is then resource.k8s.io/v1beta1) and at
// 1.34 (v1), and migrate writes the values file that sets it. On AMD GPUs
// the switch alone would claim a gpu.nvidia.com device: it is named with
// why it does not fit (the chart's draDriverClass must change too), and
// the chart gets the post-renderer.
func TestChartOwnDRAValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		target   rules.Version
		set      []string
		strategy plan.ChartStrategy
		why      string
	}{
		{"1.33", rules.Version{Major: 1, Minor: 33}, nil, plan.ChartValuesFile, "the chart's own DRA values: ollama.gpu.draEnabled=true moves the requests to claims"},
		{"1.34", rules.Version{Major: 1, Minor: 34}, nil, plan.ChartValuesFile, "the chart's own DRA values: ollama.gpu.draEnabled=true moves the requests to claims"},
		{"amd", rules.Version{Major: 1, Minor: 34}, []string{"ollama.gpu.type=amd"}, plan.ChartPostRenderer,
			"ollama.gpu.draEnabled=true: a pod would not get the devices it has: Deployment/default/release-name-ollama container ollama: before: amd.com/gpu: 1; after: no device"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			testfs.Copy(t, filepath.Join("..", "testdata", "helm", "ollama"), filepath.Join(dir, "ollama"))
			in := action.Input{Paths: []string{"ollama"}, Dir: dir, Charts: action.ChartValues{Set: append([]string{"ollama.gpu.enabled=true"}, tc.set...)}}
			res := scanCharts(t, in, tc.target)
			if len(res.Report.Charts) != 1 {
				t.Fatalf("charts %+v", res.Report.Charts)
			}
			c := res.Report.Charts[0]
			if c.Strategy != tc.strategy || !strings.Contains(c.Why, tc.why) {
				t.Fatalf("%s because %q, want %s because ...%q", c.Strategy, c.Why, tc.strategy, tc.why)
			}
			if c.Strategy != plan.ChartValuesFile {
				return
			}
			if !slices.Equal(c.Sets, []string{"ollama.gpu.draEnabled=true"}) || !strings.Contains(c.Why, "ollama.gpu.draDriverClass=gpu.nvidia.com") {
				t.Errorf("sets %v, why %q: want the switch, and its sibling values named", c.Sets, c.Why)
			}
			migrate(t, in, emit.Write, plan.Options{Target: tc.target})
			data, err := os.ReadFile(filepath.Join(dir, "ollama", chart.ValuesFileName))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), "ollama:\n  gpu:\n    draEnabled: true\n") {
				t.Errorf("the values file does not set the switch:\n%s", data)
			}
		})
	}
}

// TestChartNamespace: a chart that refuses the default namespace renders
// with the namespace the user gives (--namespace, as helm template), its
// objects and their claims in it, and the command kubedra prints passes it.
func TestChartNamespace(t *testing.T) {
	t.Parallel()
	dir := testfs.Tree(t, map[string]string{
		"app/Chart.yaml": "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"app/templates/deploy.yaml": `{{- if eq .Release.Namespace "default" }}{{ fail "install app into a namespace of its own" }}{{ end -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: {{ .Release.Namespace }}
spec:
  template:
    spec:
      containers:
      - name: c
        image: c
        resources:
          limits:
            nvidia.com/gpu: 1
`,
	})
	res := scanCharts(t, action.Input{Paths: []string{"app"}, Dir: dir}, rules.DefaultTarget)
	if c := res.Report.Charts; len(c) != 1 || c[0].Strategy != plan.ChartNotRendered || !strings.Contains(c[0].Why, "install app into a namespace of its own") {
		t.Fatalf("without a namespace: %+v, want the chart's own refusal", c)
	}
	res = scanCharts(t, action.Input{Paths: []string{"app"}, Dir: dir, Charts: action.ChartValues{Namespace: "ml"}}, rules.DefaultTarget)
	c := res.Report.Charts
	if len(c) != 1 || c[0].Findings != 1 || !strings.Contains(c[0].Command, "--namespace ml") {
		t.Fatalf("with --namespace ml: %+v, want the request found and the namespace in the command", c)
	}
	if got := res.Report.Findings; len(got) != 1 || got[0].Finding.Namespace != "ml" {
		t.Errorf("items %+v, want the Deployment in ml", got)
	}
}
