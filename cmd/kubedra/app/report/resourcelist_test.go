package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestWriteResourceListAsKyaml: item by item, WriteResourceList writes
// the bytes kio.ByteWriter writes for the same list (the shared corpus's
// documents and the rewrite goldens as items: comments, flow style, block
// scalars, long strings, empty annotations), with and without a
// functionConfig and results, and an empty list as items: [].
func TestWriteResourceListAsKyaml(t *testing.T) {
	paths, _ := filepath.Glob("../../../../rewrite/testdata/*/input.yaml")
	corpus, _ := filepath.Glob("../../../../../shared/corpus/dev/*/*.yaml")
	paths = append(paths, corpus...)
	if len(paths) < 20 {
		t.Fatalf("only %d inputs", len(paths))
	}
	fc, err := yaml.Parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  mode: check # why\n")
	if err != nil {
		t.Fatal(err)
	}
	results := framework.Results{
		{Message: "a long message that goes on and on so that the encoder would fold it if it folded plain scalars at eighty columns", Severity: framework.Error,
			ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: "v1", Kind: "Pod"}, NameMeta: yaml.NameMeta{Name: "p"}},
			Field:       &framework.Field{Path: "spec.containers[name=c]"}, File: &framework.File{Path: "a.yaml", Index: 2}, Tags: map[string]string{"rule": "x"}},
		{Message: "two: \"quoted\"\nlines", Severity: framework.Warning},
	}
	compared := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: true}).Read()
		if err != nil {
			continue // not every golden input is valid YAML
		}
		for _, withExtras := range []bool{false, true} {
			var want, got bytes.Buffer
			kw := kio.ByteWriter{Writer: &want, KeepReaderAnnotations: true, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion}
			var f *yaml.RNode
			var rs framework.Results
			if withExtras {
				f, rs = fc, results
				b, err := yaml.Marshal(rs)
				if err != nil {
					t.Fatal(err)
				}
				kw.FunctionConfig, kw.Results = f, yaml.MustParse(string(b))
			}
			if err := kw.Write(nodes); err != nil {
				continue // kyaml cannot write it either
			}
			ys := make([]*yaml.Node, len(nodes))
			for i, n := range nodes {
				ys[i] = n.YNode()
			}
			if err := WriteResourceList(&got, ys, f, rs); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if got.String() != want.String() {
				t.Fatalf("%s: WriteResourceList differs from kio.ByteWriter:\n--- kyaml\n%s\n--- kubedra\n%s", p, want.String(), got.String())
			}
			compared++
		}
	}
	t.Logf("compared %d lists", compared)
	if compared < 20 {
		t.Fatalf("only %d lists compared", compared)
	}
	var got bytes.Buffer
	if err := WriteResourceList(&got, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if want := "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"; got.String() != want {
		t.Fatalf("empty list: %q, want %q", got.String(), want)
	}
}
