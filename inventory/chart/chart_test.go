package chart

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

// read loads, renders and traces a chart, failing the test on errors.
func read(t testing.TB, dir string, opts Options) (*Rendered, Stats) {
	t.Helper()
	c, err := Load(dir, opts)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	r, err := c.Read(context.Background(), nil, detect.Options{})
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	st, err := c.Trace(context.Background(), r, detect.Options{})
	if err != nil {
		t.Fatalf("%s: trace: %v", dir, err)
	}
	return r, st
}

// lineAt is line n (1-based) of a file.
func lineAt(t testing.TB, file string, n int) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	if n < 1 || n > len(lines) {
		t.Fatalf("%s has no line %d", file, n)
	}
	return lines[n-1]
}

func TestRenderNamesTemplates(t *testing.T) {
	c, err := Load("testdata/gpu-app", Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := c.Render(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range fs {
		paths = append(paths, f.Path)
		if !strings.HasPrefix(f.Source, "gpu-app/templates/") {
			t.Errorf("source %q is not Helm's name of a template", f.Source)
		}
	}
	// extra.yaml renders nothing without extraObjects: it is not listed.
	if want := []string{filepath.Join("testdata", "gpu-app", "templates", "deployment.yaml")}; !slices.Equal(paths, want) {
		t.Errorf("rendered files %q, want %q", paths, want)
	}
}

func TestTraceTemplateLines(t *testing.T) {
	for _, tc := range []struct {
		dir                       string
		opts                      Options
		container, line, qty      string
		values, key, valuesFile   string
		valuesLineHas             string
		wantLiteral, wantNoValues bool
	}{
		{dir: "testdata/gpu-app", container: "app", line: "toYaml .Values.resources", qty: "1",
			values: ".Values.resources", key: `resources.limits.nvidia\.com/gpu`, valuesFile: "testdata/gpu-app/values.yaml", valuesLineHas: "nvidia.com/gpu: 1"},
		{dir: "testdata/literal", container: "train", line: "nvidia.com/gpu: {{ .Values.gpus }}", qty: "2",
			values: ".Values.gpus", key: "gpus", valuesFile: "testdata/literal/values.yaml", valuesLineHas: "gpus: 2"},
		// The template writes the request itself: no values key.
		{dir: "testdata/literal", container: "sidecar", line: "nvidia.com/gpu: 1", qty: "1", wantNoValues: true},
		// --set feeds it: the key names the flag.
		{dir: "testdata/literal", opts: Options{Flags: Flags{Set: []string{"gpus=4"}}}, container: "train", line: "{{ .Values.gpus }}", qty: "4",
			values: ".Values.gpus", key: "gpus", valuesFile: "--set gpus=4"},
		// --set-string after --set: the later flag is named.
		{dir: "testdata/literal", opts: Options{Flags: Flags{Set: []string{"gpus=4"}, SetString: []string{"x=y,gpus=3"}}}, container: "train", line: "{{ .Values.gpus }}", qty: "3",
			values: ".Values.gpus", key: "gpus", valuesFile: "--set-string x=y,gpus=3"},
		// A -f file sets it: the line is that file's.
		{dir: "testdata/gpu-app", opts: Options{Flags: Flags{Values: []string{"testdata/more-gpus.yaml"}}}, container: "app", line: ".Values.resources", qty: "4",
			values: ".Values.resources", key: `resources.limits.nvidia\.com/gpu`, valuesFile: "testdata/more-gpus.yaml", valuesLineHas: "nvidia.com/gpu: 4"},
		// A dependency under charts/: its template and helper, the parent's
		// worker.x feeding its .Values.x.
		{dir: "testdata/umbrella", container: "worker", line: "toYaml .Values.resources", qty: "2",
			values: ".Values.resources", key: `worker.resources.limits.nvidia\.com/gpu`, valuesFile: "testdata/umbrella/values.yaml", valuesLineHas: "nvidia.com/gpu: 2"},
		// ... and the dependency's own default.
		{dir: "testdata/umbrella", container: "sidecar", line: "nvidia.com/gpu: {{ .Values.sidecarGpus }}", qty: "1",
			values: ".Values.sidecarGpus", key: "worker.sidecarGpus", valuesFile: "testdata/umbrella/charts/worker/values.yaml", valuesLineHas: "sidecarGpus: 1"},
	} {
		t.Run(filepath.Base(tc.dir)+"/"+tc.container, func(t *testing.T) {
			r, _ := read(t, tc.dir, tc.opts)
			var f *inventory.Finding
			for i := range r.Findings {
				if r.Findings[i].Container == tc.container {
					f = &r.Findings[i]
				}
			}
			if f == nil {
				t.Fatalf("no finding for container %s in %+v", tc.container, r.Findings)
			}
			if got := lineAt(t, f.Chart.Template, f.Line); !strings.Contains(got, tc.line) {
				t.Errorf("%s:%d is %q, want the line with %q", f.Chart.Template, f.Line, got, tc.line)
			}
			if f.Quantity() != tc.qty {
				t.Errorf("quantity %s, want %s", f.Quantity(), tc.qty)
			}
			cs := f.Chart
			if cs == nil || cs.Chart != tc.dir {
				t.Fatalf("chart source %+v, want chart %s", cs, tc.dir)
			}
			if tc.wantNoValues {
				if cs.Key != "" || cs.Values != "" {
					t.Errorf("a literal request names values %+v", cs)
				}
				return
			}
			if cs.Values != tc.values || cs.Key != tc.key || cs.ValuesFile != tc.valuesFile {
				t.Errorf("values %q key %q file %q, want %q %q %q", cs.Values, cs.Key, cs.ValuesFile, tc.values, tc.key, tc.valuesFile)
			}
			if tc.valuesLineHas != "" {
				if got := lineAt(t, cs.ValuesFile, cs.ValuesLine); !strings.Contains(got, tc.valuesLineHas) {
					t.Errorf("%s:%d is %q, want %q", cs.ValuesFile, cs.ValuesLine, got, tc.valuesLineHas)
				}
			}
		})
	}
}

func TestErrorsNameTheChart(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("required/Chart.yaml", "apiVersion: v2\nname: required\nversion: 0.1.0\n")
	write("required/templates/pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ required \"name is required\" .Values.name }}\n")
	write("deps/Chart.yaml", "apiVersion: v2\nname: deps\nversion: 0.1.0\ndependencies:\n- name: lib\n  version: 1.0.0\n  repository: file://../lib\n")
	write("schema/Chart.yaml", "apiVersion: v2\nname: schema\nversion: 0.1.0\n")
	write("schema/values.schema.json", `{"type": "object", "required": ["gpus"], "properties": {"gpus": {"type": "integer"}}}`)
	write("schema/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	write("bad/Chart.yaml", "apiVersion: v2\nname: [bad\n")
	write("yaml/Chart.yaml", "apiVersion: v2\nname: yaml\nversion: 0.1.0\n")
	write("yaml/templates/cm.yaml", "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b: c\n")
	for _, tc := range []struct {
		chart, file string
		line        int
		opts        Options
		msg         string
	}{
		{chart: "required", file: "required/templates/pod.yaml", line: 4, msg: "name is required"},
		{chart: "deps", file: "deps/Chart.yaml", msg: "missing in charts/ directory: lib"},
		{chart: "bad", file: "bad/Chart.yaml", msg: "Chart.yaml"},
		{chart: "schema", file: "schema/values.schema.json", msg: "gpus"},
		{chart: "required", file: "required/Chart.yaml", opts: Options{Flags: Flags{Values: []string{"no-such-values.yaml"}}}, msg: "no-such-values.yaml"},
		{chart: "yaml", file: "yaml/templates/cm.yaml", msg: "YAML parse error"},
		{chart: "required", file: "required/Chart.yaml", opts: Options{Flags: Flags{Values: []string{"-"}}}, msg: "stdin is not read"},
		{chart: "required", file: "required/Chart.yaml", opts: Options{Flags: Flags{SetFile: []string{"name=-"}}}, msg: "--set-file name=-: stdin is not read"},
	} {
		t.Run(tc.chart+"/"+filepath.Base(tc.file), func(t *testing.T) {
			tc.opts.Dir = dir
			c, err := Load(tc.chart, tc.opts)
			if err == nil {
				_, err = c.Render(context.Background(), nil)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want a chart.Error", err, err)
			}
			if e.File != tc.file || e.Line != tc.line || !strings.Contains(e.Error(), tc.msg) {
				t.Errorf("%s:%d %q, want %s:%d and %q", e.File, e.Line, e.Error(), tc.file, tc.line, tc.msg)
			}
			if d := e.Diagnostic(); d.Rule != RuleRender || d.Severity != inventory.Error {
				t.Errorf("diagnostic %+v", d)
			}
		})
	}
}

// corpusDir holds the real charts (../shared/corpus/dev beside the repo).
const corpusDir = "../../../shared/corpus/dev"

// corpusCharts lists the chart folders of the corpus, or skips.
func corpusCharts(t testing.TB) []string {
	t.Helper()
	if _, err := os.Stat(corpusDir); err != nil {
		t.Skipf("the corpus is not here (%v): these tests need ../shared/corpus/dev beside the repo", err)
	}
	var out []string
	_ = filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == FileName {
			out = append(out, filepath.Dir(p))
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatal("no Chart.yaml in the corpus")
	}
	return out
}

// CorpusValues are the values a corpus chart needs to render, as its
// README asks (a chart that requires them fails without).
var CorpusValues = map[string]Options{
	// values.schema.json requires gpu, gpuPerNode, ...: example_values.yaml sets them.
	"aws-samples__awsome-inference/2.projects/multinode-triton-trtllm-inference/multinode_helm_chart/chart": {Flags: Flags{Values: []string{"example_values.yaml"}}},
	// `required` image.serverArgs.
	"triton-inference-server__server/deploy/fleetcommand": {Flags: Flags{Set: []string{"image.serverArgs={--model-repository=s3://bucket/models}"}}},
	// The runai CLI always passes gitSync, and gpuInt for --gpu 1.
	"run-ai__runai-cli/charts/mpijob": {Flags: Flags{Set: []string{"gitSync.sync=false", "gpuInt=1"}}},
	"run-ai__runai-cli/charts/runai":  {Flags: Flags{Set: []string{"gitSync.sync=false", "gpuInt=1"}}},
	// The chart's own values for Gaudi, NVIDIA and ROCm.
	"opea-project__GenAIInfra/helm-charts/common/tgi":  {Flags: Flags{Values: []string{"nv-values.yaml"}}},
	"opea-project__GenAIInfra/helm-charts/common/tei":  {Flags: Flags{Values: []string{"gaudi-values.yaml"}}},
	"opea-project__GenAIInfra/helm-charts/common/vllm": {Flags: Flags{Values: []string{"gaudi-values.yaml"}}},
	// kubeVersion: 1.27 - 1.29.
	"huggingface__optimum-habana/examples/kubernetes": {KubeVersion: "1.29"},
}

// CorpusMissing are the corpus charts whose dependencies are not in the
// corpus (helm dependency build would fetch them): they cannot render.
var CorpusMissing = map[string]string{
	"opea-project__GenAIInfra/helm-charts/common/tei":   "commonlib",
	"opea-project__GenAIInfra/helm-charts/common/tgi":   "commonlib",
	"opea-project__GenAIInfra/helm-charts/common/vllm":  "commonlib",
	"run-ai__runai-cli/charts/mpijob":                   "runai-common",
	"run-ai__runai-cli/charts/runai":                    "runai-common",
	"triton-inference-server__server/deploy/k8s-onprem": "traefik, prometheus-adapter",
}

// corpusLines are the template lines (chart-relative) some corpus charts'
// findings must point at, in finding order: read by hand.
var corpusLines = map[string][]string{
	"NVIDIA__nim-deploy@be34031ce621/helm/nim-llm": {"templates/deployment.yaml:193"},
	// A LeaderWorkerSet: leader and worker templates, GPUs and EFA each.
	"aws-samples__awsome-inference/2.projects/multinode-triton-trtllm-inference/multinode_helm_chart/chart": {
		"templates/deployment.yaml:116", "templates/deployment.yaml:117", "templates/deployment.yaml:207", "templates/deployment.yaml:208"},
	"triton-inference-server__server/deploy/aws":                                    {"templates/deployment.yaml:57"},
	"aws-neuron__neuron-helm-charts/charts/neuron-helm-chart":                       {"templates/tests/test-resource.yaml:19"},
	"GoogleCloudPlatform__kubernetes-engine-samples/app-design-center/ai-inference": {"templates/deployment.yaml:65"},
}

// TestCorpusCharts renders every chart of the corpus and checks that each
// finding points at a template line that writes the resource or reads the
// values key that fed it, and that the values key is on its values line.
func TestCorpusCharts(t *testing.T) {
	rendered, findings := 0, 0
	for _, dir := range corpusCharts(t) {
		rel, _ := filepath.Rel(corpusDir, dir)
		t.Run(rel, func(t *testing.T) {
			opts := CorpusValues[rel]
			if opts.KubeVersion == "" {
				opts.KubeVersion = "1.34"
			}
			for i, v := range opts.Values {
				opts.Values[i] = filepath.Join(dir, v)
			}
			if dep, ok := CorpusMissing[rel]; ok {
				_, err := Load(dir, opts)
				var e *Error
				if !errors.As(err, &e) || e.File != filepath.Join(dir, FileName) || !strings.Contains(e.Error(), "missing in charts/ directory: "+dep) {
					t.Errorf("error %v, want Chart.yaml naming the missing %s", err, dep)
				}
				vendored := filepath.Join("testdata", "deps", dep)
				if _, err := os.Stat(vendored); err != nil {
					return // not vendored (a remote chart): it cannot render here
				}
				// As after helm dependency build: the chart with its
				// dependency under charts/.
				tmp := filepath.Join(t.TempDir(), filepath.Base(dir))
				copyDir(t, dir, tmp)
				copyDir(t, vendored, filepath.Join(tmp, "charts", dep))
				dir = tmp
			}
			r, st := read(t, dir, opts)
			rendered++
			if len(r.Docs) == 0 {
				t.Fatal("the chart rendered no document")
			}
			var at []string
			for _, f := range r.Findings {
				rel, _ := filepath.Rel(dir, f.Chart.Template)
				at = append(at, fmt.Sprintf("%s:%d", filepath.ToSlash(rel), f.Line))
			}
			if want, ok := corpusLines[rel]; ok && !slices.Equal(at, want) {
				t.Errorf("findings at %q, want %q", at, want)
			}
			for _, f := range r.Findings {
				findings++
				cs := f.Chart
				if cs == nil {
					t.Fatalf("%s:%d has no chart source", f.Origin.Path, f.Line)
				}
				if !strings.HasPrefix(cs.Template, dir+string(filepath.Separator)) || f.Line == 0 {
					t.Errorf("finding at %s:%d, want a template line of %s", cs.Template, f.Line, dir)
					continue
				}
				got := lineAt(t, cs.Template, f.Line)
				want := f.Resource
				if cs.Values != "" {
					want = cs.Values
				}
				if !strings.Contains(got, want) {
					t.Errorf("%s:%d is %q, want the line with %q", cs.Template, f.Line, got, want)
				}
				if cs.Key != "" && cs.ValuesLine > 0 {
					leaf := splitLast(cs.Key)
					if vl := lineAt(t, cs.ValuesFile, cs.ValuesLine); !strings.Contains(vl, leaf+":") {
						t.Errorf("%s:%d is %q, want the key %s", cs.ValuesFile, cs.ValuesLine, vl, leaf)
					}
				}
				t.Logf("%s:%d (rendered %s:%d) %s <- %s %s %s:%d (%d probe renders, %d candidates)", cs.Template, f.Line, cs.Rendered, cs.RenderedLine, f.Resource, cs.Values, cs.Key, cs.ValuesFile, cs.ValuesLine, st.Renders, st.Candidates)
			}
		})
	}
	t.Logf("%d charts rendered, %d findings traced", rendered, findings)
	if rendered < 15 || findings < 19 {
		t.Errorf("%d charts rendered with %d findings: the corpus lost its charts?", rendered, findings)
	}
}

// splitLast is the last key of a --set path (dots escaped in keys).
func splitLast(key string) string {
	key = strings.ReplaceAll(key, `\.`, "\x00")
	parts := strings.Split(key, ".")
	return strings.ReplaceAll(parts[len(parts)-1], "\x00", ".")
}

// copyDir copies the folder src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
