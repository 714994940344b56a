package fuzz_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/internal/fuzzstat"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rewrite/plan/plantest"
	"github.com/kubedra/kubedra/rules"
)

// migrateText runs the pipeline migrate runs on one file, in memory:
// split, detect, plan (test rules), rewrite.
func migrateText(t *testing.T, data []byte, o plan.Options) (*files.File, *plan.FileResult, rewrite.Result, error) {
	f := files.Parse("f.yaml", data)
	var findings []inventory.Finding
	for _, d := range f.Docs {
		findings = append(findings, detect.Document(d, detect.Options{})...)
	}
	p, err := plan.NewPlanner(plantest.Resolver{}, o)
	if err != nil {
		t.Fatal(err)
	}
	r := p.File("f.yaml", findings)
	res, err := rewrite.File(f.Data, 0, f.Docs, r.Plan)
	return f, r, res, err
}

// FuzzRewrite (issue 14 item 13) migrates arbitrary text as migrate does
// a file (split, detect, plan with the test rules, rewrite), in memory so
// that it runs thousands of times a second. Properties: no panic; the
// pieces' old text is the input; a piece changes only a document the plan
// edits (every other document keeps its bytes, and so does one that could
// not be edited); the output parses as well as the input did; a second
// run plans nothing. Seeds are the small golden inputs; crashers are kept
// in testdata/fuzz/FuzzRewrite.
func FuzzRewrite(f *testing.F) {
	// Few, small seeds: the fuzzer runs each seed as one round trip to its
	// worker that carries the whole coverage map (half a megabyte for this
	// package's test binary, about 60 ms), so a large seed set spends a
	// short run on its baseline and fuzzes nothing. The golden inputs up to
	// 2 KB cover the edit paths; mutation finds the rest.
	seeds, _ := filepath.Glob("../testdata/*/input.*")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err == nil && len(b) <= 2<<10 {
			f.Add(b)
		}
	}
	gpu := "apiVersion: v1\r\nkind: Pod\r\nmetadata: {name: p}\r\nspec:\r\n  containers:\r\n  - name: c\r\n    resources:\r\n      limits:\r\n        # one\r\n        nvidia.com/gpu: 1 # two\r\n# end\r\n"
	f.Add([]byte("\xef\xbb\xbf" + gpu + "...\r\n- op: add\r\n"))
	o := plan.Options{Strategy: plan.Claims, AllowLossy: true, Target: rules.DefaultTarget, Encoder: plantest.Encoder{}}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzstat.Count()
		file, r, res, err := migrateText(t, data, o)
		if err != nil {
			return // reported; nothing changes
		}
		var old, out bytes.Buffer
		edited := map[int]bool{} // span starts of planned documents
		if r.Plan != nil {
			byIndex := map[int]*inventory.Document{}
			for _, d := range file.Docs {
				byIndex[d.Origin.Index] = d
			}
			for _, dp := range r.Plan.Docs {
				if d := byIndex[dp.Index]; d != nil {
					edited[d.Span.Start] = true
				}
			}
		}
		for _, pc := range res.Pieces {
			start := old.Len()
			old.Write(pc.Old)
			out.Write(pc.New)
			if !bytes.Equal(pc.Old, pc.New) && !edited[start] {
				t.Fatalf("a piece at byte %d changed, but no edit was planned there:\n%s", start, pc.Old)
			}
		}
		if !bytes.Equal(old.Bytes(), data) {
			t.Fatal("the pieces' old text is not the input")
		}
		if r.Plan != nil && deviceEditsOnly(r.Plan) {
			for _, pc := range res.Pieces {
				if !bytes.Equal(pc.Old, pc.New) {
					keepsData(t, pc.Old, pc.New)
				}
			}
		}
		if bytes.Equal(out.Bytes(), data) {
			return
		}
		again, r2, _, err := migrateText(t, out.Bytes(), o)
		if again.ParseErrors > file.ParseErrors {
			t.Fatalf("output does not parse: %v\ninput:\n%s\noutput:\n%s", again.Diagnostics, data, out.Bytes())
		}
		if err == nil && len(res.Failures) == 0 && r2.Plan != nil && len(r2.Plan.Docs) > 0 {
			t.Fatalf("a second run plans edits:\ninput:\n%s\noutput:\n%s", data, out.Bytes())
		}
	})
}

// deviceEditsOnly reports whether a plan edits devices only: no DRA
// upgrade or governance edit (which remove or rewrite documents) and no
// field set by a framework's rule.
func deviceEditsOnly(p *plan.FilePlan) bool {
	if len(p.Upgrades) > 0 || len(p.Governance) > 0 {
		return false
	}
	for _, dp := range p.Docs {
		if len(dp.Sets) > 0 {
			return false
		}
	}
	return true
}

// keepsData fails unless every scalar value of the old text, outside what
// a device edit changes (resources, and the node selectors, affinity and
// tolerations a hint may leave), is in the new text as often: an edit
// written into a block scalar (which once took "# ..." lines out of an env
// value) loses them, and the proof, which compares devices, does not see
// it.
func keepsData(t *testing.T, oldText, newText []byte) {
	t.Helper()
	count := func(text []byte) map[string]int {
		out := map[string]int{}
		for _, d := range files.Parse("f.yaml", text).Docs {
			if d.Root != nil {
				scalars(d.Root, out)
			}
		}
		return out
	}
	before, after := count(oldText), count(newText)
	for v, n := range before {
		if after[v] < n {
			t.Fatalf("the edit lost the value %q (%d of %d left):\ninput:\n%s\noutput:\n%s", v, after[v], n, oldText, newText)
		}
	}
}

func scalars(n *yaml.Node, out map[string]int) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			scalars(c, out)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch n.Content[i].Value {
			case "resources", "nodeSelector", "affinity", "tolerations":
				continue
			}
			scalars(n.Content[i+1], out)
		}
	case yaml.ScalarNode:
		out[n.Value]++
	}
}
