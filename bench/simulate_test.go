package bench

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
)

// simRounds alternates baseline and simulate runs; the median ratio counts.
const simRounds = 3

// simulateFixture writes 1,000 Deployments of 10 replicas asking one GPU
// each (10,000 pods), in 100 files, and an inventory of 1,000 nodes of 8
// GPUs (a p5.48xlarge pool and a tainted a3-highgpu-8g pool).
func simulateFixture(b *testing.B) (dir, fleet string, paths []string) {
	b.Helper()
	root := b.TempDir()
	dir = filepath.Join(root, "manifests")
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	for f := range 100 {
		var s strings.Builder
		for w := range 10 {
			fmt.Fprintf(&s, `---
apiVersion: apps/v1
kind: Deployment
metadata: {name: serve-%d-%d, namespace: team-%d}
spec:
  replicas: 10
  template:
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers:
      - name: main
        image: vllm/vllm-openai:v0.9.0
        resources:
          limits: {nvidia.com/gpu: %d}
`, f, w, f%7, 1+w%2)
		}
		p := filepath.Join(dir, fmt.Sprintf("f%03d.yaml", f))
		if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, p)
	}
	fleet = filepath.Join(root, "fleet.yaml")
	inv := `apiVersion: kubedra.io/v1alpha1
kind: NodeInventory
pools:
- {name: p5, shape: p5.48xlarge, count: 500}
- {name: a3, shape: a3-highgpu-8g, count: 500, taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}
`
	if err := os.WriteFile(fleet, []byte(inv), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir, fleet, paths
}

// BenchmarkSimulate simulates 1,000 workloads (10,000 pods) on 1,000
// nodes of 8 devices (in-memory migrate, device-plugin fit, DRA fit with
// the structured allocator) and reports the time as a ratio of a
// single-goroutine kyaml parse of the same manifests. Target (issue 12):
// seconds, not minutes.
func BenchmarkSimulate(b *testing.B) {
	dir, fleet, paths := simulateFixture(b)
	b.ResetTimer()
	for range b.N {
		var ratios []float64
		var base, sim time.Duration
		var summary struct {
			Summary struct{ Workloads, Pods, PodsBefore, PodsAfter, Worse int }
		}
		for range simRounds {
			base = baseline(b, paths)
			streams, out, errOut := app.TestStreams("", map[string]string{"KUBEDRA_CONFIG": "none"}, "")
			start := time.Now()
			code := app.Main([]string{"kubedra", "simulate", "-o", "json", "--nodes", fleet, dir}, streams)
			sim = time.Since(start)
			if code != 0 {
				b.Fatalf("simulate exited %d: %s", code, errOut)
			}
			if err := json.Unmarshal(out.Bytes(), &summary); err != nil {
				b.Fatal(err)
			}
			ratios = append(ratios, sim.Seconds()/base.Seconds())
		}
		slices.Sort(ratios)
		s := summary.Summary
		if s.Workloads != 1000 || s.Pods != 10000 || s.Worse != 0 || s.PodsAfter != s.PodsBefore {
			b.Fatalf("summary %+v", s)
		}
		b.ReportMetric(ratios[len(ratios)/2], "simulate/baseline")
		b.ReportMetric(base.Seconds(), "baseline-s")
		b.ReportMetric(sim.Seconds(), "simulate-s")
		b.Logf("ratios %v; last round baseline %v, simulate %v; %d workloads, %d pods, %d placed before, %d after",
			ratios, base, sim, s.Workloads, s.Pods, s.PodsBefore, s.PodsAfter)
	}
}
