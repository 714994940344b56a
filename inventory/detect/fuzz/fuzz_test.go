package fuzz_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/kubedra/kubedra/internal/fuzzstat"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
)

// FuzzDetect (issue 14 item 13): whatever a document holds, detection
// never panics, gives the same findings every time, and each finding is
// complete (a resource, a pod template, its document's index) and names a
// line of the file within its document. Seeds are the rewrite goldens and
// files of the shared corpus.
func FuzzDetect(f *testing.F) {
	seeds, _ := filepath.Glob("../../../rewrite/testdata/*/input.*")
	more, _ := filepath.Glob("../../../../shared/corpus/dev/*/*/*.yaml")
	if len(more) > 60 {
		more = more[:60]
	}
	for _, s := range append(seeds, more...) {
		if b, err := os.ReadFile(s); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte("apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpu: 2}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzstat.Count()
		file := files.Parse("f.yaml", data)
		lines := bytes.Split(data, []byte("\n"))
		for _, d := range file.Docs {
			got := detect.Document(d, detect.Options{})
			if again := detect.Document(d, detect.Options{}); !reflect.DeepEqual(got, again) {
				t.Fatalf("not deterministic:\n%+v\n%+v", got, again)
			}
			for _, x := range got {
				// (A pod spec at a document's root has PodTemplatePath "".)
				if x.Resource == "" || x.PodTemplatePath == "" && !x.Generic || x.Origin.Path != "f.yaml" || x.Origin.Index != d.Origin.Index {
					t.Fatalf("incomplete finding %+v", x)
				}
				if x.Line < 1 || x.Line > len(lines) {
					t.Fatalf("finding at line %d of %d", x.Line, len(lines))
				}
				if start := bytes.Count(data[:d.Span.Start], []byte("\n")) + 1; x.Line < start {
					t.Fatalf("finding at line %d, before its document (line %d)", x.Line, start)
				}
			}
		}
	})
}
