package bench

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/inventory/chart"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// chartCorpus is where the real charts are (../shared/corpus/dev).
const chartCorpus = "../../shared/corpus/dev"

// chartArgs are the values some corpus charts need to render.
var chartArgs = map[string][]string{
	"aws-samples__awsome-inference/2.projects/multinode-triton-trtllm-inference/multinode_helm_chart/chart": {"--values", "example_values.yaml"},
	"triton-inference-server__server/deploy/fleetcommand":                                                   {"--set", "image.serverArgs={--model-repository=s3://bucket/models}"},
}

// renderableCharts lists the corpus charts that render on 1.34 (with
// their values), or skips.
func renderableCharts(b *testing.B) []string {
	b.Helper()
	if _, err := os.Stat(chartCorpus); err != nil {
		b.Skipf("the corpus is not here (%v): this benchmark needs ../shared/corpus/dev", err)
	}
	var out []string
	_ = filepath.WalkDir(chartCorpus, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != chart.FileName {
			return nil
		}
		dir := filepath.Dir(p)
		if _, err := renderChart(dir); err == nil {
			out = append(out, dir)
		}
		return nil
	})
	if len(out) < 5 {
		b.Fatalf("only %d corpus charts render", len(out))
	}
	return out
}

// chartOptions are a corpus chart's values as chart.Options.
func chartOptions(dir string) chart.Options {
	rel, _ := filepath.Rel(chartCorpus, dir)
	opts := chart.Options{KubeVersion: "1.34"}
	args := chartArgs[rel]
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--values":
			opts.Values = append(opts.Values, filepath.Join(dir, args[i+1]))
		case "--set":
			opts.Set = append(opts.Set, args[i+1])
		}
	}
	return opts
}

// renderChart is the baseline: what helm template does for one chart
// (load, render), with the Helm SDK in process.
func renderChart(dir string) (int, error) {
	c, err := chart.Load(dir, chartOptions(dir))
	if err != nil {
		return 0, err
	}
	fs, err := c.Render(context.Background(), nil)
	return len(fs), err
}

// BenchmarkScanCharts scans each renderable chart of the corpus with
// action.Scan, what `kubedra scan` runs (render, detection, values-key
// probes, strategy choice; the rules loaded once), and reports the time as a ratio of rendering the same charts
// with the Helm SDK (helm template's work) in the same run, the median of
// several alternating rounds, with the probe renders the scans took.
func BenchmarkScanCharts(b *testing.B) {
	dirs := renderableCharts(b)
	set := rules.Default() // loaded once, as in one run over many charts
	b.ResetTimer()
	for range b.N {
		var ratios []float64
		var base, scan time.Duration
		probes, findings := 0, 0
		for range rounds {
			start := time.Now()
			for _, d := range dirs {
				if _, err := renderChart(d); err != nil {
					b.Fatal(err)
				}
			}
			base = time.Since(start)
			probes, findings = 0, 0
			start = time.Now()
			for _, d := range dirs {
				opts := chartOptions(d)
				in := action.Input{Paths: []string{d}, Charts: action.ChartValues{Values: opts.Values, Set: opts.Set}}
				res, err := action.Scan(context.Background(), in, action.ScanOptions{Rules: set, Target: rules.Version{Major: 1, Minor: 34}})
				if err != nil {
					b.Fatal(err)
				}
				r := res.Report
				if len(r.Charts) != 1 || r.Charts[0].Strategy == plan.ChartNotRendered {
					b.Fatalf("%s: charts %+v", d, r.Charts)
				}
				probes += r.Charts[0].ProbeRenders
				findings += r.Summary.Findings
			}
			scan = time.Since(start)
			ratios = append(ratios, scan.Seconds()/base.Seconds())
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], "scan/render")
		b.ReportMetric(base.Seconds()*1000, "render-ms")
		b.ReportMetric(scan.Seconds()*1000, "scan-ms")
		b.ReportMetric(float64(probes), "probe-renders")
		b.Logf("%d charts, %d findings, %d probe renders; ratios %v; last round render %v, scan %v", len(dirs), findings, probes, ratios, base, scan)
	}
}
