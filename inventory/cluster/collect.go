package cluster

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

// Collector folds objects into Facts one at a time, keeping only the
// summary of each: the live reader and the dump reader feed it the same
// objects, so both give the same Facts.
type Collector struct {
	f Facts
	// keep makes the Collector keep whole Nodes, DaemonSets and
	// ResourceQuotas in f.Objects (Scope.Objects).
	keep bool

	nodes      []Node
	daemonSets map[string]*appsv1.DaemonSet // ns/name -> trimmed, classified later
	dsClass    map[string]Classification
	// owners of ReplicaSets and Jobs: ns/kind/name -> top-level ref.
	owners    map[string]ownerRef
	workloads map[string]*workloadAcc
	slices    map[[2]string]*SliceGroup
	sliceAttr map[[2]string]bool // (node, driver) has EFA devices (dra.net)
	claims    map[string]*ClaimCount
	read      map[string]bool
	problems  map[string]inventory.Diagnostic // by resource type
}

type ownerRef struct{ apiVersion, kind, name string }

type workloadAcc struct {
	w       Workload
	podName string // name of the pod Requests/Template came from
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{
		daemonSets: map[string]*appsv1.DaemonSet{},
		dsClass:    map[string]Classification{},
		owners:     map[string]ownerRef{},
		workloads:  map[string]*workloadAcc{},
		slices:     map[[2]string]*SliceGroup{},
		sliceAttr:  map[[2]string]bool{},
		claims:     map[string]*ClaimCount{},
		read:       map[string]bool{},
		problems:   map[string]inventory.Diagnostic{},
	}
}

func (c *Collector) objects() *Objects {
	if c.f.Objects == nil {
		c.f.Objects = &Objects{}
	}
	return c.f.Objects
}

// SetServer records the server version and served resource.k8s.io versions.
func (c *Collector) SetServer(version string, resourceVersions []string) {
	c.f.ServerVersion = version
	c.f.ResourceAPIVersions = resourceVersions
}

// SetNamespace records the namespace scope ("" = all).
func (c *Collector) SetNamespace(ns string) { c.f.Namespace = ns }

// MarkRead records that a resource type was read (even if it was empty).
func (c *Collector) MarkRead(resource string) { c.read[resource] = true }

// AddProblem records a resource type that could not be read, and why.
func (c *Collector) AddProblem(resource, reason string) { c.addDiagnostic(Problem(resource, reason)) }

// addDiagnostic records the Problem of d.Resource as it is (a dump's
// ClusterInfo keeps the live read's).
func (c *Collector) addDiagnostic(d inventory.Diagnostic) { c.problems[d.Resource] = d }

// AddNode folds a Node.
func (c *Collector) AddNode(o *corev1.Node) {
	if c.keep {
		n := *o
		n.ManagedFields = nil
		c.objects().Nodes = append(c.objects().Nodes, n)
	}
	n := Node{
		Name:           o.Name,
		Labels:         o.Labels,
		Taints:         o.Spec.Taints,
		Unschedulable:  o.Spec.Unschedulable,
		OSImage:        o.Status.NodeInfo.OSImage,
		KubeletVersion: o.Status.NodeInfo.KubeletVersion,
		ProviderID:     o.Spec.ProviderID,
	}
	for name, q := range o.Status.Allocatable {
		if detect.IsExtendedResource(string(name)) {
			if n.Allocatable == nil {
				n.Allocatable = map[string]string{}
			}
			n.Allocatable[string(name)] = q.String()
		}
	}
	markNode(&n)
	c.nodes = append(c.nodes, n)
}

// AddDaemonSet folds a DaemonSet; only device plugins and DRA drivers are
// summarised in Facts.DaemonSets (Facts.Objects keeps every one).
func (c *Collector) AddDaemonSet(o *appsv1.DaemonSet) {
	if c.keep {
		ds := *o
		ds.ManagedFields = nil
		c.objects().DaemonSets = append(c.objects().DaemonSets, ds)
	}
	cl, ok := ClassifyPod(&o.Spec.Template.Spec, o.Spec.Template.Labels, o.Name)
	if !ok {
		if cl2, ok2 := classifyByLabels(o.Labels, o.Name); ok2 {
			cl, ok = cl2, true
		}
	}
	if !ok {
		return
	}
	c.f.DaemonSets = append(c.f.DaemonSets, DaemonSet{
		Namespace: o.Namespace, Name: o.Name, Role: cl.Role, Family: cl.Family, Evidence: cl.Evidence,
		Images: imagesOf(&o.Spec.Template.Spec), Placement: PlacementOf(&o.Spec.Template.Spec),
		Desired: o.Status.DesiredNumberScheduled,
	})
}

func classifyByLabels(labels map[string]string, name string) (Classification, bool) {
	return ClassifyPod(&corev1.PodSpec{}, labels, name)
}

// AddReplicaSet records a ReplicaSet's controller, to group pods by their
// top-level owner.
func (c *Collector) AddReplicaSet(o *appsv1.ReplicaSet) {
	c.addOwner(o.Namespace, "ReplicaSet", o.Name, o.OwnerReferences)
}

// AddJob records a Job's controller (a CronJob, usually).
func (c *Collector) AddJob(o *batchv1.Job) { c.addOwner(o.Namespace, "Job", o.Name, o.OwnerReferences) }

func (c *Collector) addOwner(ns, kind, name string, refs []metav1.OwnerReference) {
	if r := metav1.GetControllerOfNoCopy(&metav1.ObjectMeta{OwnerReferences: refs}); r != nil {
		c.owners[ns+"/"+kind+"/"+name] = ownerRef{r.APIVersion, r.Kind, r.Name}
	}
}

// AddPluginPod keeps o as a PluginPod when it is a device-plugin or driver
// pod (or as an Autoscaler when it is Karpenter's controller: also a
// cluster-wide fact), and reports whether it was.
func (c *Collector) AddPluginPod(o *corev1.Pod) bool {
	if a, ok := karpenterController(o); ok {
		c.f.Autoscalers = append(c.f.Autoscalers, a)
		return true
	}
	owner := metav1.GetControllerOfNoCopy(o)
	dsName := ""
	if owner != nil && owner.Kind == "DaemonSet" {
		dsName = owner.Name
	}
	cl, ok := ClassifyPod(&o.Spec, o.Labels, dsName)
	if !ok {
		return false
	}
	c.f.PluginPods = append(c.f.PluginPods, PluginPod{
		Namespace: o.Namespace, Name: o.Name, Node: o.Spec.NodeName, Role: cl.Role, Family: cl.Family,
		Evidence: cl.Evidence, DaemonSet: dsName,
	})
	return true
}

// SetPluginPodsScope records that plugin and driver pods could not be read
// cluster-wide (see Facts.PluginPodsScope).
func (c *Collector) SetPluginPodsScope(s string) { c.f.PluginPodsScope = s }

// AddPod folds a Pod: device-plugin and driver pods are kept as PluginPods,
// pods with extended-resource requests count towards their workload. The
// pod itself is not retained.
func (c *Collector) AddPod(o *corev1.Pod) {
	if c.AddPluginPod(o) {
		return
	}
	owner := metav1.GetControllerOfNoCopy(o)
	reqs := Requests(&o.Spec)
	if len(reqs) == 0 {
		return
	}
	ref := ownerRef{"v1", "Pod", o.Name}
	if owner != nil {
		ref = ownerRef{owner.APIVersion, owner.Kind, owner.Name}
	}
	key := o.Namespace + "/" + ref.kind + "/" + ref.name
	acc := c.workloads[key]
	if acc == nil {
		acc = &workloadAcc{w: Workload{APIVersion: ref.apiVersion, Kind: ref.kind, Namespace: o.Namespace, Name: ref.name}}
		c.workloads[key] = acc
	}
	acc.w.Pods++
	if o.Status.ExtendedResourceClaimStatus != nil {
		acc.w.DRABacked++
	}
	if acc.podName == "" || o.Name < acc.podName {
		acc.podName = o.Name
		acc.w.Requests = reqs
		acc.w.Template = trimSpec(&o.Spec)
	}
}

// Requests lists the extended-resource requests of a pod spec, in container
// order (init containers first), resource names sorted within a container.
func Requests(spec *corev1.PodSpec) []Request {
	var out []Request
	add := func(i int, c *corev1.Container, typ string) {
		names := map[string]resource.Quantity{}
		for n, q := range c.Resources.Requests {
			if detect.IsExtendedResource(string(n)) {
				names[string(n)] = q
			}
		}
		for n, q := range c.Resources.Limits {
			if detect.IsExtendedResource(string(n)) {
				names[string(n)] = q
			}
		}
		for _, n := range slices.Sorted(maps.Keys(names)) {
			q := names[n]
			out = append(out, Request{Container: c.Name, ContainerIndex: i, ContainerType: typ, Resource: n, Quantity: q.String()})
		}
	}
	for i := range spec.InitContainers {
		typ := "init"
		if p := spec.InitContainers[i].RestartPolicy; p != nil && *p == corev1.ContainerRestartPolicyAlways {
			typ = "sidecar"
		}
		add(i, &spec.InitContainers[i], typ)
	}
	for i := range spec.Containers {
		add(i, &spec.Containers[i], "container")
	}
	return out
}

func trimSpec(s *corev1.PodSpec) *corev1.PodSpec {
	t := &corev1.PodSpec{NodeSelector: s.NodeSelector, Tolerations: s.Tolerations, RuntimeClassName: s.RuntimeClassName}
	if s.Affinity != nil && s.Affinity.NodeAffinity != nil {
		t.Affinity = &corev1.Affinity{NodeAffinity: s.Affinity.NodeAffinity}
	}
	trim := func(cs []corev1.Container) []corev1.Container {
		var out []corev1.Container
		for _, c := range cs {
			out = append(out, corev1.Container{Name: c.Name, Resources: c.Resources, RestartPolicy: c.RestartPolicy})
		}
		return out
	}
	t.InitContainers = trim(s.InitContainers)
	t.Containers = trim(s.Containers)
	return t
}

// AddQuota folds a ResourceQuota; only quotas with device keys are
// summarised in Facts.Quotas (Facts.Objects keeps every one).
func (c *Collector) AddQuota(o *corev1.ResourceQuota) {
	if c.keep {
		q := *o
		q.ManagedFields = nil
		c.objects().Quotas = append(c.objects().Quotas, q)
	}
	hard := map[string]string{}
	for k, q := range o.Spec.Hard {
		if IsDeviceQuotaKey(string(k)) {
			hard[string(k)] = q.String()
		}
	}
	if len(hard) > 0 {
		c.f.Quotas = append(c.f.Quotas, Quota{Namespace: o.Namespace, Name: o.Name, Hard: hard})
	}
}

// IsDeviceQuotaKey reports whether a ResourceQuota key counts devices:
// requests.<extended resource>, <class>.deviceclass.resource.k8s.io/devices
// or the count of ResourceClaims (dra.md §1.6, §2.4).
func IsDeviceQuotaKey(k string) bool {
	switch {
	case strings.HasSuffix(k, ".deviceclass.resource.k8s.io/devices"),
		k == "count/resourceclaims.resource.k8s.io", k == "resourceclaims":
		return true
	case strings.HasPrefix(k, "requests."):
		// An extended-resource name never starts with "requests." itself
		// (the API server's IsExtendedResourceName), so
		// requests.requests.x/y is no device key.
		res := strings.TrimPrefix(k, "requests.")
		return !strings.HasPrefix(res, "requests.") && detect.IsExtendedResource(res)
	}
	return false
}

// AddUnstructured folds resource.k8s.io objects (any served version) and
// GPU Operator ClusterPolicy/GPUCluster objects. It returns false for other
// kinds.
func (c *Collector) AddUnstructured(u *unstructured.Unstructured) bool {
	gv := u.GetAPIVersion()
	group, _, _ := strings.Cut(gv, "/")
	switch {
	case group == "resource.k8s.io":
		if c.keep && gv == "resource.k8s.io/v1" {
			c.keepDRA(u)
		}
		switch u.GetKind() {
		case "ResourceSlice":
			c.addSlice(u)
		case "DeviceClass":
			c.addClass(u)
		case "ResourceClaim":
			cc := c.claimCount(u.GetNamespace())
			cc.Claims++
			if u.GetAnnotations()["resource.kubernetes.io/extended-resource-claim"] == "true" {
				cc.Extended++
			}
		case "ResourceClaimTemplate":
			c.claimCount(u.GetNamespace()).Templates++
		default:
			return false
		}
		return true
	case group == "nvidia.com" && (u.GetKind() == "ClusterPolicy" || u.GetKind() == "GPUCluster"):
		op := OperatorPolicy{APIVersion: gv, Kind: u.GetKind(), Name: u.GetName()}
		if u.GetKind() == "ClusterPolicy" {
			if v, found, _ := unstructured.NestedBool(u.Object, "spec", "devicePlugin", "enabled"); found {
				op.DevicePlugin = &v
			}
			op.MIGStrategy, _, _ = unstructured.NestedString(u.Object, "spec", "mig", "strategy")
		}
		c.f.Operators = append(c.f.Operators, op)
		return true
	}
	return false
}

// keepDRA keeps a resource.k8s.io/v1 ResourceSlice or DeviceClass whole
// in Objects (typed); one that does not convert is summarised only.
func (c *Collector) keepDRA(u *unstructured.Unstructured) {
	switch u.GetKind() {
	case "ResourceSlice":
		var s resourceapi.ResourceSlice
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &s) == nil {
			s.ManagedFields = nil
			c.objects().ResourceSlices = append(c.objects().ResourceSlices, s)
		}
	case "DeviceClass":
		var d resourceapi.DeviceClass
		if runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d) == nil {
			d.ManagedFields = nil
			c.objects().DeviceClasses = append(c.objects().DeviceClasses, d)
		}
	}
}

func (c *Collector) claimCount(ns string) *ClaimCount {
	cc := c.claims[ns]
	if cc == nil {
		cc = &ClaimCount{Namespace: ns}
		c.claims[ns] = cc
	}
	return cc
}

func (c *Collector) addSlice(u *unstructured.Unstructured) {
	driver, _, _ := unstructured.NestedString(u.Object, "spec", "driver")
	node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
	devices, _, _ := unstructured.NestedSlice(u.Object, "spec", "devices")
	k := [2]string{node, driver}
	g := c.slices[k]
	if g == nil {
		g = &SliceGroup{Node: node, Driver: driver, Family: detect.FamilyOfDriver(driver)}
		c.slices[k] = g
	}
	g.Slices++
	g.Devices += len(devices)
	if driver == "dra.net" {
		// DRANET publishes every NIC; it serves the EFA family only where it
		// publishes EFA devices (dra.md §5.6).
		for _, d := range devices {
			dm, _ := d.(map[string]any)
			attrs, _, _ := unstructured.NestedMap(dm, "attributes")
			if basic, ok, _ := unstructured.NestedMap(dm, "basic", "attributes"); ok { // v1beta1
				attrs = basic
			}
			for k, v := range attrs {
				if strings.HasSuffix(k, "pciDevice") && strings.Contains(toString(v), "EFA") {
					c.sliceAttr[k2(node, driver)] = true
				}
			}
		}
	}
}

func k2(a, b string) [2]string { return [2]string{a, b} }

func toString(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["string"].(string)
	return s
}

func (c *Collector) addClass(u *unstructured.Unstructured) {
	dc := DeviceClass{Name: u.GetName(), APIVersion: u.GetAPIVersion()}
	if ts := u.GetCreationTimestamp(); !ts.IsZero() {
		dc.Created = ts.UTC().Format(time.RFC3339)
	}
	dc.ExtendedResourceName, _, _ = unstructured.NestedString(u.Object, "spec", "extendedResourceName")
	sels, _, _ := unstructured.NestedSlice(u.Object, "spec", "selectors")
	for _, s := range sels {
		sm, _ := s.(map[string]any)
		expr, _, _ := unstructured.NestedString(sm, "cel", "expression")
		for _, m := range driverInSelector.FindAllStringSubmatch(expr, -1) {
			if !slices.Contains(dc.Drivers, m[1]) {
				dc.Drivers = append(dc.Drivers, m[1])
			}
		}
	}
	slices.Sort(dc.Drivers)
	c.f.DeviceClasses = append(c.f.DeviceClasses, dc)
}

// Facts returns the collected facts, sorted (Objects stay in read order).
func (c *Collector) Facts() *Facts {
	if c.keep {
		c.objects()
	}
	f := c.f
	f.Nodes = slices.Clone(c.nodes)
	slices.SortFunc(f.Nodes, func(a, b Node) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(f.DaemonSets, func(a, b DaemonSet) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	f.DaemonSets = slices.Clone(f.DaemonSets)
	f.PluginPods = slices.Clone(f.PluginPods)
	slices.SortFunc(f.PluginPods, func(a, b PluginPod) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	f.Slices = nil
	for k, g := range c.slices {
		sg := *g
		if sg.Driver == "dra.net" && !c.sliceAttr[k] {
			sg.Family = ""
		}
		f.Slices = append(f.Slices, sg)
	}
	slices.SortFunc(f.Slices, func(a, b SliceGroup) int {
		return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Driver, b.Driver))
	})
	f.DeviceClasses = slices.Clone(f.DeviceClasses)
	slices.SortFunc(f.DeviceClasses, func(a, b DeviceClass) int { return cmp.Compare(a.Name, b.Name) })
	f.Claims = nil
	for _, cc := range c.claims {
		f.Claims = append(f.Claims, *cc)
	}
	slices.SortFunc(f.Claims, func(a, b ClaimCount) int { return cmp.Compare(a.Namespace, b.Namespace) })
	f.Workloads = nil
	merged := map[string]*workloadAcc{}
	for _, acc := range c.workloads {
		w := acc.w
		// Resolve ReplicaSet -> Deployment and Job -> CronJob (two levels
		// are enough for the built-in controllers).
		for range 2 {
			r, ok := c.owners[w.Namespace+"/"+w.Kind+"/"+w.Name]
			if !ok {
				break
			}
			w.APIVersion, w.Kind, w.Name = r.apiVersion, r.kind, r.name
		}
		// Several ReplicaSets of one Deployment (a rollout) merge; the
		// first pod by name gives the requests.
		key := w.Namespace + "/" + w.Kind + "/" + w.Name
		m := merged[key]
		if m == nil {
			merged[key] = &workloadAcc{w: w, podName: acc.podName}
			continue
		}
		m.w.Pods += w.Pods
		m.w.DRABacked += w.DRABacked
		if acc.podName < m.podName {
			m.podName, m.w.Requests, m.w.Template = acc.podName, w.Requests, w.Template
		}
	}
	for _, m := range merged {
		f.Workloads = append(f.Workloads, m.w)
	}
	slices.SortFunc(f.Workloads, func(a, b Workload) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	addDocuments(f.Workloads)
	f.Autoscalers = slices.Clone(f.Autoscalers)
	slices.SortFunc(f.Autoscalers, func(a, b Autoscaler) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Pod, b.Pod))
	})
	f.Quotas = slices.Clone(f.Quotas)
	slices.SortFunc(f.Quotas, func(a, b Quota) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	f.Operators = slices.Clone(f.Operators)
	slices.SortFunc(f.Operators, func(a, b OperatorPolicy) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name))
	})
	f.Read = slices.Sorted(maps.Keys(c.read))
	f.Problems = nil
	for _, r := range slices.Sorted(maps.Keys(c.problems)) {
		f.Problems = append(f.Problems, c.problems[r])
	}
	return &f
}
