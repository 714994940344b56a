// Package clustertest builds client-go fakes seeded from YAML files (such
// as testdata/cluster/*.yaml), so that tests run inventory/cluster's live
// Reader without a cluster.
package clustertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// Fakes are a seeded typed clientset, dynamic client and discovery.
type Fakes struct {
	Client    *fake.Clientset
	Dynamic   *dynamicfake.FakeDynamicClient
	Discovery *fakediscovery.FakeDiscovery
}

// Reader returns a cluster.Reader over the fakes.
func (f *Fakes) Reader() *cluster.Reader {
	return &cluster.Reader{Client: f.Client, Dynamic: f.Dynamic, Discovery: f.Discovery}
}

// plural resource names of the unstructured kinds the fakes serve.
var unstructuredKinds = map[string]string{
	"DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices", "ResourceClaim": "resourceclaims",
	"ResourceClaimTemplate": "resourceclaimtemplates", "ClusterPolicy": "clusterpolicies", "GPUCluster": "gpuclusters",
}

// Load reads path and seeds fakes with its objects. A ClusterInfo document
// sets the server version and served resource.k8s.io versions; without one
// the server is v1.37.2 serving resource.k8s.io/v1.
func Load(path string) (*Fakes, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return New(f)
}

// New seeds fakes from a YAML stream (documents, or kubectl's kind: List).
func New(r io.Reader) (*Fakes, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(r, 4096)
	var typed []runtime.Object
	var uns []runtime.Object
	serverVersion, resourceVersions := "v1.37.2", []string{"v1"}
	listKinds := map[schema.GroupVersionResource]string{}
	groupResources := map[string][]metav1.APIResource{}
	for _, v := range cluster.ResourceVersions {
		for kind, res := range unstructuredKinds {
			if strings.HasPrefix(res, "cluster") || strings.HasPrefix(res, "gpu") {
				continue
			}
			listKinds[schema.GroupVersionResource{Group: "resource.k8s.io", Version: v, Resource: res}] = kind + "List"
		}
	}
	listKinds[schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "clusterpolicies"}] = "ClusterPolicyList"
	listKinds[schema.GroupVersionResource{Group: "nvidia.com", Version: "v1alpha1", Resource: "gpuclusters"}] = "GPUClusterList"
	add := func(m map[string]any) error {
		u := &unstructured.Unstructured{Object: m}
		conv := func(o runtime.Object) error {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, o); err != nil {
				return fmt.Errorf("%s %s: %w", u.GetKind(), u.GetName(), err)
			}
			typed = append(typed, o)
			return nil
		}
		switch u.GetAPIVersion() + " " + u.GetKind() {
		case cluster.InfoAPIVersion + " " + cluster.InfoKind:
			serverVersion, _, _ = unstructured.NestedString(m, "serverVersion")
			resourceVersions, _, _ = unstructured.NestedStringSlice(m, "resourceAPIVersions")
		case "v1 Node":
			return conv(&corev1.Node{})
		case "v1 Pod":
			return conv(&corev1.Pod{})
		case "v1 ResourceQuota":
			return conv(&corev1.ResourceQuota{})
		case "apps/v1 DaemonSet":
			return conv(&appsv1.DaemonSet{})
		case "apps/v1 ReplicaSet":
			return conv(&appsv1.ReplicaSet{})
		case "batch/v1 Job":
			return conv(&batchv1.Job{})
		default:
			res, ok := unstructuredKinds[u.GetKind()]
			if !ok {
				return fmt.Errorf("clustertest: unsupported kind %s %s", u.GetAPIVersion(), u.GetKind())
			}
			uns = append(uns, u)
			gv := u.GetAPIVersion()
			if !hasResource(groupResources[gv], res) {
				groupResources[gv] = append(groupResources[gv], metav1.APIResource{Name: res, Kind: u.GetKind(),
					Namespaced: u.GetNamespace() != ""})
			}
		}
		return nil
	}
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		if m == nil {
			continue
		}
		objs := []any{m}
		if u := (&unstructured.Unstructured{Object: m}); u.IsList() { // kubectl get -o yaml
			objs, _, _ = unstructured.NestedSlice(m, "items")
		}
		for _, o := range objs {
			om, ok := o.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("clustertest: a list item is not an object: %v", o)
			}
			if err := add(om); err != nil {
				return nil, err
			}
		}
	}
	client := fake.NewClientset(typed...)
	disc := client.Discovery().(*fakediscovery.FakeDiscovery)
	disc.FakedServerVersion = &version.Info{GitVersion: serverVersion}
	for _, v := range resourceVersions {
		gv := "resource.k8s.io/" + v
		if len(groupResources[gv]) == 0 {
			groupResources[gv] = []metav1.APIResource{{Name: "deviceclasses", Kind: "DeviceClass"}}
		}
	}
	for gv, rs := range groupResources {
		disc.Resources = append(disc.Resources, &metav1.APIResourceList{GroupVersion: gv, APIResources: rs})
	}
	return &Fakes{
		Client:    client,
		Dynamic:   dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds, uns...),
		Discovery: disc,
	}, nil
}

func hasResource(rs []metav1.APIResource, name string) bool {
	for _, r := range rs {
		if r.Name == name {
			return true
		}
	}
	return false
}

// JSON is v as indented JSON, to compare Facts read different ways.
func JSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
