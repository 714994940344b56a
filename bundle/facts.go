package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Facts are what the bundle needs to know about a cluster. A nil *Facts means
// "no cluster known": the bundle falls back to the catalogue's well-known
// plugin DaemonSets and says so in PLAN.md.
type Facts struct {
	// Source describes where the facts came from, e.g. "cluster" or
	// "dump snapshot.yaml"; it is printed in PLAN.md.
	Source     string
	Nodes      []corev1.Node
	DaemonSets []appsv1.DaemonSet
	Quotas     []corev1.ResourceQuota
	// Detected holds what the audit's detection (inventory/cluster) says
	// about DaemonSets, keyed by "namespace/name"; it adds to the
	// catalogue's names, labels and images.
	Detected map[string]Detection
}

// Detection is one DaemonSet recognised as device software.
type Detection struct {
	// Role is "device-plugin" or "dra-driver".
	Role   string
	Family string
}

// Roles of a Detection.
const (
	RoleDevicePlugin = "device-plugin"
	RoleDRADriver    = "dra-driver"
)

func (f *Facts) detected(ds *appsv1.DaemonSet, family, role string) bool {
	if f == nil || f.Detected == nil {
		return false
	}
	d, ok := f.Detected[ds.Namespace+"/"+ds.Name]
	return ok && d.Family == family && d.Role == role
}

// isPlugin reports whether ds is a device plugin of d's family, and the
// catalogue entry it matched (nil when matched by image or detection).
func (f *Facts) isPlugin(d Driver, ds *appsv1.DaemonSet) (*Plugin, bool) {
	if p, ok := matchPlugin(d, ds); ok {
		return p, true
	}
	return nil, f.detected(ds, d.Family, RoleDevicePlugin)
}

// ReadDump reads Nodes, DaemonSets and ResourceQuotas from a YAML or JSON
// stream, such as `kubectl get nodes,daemonsets,resourcequotas -A -o yaml`.
// `kind: List` documents are flattened; other kinds are ignored.
func ReadDump(r io.Reader, source string) (*Facts, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	f := &Facts{Source: source}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for i := 0; ; i++ {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("%s: document %d: %w", source, i, err)
		}
		if obj == nil {
			continue
		}
		if err := f.add(obj); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", source, i, err)
		}
	}
	return f, nil
}

func (f *Facts) add(obj map[string]any) error {
	u := unstructured.Unstructured{Object: obj}
	if strings.HasSuffix(u.GetKind(), "List") {
		items, _, _ := unstructured.NestedSlice(obj, "items")
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				continue
			}
			if err := f.add(m); err != nil {
				return err
			}
		}
		return nil
	}
	conv := runtime.DefaultUnstructuredConverter
	switch gk := u.GroupVersionKind().GroupKind(); {
	case gk.Group == "" && gk.Kind == "Node":
		var n corev1.Node
		if err := conv.FromUnstructured(obj, &n); err != nil {
			return fmt.Errorf("node %s: %w", u.GetName(), err)
		}
		f.Nodes = append(f.Nodes, n)
	case gk.Group == "apps" && gk.Kind == "DaemonSet":
		var ds appsv1.DaemonSet
		if err := conv.FromUnstructured(obj, &ds); err != nil {
			return fmt.Errorf("daemonset %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		f.DaemonSets = append(f.DaemonSets, ds)
	case gk.Group == "" && gk.Kind == "ResourceQuota":
		var q corev1.ResourceQuota
		if err := conv.FromUnstructured(obj, &q); err != nil {
			return fmt.Errorf("resourcequota %s/%s: %w", u.GetNamespace(), u.GetName(), err)
		}
		f.Quotas = append(f.Quotas, q)
	}
	return nil
}
