// Package krmtest makes KRM ResourceLists for tests out of the rewrite
// goldens' inputs and the shared corpus's manifests, so that the packages
// that read and answer them (inventory/files, kubedra fn) test on the same
// lists.
package krmtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Documents are the documents of each rewrite golden's input and each
// shared corpus manifest (root is the repository, as a test's relative
// path), by file, as kio.ByteReader reads them: with its index annotations
// when annotated. Files kyaml cannot read are left out.
func Documents(t testing.TB, root string, annotated bool) map[string][]*yaml.RNode {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(root, "rewrite/testdata/*/input.yaml"))
	corpus, _ := filepath.Glob(filepath.Join(root, "../shared/corpus/dev/*/*.yaml"))
	out := map[string][]*yaml.RNode{}
	for _, p := range append(paths, corpus...) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(data), OmitReaderAnnotations: !annotated}).Read()
		if err == nil && len(nodes) > 0 {
			out[p] = nodes
		}
	}
	if len(out) < 40 {
		t.Fatalf("only %d files of documents under %s", len(out), root)
	}
	return out
}

// List is nodes as the items of a ResourceList with functionConfig fc, in
// the bytes kio.ByteWriter writes (as kustomize hands them to a
// function); nil when kyaml cannot write them.
func List(nodes []*yaml.RNode, fc *yaml.RNode) []byte {
	var b bytes.Buffer
	w := kio.ByteWriter{Writer: &b, KeepReaderAnnotations: true, WrappingKind: kio.ResourceListKind, WrappingAPIVersion: kio.ResourceListAPIVersion,
		FunctionConfig: fc}
	if err := w.Write(nodes); err != nil {
		return nil
	}
	return b.Bytes()
}
