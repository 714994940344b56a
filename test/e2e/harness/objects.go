package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// FieldManager is the field manager of everything the harness writes.
const FieldManager = "kubedra-e2e"

// DefaultWait bounds the waits of the helpers below; scheduling here takes
// well under 5 s, so a minute means something is wrong.
const DefaultWait = 60 * time.Second

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// NewNamespace creates a namespace named after the test ("e2e-<test>-<random>")
// and deletes it at cleanup, force-deleting its pods first (bound pods never
// finish a graceful delete without a kubelet).
func (c *Cluster) NewNamespace(t testing.TB) string {
	t.Helper()
	base := nonDNS.ReplaceAllString(strings.ToLower(t.Name()), "-")
	if len(base) > 40 {
		base = base[len(base)-40:]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-" + strings.Trim(base, "-") + "-"}}
	ctx := context.Background()
	got, err := c.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		t.Fatalf("creating a namespace for %s: %v", t.Name(), err)
	}
	t.Cleanup(func() { c.deleteNamespace(t, got.Name) })
	return got.Name
}

// EnsureNamespace creates the namespace name unless it exists (it is not
// deleted at cleanup: use it for namespaces that manifests refer to).
func (c *Cluster) EnsureNamespace(ctx context.Context, name string) error {
	_, err := c.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

func (c *Cluster) deleteNamespace(t testing.TB, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), DefaultWait)
	defer cancel()
	if err := c.ForceDeletePods(ctx, ns); err != nil {
		t.Logf("cleanup: force-deleting pods in %s: %v", ns, err)
	}
	err := c.Clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Logf("cleanup: deleting namespace %s: %v", ns, err)
	}
}

// ForceDeletePods deletes every pod in ns with grace period 0: without a
// kubelet a bound pod would otherwise stay Terminating forever.
func (c *Cluster) ForceDeletePods(ctx context.Context, ns string) error {
	zero := int64(0)
	err := c.Clientset.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// NodeSpec describes a fake node. There is no kubelet: the status (Ready,
// allocatable) is written by the harness and nobody changes it.
type NodeSpec struct {
	// Name of the Node object.
	Name string
	// Labels besides kubernetes.io/hostname, kubernetes.io/os and kubernetes.io/arch.
	Labels map[string]string
	// Taints on the node.
	Taints []corev1.Taint
	// Resources are added to status.capacity and status.allocatable, e.g.
	// {"nvidia.com/gpu": "8"} for a device plugin. Defaults: cpu 64, memory 512Gi, pods 110.
	Resources map[string]string
}

// NodeObject builds the Node for spec (exported for tests that need to tweak it).
func NodeObject(spec NodeSpec) *corev1.Node {
	labels := map[string]string{
		"kubernetes.io/hostname": spec.Name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
	}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	rl := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("110"),
	}
	for k, v := range spec.Resources {
		rl[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	now := metav1.Now()
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: spec.Taints},
		Status: corev1.NodeStatus{
			Capacity:    rl,
			Allocatable: rl.DeepCopy(),
			Conditions: []corev1.NodeCondition{{
				Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				Message: "fake node, no kubelet", LastHeartbeatTime: now, LastTransitionTime: now,
			}},
			NodeInfo: corev1.NodeSystemInfo{Architecture: "amd64", OperatingSystem: "linux", OSImage: "fake", ContainerRuntimeVersion: "fake://0"},
		},
	}
}

// CreateNode creates a fake node (status included: the Node create strategy
// keeps it) and deletes it at cleanup.
func (c *Cluster) CreateNode(t testing.TB, spec NodeSpec) *corev1.Node {
	t.Helper()
	ctx := context.Background()
	n, err := c.Clientset.CoreV1().Nodes().Create(ctx, NodeObject(spec), metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		t.Fatalf("creating node %s: %v", spec.Name, err)
	}
	if len(n.Status.Allocatable) == 0 {
		// Defensive: should a release drop status on create, write it through the subresource.
		obj := NodeObject(spec)
		obj.ResourceVersion = n.ResourceVersion
		if n, err = c.Clientset.CoreV1().Nodes().UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
			t.Fatalf("writing the status of node %s: %v", spec.Name, err)
		}
	}
	t.Cleanup(func() {
		if err := c.Clientset.CoreV1().Nodes().Delete(context.Background(), spec.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup: deleting node %s: %v", spec.Name, err)
		}
	})
	return n
}

// CreateResourceSlice creates s and deletes it at cleanup.
func (c *Cluster) CreateResourceSlice(t testing.TB, s *resourcev1.ResourceSlice) *resourcev1.ResourceSlice {
	t.Helper()
	got, err := c.Clientset.ResourceV1().ResourceSlices().Create(context.Background(), s, metav1.CreateOptions{FieldManager: FieldManager})
	if err != nil {
		t.Fatalf("creating ResourceSlice %s: %v", s.Name, err)
	}
	t.Cleanup(func() {
		err := c.Clientset.ResourceV1().ResourceSlices().Delete(context.Background(), got.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("cleanup: deleting ResourceSlice %s: %v", got.Name, err)
		}
	})
	return got
}

// EnsureDeviceClasses creates or updates cluster-wide DeviceClasses. They are
// shared by all tests of the binary and not deleted (DeviceClasses returns the
// real drivers' classes).
func (c *Cluster) EnsureDeviceClasses(t testing.TB, classes ...*resourcev1.DeviceClass) {
	t.Helper()
	ctx := context.Background()
	for _, dc := range classes {
		cli := c.Clientset.ResourceV1().DeviceClasses()
		_, err := cli.Create(ctx, dc, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			var cur *resourcev1.DeviceClass
			if cur, err = cli.Get(ctx, dc.Name, metav1.GetOptions{}); err == nil {
				upd := dc.DeepCopy()
				upd.ResourceVersion = cur.ResourceVersion
				_, err = cli.Update(ctx, upd, metav1.UpdateOptions{FieldManager: FieldManager})
			}
		}
		if err != nil {
			t.Fatalf("creating DeviceClass %s: %v", dc.Name, err)
		}
	}
}

// DecodeYAML splits a multi-document YAML or JSON stream into objects,
// skipping empty documents. A document without apiVersion or kind is an error.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, fmt.Errorf("document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetAPIVersion() == "" || u.GetKind() == "" {
			return out, fmt.Errorf("document %d has no apiVersion or kind", i)
		}
		out = append(out, u)
	}
}

// ResourceFor returns the dynamic client for obj's kind (namespaced in ns,
// or obj's own namespace, when the kind is namespaced) and whether it is namespaced.
func (c *Cluster) ResourceFor(obj *unstructured.Unstructured, ns string) (dynamic.ResourceInterface, bool, error) {
	gvk := obj.GroupVersionKind()
	mapping, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		c.Mapper.Reset() // a CRD may have been installed since the last discovery
		mapping, err = c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	if err != nil {
		return nil, false, fmt.Errorf("%s is not served by this cluster: %w", gvk, err)
	}
	if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(mapping.Resource), false, nil
	}
	if ns == "" {
		ns = obj.GetNamespace()
	}
	if ns == "" {
		ns = metav1.NamespaceDefault
	}
	return c.Dynamic.Resource(mapping.Resource).Namespace(ns), true, nil
}

// CreateOptions for Create.
type CreateOptions struct {
	// Namespace overrides the object's namespace for namespaced kinds ("" keeps it; default "default").
	Namespace string
	// DryRun makes it a server-side dry run: validated and admitted, not stored.
	DryRun bool
}

// Create creates obj with strict field validation (like kubectl apply,
// unknown or duplicate fields are errors). The error is the server's message.
func (c *Cluster) Create(ctx context.Context, obj *unstructured.Unstructured, opts CreateOptions) (*unstructured.Unstructured, error) {
	ri, namespaced, err := c.ResourceFor(obj, opts.Namespace)
	if err != nil {
		return nil, err
	}
	obj = obj.DeepCopy()
	if namespaced && opts.Namespace != "" {
		obj.SetNamespace(opts.Namespace)
	}
	co := metav1.CreateOptions{FieldManager: FieldManager, FieldValidation: "Strict"}
	if opts.DryRun {
		co.DryRun = []string{metav1.DryRunAll}
	}
	return ri.Create(ctx, obj, co)
}

// CreateAll creates objs in order (see Create) and stops at the first error,
// which names the object.
func (c *Cluster) CreateAll(ctx context.Context, objs []*unstructured.Unstructured, opts CreateOptions) error {
	for _, o := range objs {
		if _, err := c.Create(ctx, o, opts); err != nil {
			return fmt.Errorf("creating %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// WaitPodScheduled waits until the pod has spec.nodeName (never wait for
// Ready: no kubelet runs it) and returns it.
func (c *Cluster) WaitPodScheduled(ctx context.Context, ns, name string, timeout time.Duration) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := Poll(ctx, timeout, fmt.Sprintf("pod %s/%s to be scheduled", ns, name), func(ctx context.Context) (bool, string, error) {
		p, err := c.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		pod = p
		return p.Spec.NodeName != "", PodSummary(p), nil
	})
	return pod, err
}

// WaitPodUnschedulable waits until the scheduler has tried the pod and marked
// it PodScheduled=False/Unschedulable, which is how "stays pending" is
// observed without sleeping. It fails if the pod gets bound instead.
func (c *Cluster) WaitPodUnschedulable(ctx context.Context, ns, name string, timeout time.Duration) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := Poll(ctx, timeout, fmt.Sprintf("pod %s/%s to be reported unschedulable", ns, name), func(ctx context.Context) (bool, string, error) {
		p, err := c.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		pod = p
		if p.Spec.NodeName != "" {
			return false, PodSummary(p), fmt.Errorf("pod %s/%s was bound to node %s", ns, name, p.Spec.NodeName)
		}
		cond := PodCondition(p, corev1.PodScheduled)
		return cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable, PodSummary(p), nil
	})
	return pod, err
}

// WaitPodSettled waits until the pod is either bound or reported
// unschedulable, and returns it: for comparisons where either is an answer.
func (c *Cluster) WaitPodSettled(ctx context.Context, ns, name string, timeout time.Duration) (*corev1.Pod, error) {
	var pod *corev1.Pod
	err := Poll(ctx, timeout, fmt.Sprintf("pod %s/%s to be scheduled or reported unschedulable", ns, name), func(ctx context.Context) (bool, string, error) {
		p, err := c.Clientset.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		pod = p
		if p.Spec.NodeName != "" {
			return true, PodSummary(p), nil
		}
		cond := PodCondition(p, corev1.PodScheduled)
		return cond != nil && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable, PodSummary(p), nil
	})
	return pod, err
}

// PodCondition returns the pod's condition of type ct, or nil.
func PodCondition(p *corev1.Pod, ct corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == ct {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// PodSummary is a one-line description of a pod's scheduling state for messages.
func PodSummary(p *corev1.Pod) string {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s", p.Status.Phase)
	if p.Spec.NodeName != "" {
		fmt.Fprintf(&b, ", nodeName=%s", p.Spec.NodeName)
	} else {
		b.WriteString(", no nodeName")
	}
	if c := PodCondition(p, corev1.PodScheduled); c != nil {
		fmt.Fprintf(&b, ", PodScheduled=%s", c.Status)
		if c.Reason != "" {
			fmt.Fprintf(&b, " (%s: %s)", c.Reason, c.Message)
		}
	}
	return b.String()
}

// PodClaims returns the ResourceClaims of a pod's spec.resourceClaims, keyed
// by the pod-level claim name: generated ones (from templates, via
// status.resourceClaimStatuses) and referenced ones (resourceClaimName).
func (c *Cluster) PodClaims(ctx context.Context, p *corev1.Pod) (map[string]*resourcev1.ResourceClaim, error) {
	out := map[string]*resourcev1.ResourceClaim{}
	generated := map[string]string{}
	for _, s := range p.Status.ResourceClaimStatuses {
		if s.ResourceClaimName != nil {
			generated[s.Name] = *s.ResourceClaimName
		}
	}
	for _, rc := range p.Spec.ResourceClaims {
		name := generated[rc.Name]
		if rc.ResourceClaimName != nil {
			name = *rc.ResourceClaimName
		}
		if name == "" {
			return nil, fmt.Errorf("pod %s/%s: claim %q has not been generated yet (status.resourceClaimStatuses: %v)", p.Namespace, p.Name, rc.Name, p.Status.ResourceClaimStatuses)
		}
		claim, err := c.Clientset.ResourceV1().ResourceClaims(p.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: claim %q (%s): %w", p.Namespace, p.Name, rc.Name, name, err)
		}
		out[rc.Name] = claim
	}
	return out, nil
}

// AllocatedDevice is one device of an allocation result, joined with the
// ResourceSlice device it came from.
type AllocatedDevice struct {
	// Request is the request (or request/subrequest) the device satisfies.
	Request string
	Driver  string
	Pool    string
	Device  string
	// Node is the ResourceSlice's spec.nodeName.
	Node string
	// Attributes are the device's attributes with fully qualified names
	// (unqualified ones get the driver as domain), values as strings.
	Attributes map[string]string
	// Capacity are the device's capacities, fully qualified.
	Capacity map[string]resource.Quantity
}

// AllocatedDevices returns the devices allocated to claim, with the
// attributes and capacities published for them in ResourceSlices.
func (c *Cluster) AllocatedDevices(ctx context.Context, claim *resourcev1.ResourceClaim) ([]AllocatedDevice, error) {
	if claim.Status.Allocation == nil {
		return nil, fmt.Errorf("claim %s/%s is not allocated", claim.Namespace, claim.Name)
	}
	slices, err := c.Clientset.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	type key struct{ driver, pool, device string }
	index := map[key]AllocatedDevice{}
	for _, s := range slices.Items {
		node := ""
		if s.Spec.NodeName != nil {
			node = *s.Spec.NodeName
		}
		for _, d := range s.Spec.Devices {
			ad := AllocatedDevice{Driver: s.Spec.Driver, Pool: s.Spec.Pool.Name, Device: d.Name, Node: node,
				Attributes: map[string]string{}, Capacity: map[string]resource.Quantity{}}
			for n, a := range d.Attributes {
				ad.Attributes[qualify(string(n), s.Spec.Driver)] = attrString(a)
			}
			for n, cp := range d.Capacity {
				ad.Capacity[qualify(string(n), s.Spec.Driver)] = cp.Value
			}
			index[key{s.Spec.Driver, s.Spec.Pool.Name, d.Name}] = ad
		}
	}
	var out []AllocatedDevice
	for _, r := range claim.Status.Allocation.Devices.Results {
		ad, ok := index[key{r.Driver, r.Pool, r.Device}]
		if !ok {
			return nil, fmt.Errorf("claim %s/%s: allocated device %s/%s/%s is in no ResourceSlice", claim.Namespace, claim.Name, r.Driver, r.Pool, r.Device)
		}
		ad.Request = r.Request
		out = append(out, ad)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Request != out[j].Request {
			return out[i].Request < out[j].Request
		}
		return out[i].Device < out[j].Device
	})
	return out, nil
}

func qualify(name, driver string) string {
	if strings.Contains(name, "/") {
		return name
	}
	return driver + "/" + name
}

func attrString(a resourcev1.DeviceAttribute) string {
	switch {
	case a.StringValue != nil:
		return *a.StringValue
	case a.IntValue != nil:
		return fmt.Sprint(*a.IntValue)
	case a.BoolValue != nil:
		return fmt.Sprint(*a.BoolValue)
	case a.VersionValue != nil:
		return *a.VersionValue
	}
	return ""
}

// SchedulingEvents returns the messages of FailedScheduling events of a pod,
// oldest first, for failure messages.
func (c *Cluster) SchedulingEvents(ctx context.Context, ns, pod string) []string {
	evs, err := c.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + pod + ",reason=FailedScheduling",
	})
	if err != nil {
		return []string{"(listing events: " + err.Error() + ")"}
	}
	sort.Slice(evs.Items, func(i, j int) bool { return evs.Items[i].LastTimestamp.Before(&evs.Items[j].LastTimestamp) })
	var out []string
	for _, e := range evs.Items {
		out = append(out, e.Message)
	}
	return out
}

// KubectlCmd returns a kubectl command against the cluster (it does not run it).
func (c *Cluster) KubectlCmd(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig, "--request-timeout", "30s"}, args...)...)
	cmd.Env = c.Env()
	return cmd
}

// RunKubectl runs kubectl with args against the cluster and returns its
// stdout; the error includes stderr.
func (c *Cluster) RunKubectl(ctx context.Context, args ...string) ([]byte, error) {
	cmd := c.KubectlCmd(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// GVR is a shorthand for schema.GroupVersionResource.
func GVR(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}
