package bench

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// BenchmarkProof measures migrate's proof of kustomize units (issue 24:
// the proof <= 2x the time of rendering the units) on llm-d's guides
// (testdata/llm-d, 13 units): the units' proof (proof.Kustomization:
// both renders and the comparison) against rendering each unit before
// and after with krusty, in the same run, median of alternated rounds.
// The after text is the migration's, laid over the disk as migrate does.
func BenchmarkProof(b *testing.B) {
	src := filepath.Join("..", "testdata", "llm-d")
	tree, _ := kustomize.Find([]string{src}, func(p string) string { return p })
	roots := tree.Roots()
	if len(roots) == 0 {
		b.Fatal("no kustomize unit in testdata/llm-d")
	}
	// The migration's new text: migrate -w on a copy, laid over the
	// original as migrate lays what it holds back.
	dir := b.TempDir()
	testfs.Copy(b, src, dir)
	mig, err := action.Migrate(b.Context(), action.Input{Paths: []string{"."}, Dir: dir}, action.MigrateOptions{Output: emit.Write,
		Plan: plan.Options{Target: rules.DefaultTarget}})
	if err != nil || mig.Changed == 0 {
		b.Fatalf("migrate -w: %v (%d files changed)", err, mig.Changed)
	}
	over := map[string][]byte{}
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			if data, err := os.ReadFile(p); err == nil {
				abs, _ := filepath.Abs(filepath.Join(src, rel))
				over[abs] = data
			}
		}
		return nil
	})
	disk, after := filesys.MakeFsOnDisk(), proof.NewOverlay(over)
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	render := func() {
		for _, k := range roots {
			for _, fsys := range []filesys.FileSystem{disk, after} {
				if _, err := proof.Build(fsys, abs(k.Dir())); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	prove := func() {
		for _, k := range roots {
			if r := proof.Kustomization(abs(k.Dir()), k.Dir(), disk, after, proof.Classes{}); r.Status == proof.NotRendered {
				b.Fatalf("%s: %s", r.Unit, r.Error)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		var ratios []float64
		var base, cost time.Duration
		for range 5 {
			base = timed(render)
			cost = timed(prove)
			ratios = append(ratios, float64(cost)/float64(base))
		}
		slices.Sort(ratios)
		r := ratios[len(ratios)/2]
		b.ReportMetric(base.Seconds(), "render-s")
		b.ReportMetric(cost.Seconds(), "proof-s")
		b.ReportMetric(r, "proof/render")
		b.Logf("%d units; ratios %v; last round render %v, proof %v", len(roots), ratios, base, cost)
		if r > 2.0 {
			b.Errorf("the proof takes %.2fx the time of rendering its units (target <= 2)", r)
		}
	}
}

func timed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}
