package action_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

const gpuPod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\nspec:\n  containers:\n  - name: c\n    image: cuda\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n"

// pods is a stream of n GPU pods, a ConfigMap between each.
func pods(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "---\n"+gpuPod, fmt.Sprintf("p%d", i))
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)
	}
	return b.String()
}

func migrate(t *testing.T, in action.Input, mode emit.Mode, o plan.Options) (*action.MigrateResult, string) {
	t.Helper()
	var out bytes.Buffer
	if o.Target == (rules.Version{}) {
		o.Target = rules.DefaultTarget
	}
	res, err := action.Migrate(context.Background(), in, action.MigrateOptions{Plan: o, Output: mode, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	return res, out.String()
}

// TestMigrateLargeFileInBatches: a file of many batches is migrated as a
// whole: its diff is what -w writes, and every workload is migrated once.
func TestMigrateLargeFileInBatches(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := pods(700) // 1,400 documents: six batches
	testfs.WriteFile(t, filepath.Join(dir, "big.yaml"), src)
	in := action.Input{Paths: []string{"big.yaml"}, Dir: dir}
	res, diff := migrate(t, in, emit.Diff, plan.Options{})
	if res.Migrated != 700 || res.Added != 700 || res.Changed != 1 || res.Failed != 0 {
		t.Fatalf("diff: %+v", res)
	}
	if res, _ = migrate(t, in, emit.Write, plan.Options{}); res.Changed != 1 {
		t.Fatalf("-w: %+v", res)
	}
	after, err := os.ReadFile(filepath.Join(dir, "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	whole := (&emit.Emitter{}).Diff(emit.Change{Path: "big.yaml", Old: []byte(src), New: after})
	if diff != string(whole) {
		t.Errorf("the streamed diff is not the diff of what -w wrote")
	}
	if n := strings.Count(string(after), "kind: ResourceClaimTemplate\n"); n != 700 {
		t.Errorf("%d claim templates written, want 700", n)
	}
	if res, diff = migrate(t, in, emit.Diff, plan.Options{}); diff != "" || res.Migrated != 0 {
		t.Errorf("a second run still changes something: %+v", res)
	}
}

// TestMigrateLateParseError: when a late batch of a large file holds a
// document that does not parse, the whole file keeps its bytes, as a file
// that cannot be parsed does (docs/exit-codes.md; issue 29 item 6, which
// reverses issue 14 item 10's document by document), and so does a
// template there; the run says why.
func TestMigrateLateParseError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	broken := "---\nmetadata: {name: [unclosed\n"
	src := pods(400) + broken
	testfs.WriteFile(t, filepath.Join(dir, "big.yaml"), src)
	in := action.Input{Paths: []string{"big.yaml"}, Dir: dir}
	for _, mode := range []emit.Mode{emit.Diff, emit.Write} {
		res, diff := migrate(t, in, mode, plan.Options{})
		if diff != "" || res.Changed != 0 || res.Failed != 1 || res.Migrated != 0 {
			t.Errorf("mode %d: %+v, diff of %d bytes", mode, res, len(diff))
		}
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "big.yaml")); string(after) != src {
		t.Errorf("a file with a document that does not parse was rewritten")
	}

	src = pods(400) + "---\nmetadata: {name: {{ .Values.name }}}\n"
	testfs.WriteFile(t, filepath.Join(dir, "big.yaml"), src)
	for _, mode := range []emit.Mode{emit.Diff, emit.Write} {
		res, diff := migrate(t, in, mode, plan.Options{})
		if diff != "" || res.Changed != 0 || res.Migrated != 0 {
			t.Errorf("template, mode %d: %+v, diff of %d bytes", mode, res, len(diff))
		}
		// The template batch's requests are reported one by one, those of
		// the batches before it (already planned) in one line.
		var tmpl, each, before int
		for _, d := range res.Diagnostics {
			switch {
			case d.Rule == "input/template":
				tmpl++
			case d.Rule == plan.RuleUnreadParts && d.Object != nil:
				each++
			case d.Rule == plan.RuleUnreadParts:
				if _, err := fmt.Sscanf(d.Message[strings.LastIndex(d.Message, ":")+1:], "%d", &before); err != nil {
					t.Fatal(err)
				}
			}
		}
		if tmpl != 1 || each == 0 || each+before != 400 {
			t.Errorf("mode %d: %d templates, %d requests reported each and %d before them, want 1 and 400 in all", mode, tmpl, each, before)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "big.yaml")); string(b) != src {
		t.Error("-w changed a file holding a template")
	}
}

// TestMigrateAvoidsLaterNames: a claim template that exists in a file
// migrated later (a claims file that sorts after its workloads) keeps its
// name; the new one takes another.
func TestMigrateAvoidsLaterNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testfs.WriteFile(t, filepath.Join(dir, "app.yaml"), fmt.Sprintf(gpuPod, "train"))
	testfs.WriteFile(t, filepath.Join(dir, "zz-claims.yaml"), "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata:\n  name: train-gpu\nspec:\n  spec:\n    devices:\n      requests:\n      - name: gpu\n        exactly: {deviceClassName: gpu.nvidia.com, count: 4}\n")
	res, diff := migrate(t, action.Input{Paths: []string{"."}, Dir: dir}, emit.Diff, plan.Options{})
	if res.Migrated != 1 || !strings.Contains(diff, "resourceClaimTemplateName: train-gpu-pod") {
		t.Errorf("%+v\n%s", res, diff)
	}
}

// TestMigrateStdinStream: stdin is migrated as one stream, batch by batch;
// with the extended-resource strategy its DeviceClass comes last.
func TestMigrateStdinStream(t *testing.T) {
	t.Parallel()
	src := pods(300)
	res, out := migrate(t, action.Input{Paths: []string{"-"}, Stdin: strings.NewReader(src)}, emit.Stream, plan.Options{})
	if res.Migrated != 300 || strings.Count(out, "kind: ResourceClaimTemplate\n") != 300 || strings.Contains(out, "nvidia.com/gpu: 1") {
		t.Errorf("claims: %+v", res)
	}
	// Neuron's stock class declares no extendedResourceName: kubedra's
	// DeviceClass comes once, after the stream.
	neuron := strings.ReplaceAll(src, "nvidia.com/gpu", "aws.amazon.com/neuron")
	res, out = migrate(t, action.Input{Paths: []string{"-"}, Stdin: strings.NewReader(neuron)}, emit.Stream,
		plan.Options{Strategy: plan.ExtendedResource, Target: rules.Version{Major: 1, Minor: 36}})
	if !strings.HasPrefix(out, neuron) || !strings.Contains(out[len(neuron):], "kind: DeviceClass") || strings.Count(out, "kind: DeviceClass") != 1 {
		t.Errorf("extended-resource: %+v\n%s", res, out[len(neuron)-100:])
	}
	// NVIDIA's gpu.nvidia.com class declares nvidia.com/gpu: no second class.
	_, out = migrate(t, action.Input{Paths: []string{"-"}, Stdin: strings.NewReader(src)}, emit.Stream,
		plan.Options{Strategy: plan.ExtendedResource, Target: rules.Version{Major: 1, Minor: 36}})
	if out != src {
		t.Errorf("extended-resource for nvidia.com/gpu added to the stream:\n%s", out[min(len(out), len(src)):])
	}
}

// TestMigrateDocuments: documents in memory (a KRM function's items) are
// migrated on copies; new objects follow their workload.
func TestMigrateDocuments(t *testing.T) {
	t.Parallel()
	var docs []*inventory.Document
	for i, name := range []string{"a", "b"} {
		n, err := yaml.Parse(fmt.Sprintf(gpuPod, name))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, &inventory.Document{Node: n, Origin: inventory.Origin{Path: "pods.yaml", Index: 0, Line: 1 + i}})
	}
	res, err := action.Migrate(context.Background(), action.Input{Documents: docs},
		action.MigrateOptions{Plan: plan.Options{Target: rules.DefaultTarget}, Output: emit.Stream})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, n := range res.Documents {
		kinds = append(kinds, n.GetKind()+"/"+n.GetName())
	}
	if got := strings.Join(kinds, " "); got != "Pod/a ResourceClaimTemplate/a-gpu Pod/b ResourceClaimTemplate/b-gpu" {
		t.Errorf("documents: %s", got)
	}
	if s, _ := docs[0].Node.String(); !strings.Contains(s, "nvidia.com/gpu: 1") {
		t.Error("the input documents were changed")
	}
}
