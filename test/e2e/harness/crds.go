package harness

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates the CustomResourceDefinitions in the files under dir
// (*.yaml, *.yml, and the same gzipped: *.yaml.gz), waits until each is
// established, and refreshes the kind mapper. A CRD that exists already is
// left as it is. It returns the CRD names, sorted.
func (c *Cluster) InstallCRDs(ctx context.Context, dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		base := strings.TrimSuffix(d.Name(), ".gz")
		if !strings.HasSuffix(base, ".yaml") && !strings.HasSuffix(base, ".yml") {
			return nil
		}
		data, err := readMaybeGzip(path)
		if err != nil {
			return err
		}
		objs, err := DecodeYAML(data)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		for _, o := range objs {
			if o.GetKind() != "CustomResourceDefinition" {
				continue
			}
			_, err := c.Dynamic.Resource(crdResource).Create(ctx, o, metav1.CreateOptions{FieldManager: FieldManager})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("%s: creating CRD %s: %w", path, o.GetName(), err)
			}
			names = append(names, o.GetName())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		err := Poll(ctx, DefaultWait, "CRD "+name+" to be established", func(ctx context.Context) (bool, string, error) {
			u, err := c.Dynamic.Resource(crdResource).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			return established(u), fmt.Sprint(u.Object["status"]), nil
		})
		if err != nil {
			return nil, err
		}
	}
	c.Mapper.Reset()
	sort.Strings(names)
	return names, nil
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

func readMaybeGzip(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil || !strings.HasSuffix(path, ".gz") {
		return data, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	return io.ReadAll(zr)
}
