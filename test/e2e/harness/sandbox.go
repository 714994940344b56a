package harness

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// SandboxKey is the label and taint key that fences a Sandbox's nodes.
const SandboxKey = "e2e.kubedra.io/sandbox"

// Sandbox isolates one test's scheduling world inside a shared cluster: a
// namespace, and nodes that carry the label and NoSchedule taint
// SandboxKey=<ID>. Confine makes a workload's pods select and tolerate
// exactly those nodes, so parallel tests never see each other's nodes or
// devices (ResourceSlices are per node) and other pods never land on them.
type Sandbox struct {
	// ID is unique per sandbox ("sb-<random>").
	ID string
	// Namespace is created for the sandbox and deleted at cleanup.
	Namespace string

	c      *Cluster
	t      testing.TB
	byNode map[string]string // node name -> logical name
}

// NewSandbox creates a sandbox with its namespace; cleanup removes its
// namespace, nodes and ResourceSlices.
func (c *Cluster) NewSandbox(t testing.TB) *Sandbox {
	t.Helper()
	return &Sandbox{
		ID:        fmt.Sprintf("sb-%06x", rand.Uint32()&0xffffff),
		Namespace: c.NewNamespace(t),
		c:         c,
		t:         t,
		byNode:    map[string]string{},
	}
}

// NodeName is the cluster-wide name of the sandbox node called logical.
func (s *Sandbox) NodeName(logical string) string { return s.ID + "-" + logical }

// Logical maps a node name back to the logical name given to Node ("" for
// "", and the name itself for nodes outside the sandbox).
func (s *Sandbox) Logical(nodeName string) string {
	if l, ok := s.byNode[nodeName]; ok {
		return l
	}
	return nodeName
}

// Node creates a fenced fake node named NodeName(spec.Name).
func (s *Sandbox) Node(spec NodeSpec) *corev1.Node {
	s.t.Helper()
	logical := spec.Name
	spec.Name = s.NodeName(logical)
	labels := map[string]string{SandboxKey: s.ID}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	spec.Labels = labels
	spec.Taints = append(append([]corev1.Taint{}, spec.Taints...), corev1.Taint{Key: SandboxKey, Value: s.ID, Effect: corev1.TaintEffectNoSchedule})
	s.byNode[spec.Name] = logical
	return s.c.CreateNode(s.t, spec)
}

// Slice publishes devices of driver on the sandbox node called logical.
func (s *Sandbox) Slice(driver, logical string, devices ...resourcev1.Device) *resourcev1.ResourceSlice {
	s.t.Helper()
	return s.c.CreateResourceSlice(s.t, Slice(driver, s.NodeName(logical), devices...))
}

// Confine adds the sandbox's nodeSelector term and toleration to the pod
// spec of obj (a Pod, or the pod template of a Deployment, ReplicaSet,
// StatefulSet, DaemonSet, Job or CronJob) and sets its namespace. Other kinds
// only get the namespace (if namespaced in the manifest).
func (s *Sandbox) Confine(obj *unstructured.Unstructured) error {
	if obj.GetNamespace() != "" || isNamespacedWorkload(obj.GetKind()) {
		obj.SetNamespace(s.Namespace)
	}
	path := PodSpecPath(obj.GetKind())
	if path == nil {
		return nil
	}
	spec, found, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil || !found {
		return fmt.Errorf("%s %s: no pod spec at %s (%v)", obj.GetKind(), obj.GetName(), strings.Join(path, "."), err)
	}
	sel, _, _ := unstructured.NestedStringMap(spec, "nodeSelector")
	if sel == nil {
		sel = map[string]string{}
	}
	sel[SandboxKey] = s.ID
	if err := unstructured.SetNestedStringMap(spec, sel, "nodeSelector"); err != nil {
		return err
	}
	tol, _, _ := unstructured.NestedSlice(spec, "tolerations")
	tol = append(tol, map[string]any{"key": SandboxKey, "operator": "Equal", "value": s.ID, "effect": "NoSchedule"})
	if err := unstructured.SetNestedSlice(spec, tol, "tolerations"); err != nil {
		return err
	}
	return unstructured.SetNestedMap(obj.Object, spec, path...)
}

// PodSpecPath is where a kind keeps its pod spec (nil for kinds without one).
func PodSpecPath(kind string) []string {
	switch kind {
	case "Pod":
		return []string{"spec"}
	case "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController":
		return []string{"spec", "template", "spec"}
	case "CronJob":
		return []string{"spec", "jobTemplate", "spec", "template", "spec"}
	case "PodTemplate":
		return []string{"template", "spec"}
	}
	return nil
}

func isNamespacedWorkload(kind string) bool {
	return PodSpecPath(kind) != nil || kind == "ResourceClaimTemplate" || kind == "ResourceClaim"
}
