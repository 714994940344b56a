package action_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite/emit"
)

// onePathInput is a stream whose second document cannot be edited (a
// duplicate key) and whose first and third can: a device request and a
// quota that must learn the DRA key.
const onePathInput = `apiVersion: v1
kind: Pod
metadata: {name: ok, namespace: ml}
spec:
  containers:
  - name: c
    image: cuda
    resources: {limits: {nvidia.com/gpu: 1}}
---
apiVersion: v1
kind: Pod
metadata: {name: dup, namespace: ml}
spec:
  containers:
  - name: c
    image: cuda
    resources:
      limits:
        nvidia.com/gpu: 1
        nvidia.com/gpu: 2
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpus, namespace: ml}
spec:
  hard:
    requests.nvidia.com/gpu: "4"
`

// TestFilesAndDocumentsApplyAlike: migrating a file and migrating the same
// documents in memory (a KRM function's items, a chart's render) run one
// applier: the document with a duplicate key is left as it was with the
// same diagnostic at the same line, the others are migrated, and the
// migrated objects are the same.
func TestFilesAndDocumentsApplyAlike(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := testfs.Tree(t, map[string]string{"all.yaml": onePathInput})
	var out bytes.Buffer
	fr, err := action.Migrate(ctx, action.Input{Paths: []string{"all.yaml"}, Dir: dir}, action.MigrateOptions{Output: emit.Stream, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	docs := files.Parse("-", []byte(onePathInput)).Docs
	mr, err := action.Migrate(ctx, action.Input{Documents: docs}, action.MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	failures := func(ds inventory.Diagnostics) []string {
		var out []string
		for _, d := range ds {
			if d.Severity == inventory.Error {
				out = append(out, fmt.Sprintf("%d %s %s", d.Line, d.Rule, d.Message))
			}
		}
		return out
	}
	want := []string{`20 migrate/rewrite-failed document left unchanged: duplicate key "nvidia.com/gpu" (first at line 19): which one counts depends on the tool that reads it; keep one, then run again`}
	if diff := cmp.Diff(want, failures(fr.Diagnostics)); diff != "" {
		t.Errorf("file (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, failures(mr.Diagnostics)); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
	if fr.Migrated != 1 || mr.Migrated != 1 || fr.Governed != 1 || mr.Governed != 1 {
		t.Errorf("migrated %d/%d, governed %d/%d (file/documents): want 1 workload and the quota on both", fr.Migrated, mr.Migrated, fr.Governed, mr.Governed)
	}
	var text []string
	for _, n := range mr.Documents {
		s, err := n.String()
		if err != nil {
			t.Fatal(err)
		}
		text = append(text, s)
	}
	mem := strings.Join(text, "---\n")
	if !strings.Contains(mem, "nvidia.com/gpu: 1\n        nvidia.com/gpu: 2") {
		t.Errorf("documents: the pod with the duplicate key was edited:\n%s", mem)
	}
	for _, s := range []string{"kind: ResourceClaimTemplate", "resourceClaims:", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"} {
		if !strings.Contains(out.String(), s) || !strings.Contains(mem, s) {
			t.Errorf("%q: in the file's migration %v, in the documents' %v", s, strings.Contains(out.String(), s), strings.Contains(mem, s))
		}
	}
}
