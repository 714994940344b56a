package proof

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

// Pod is one pod template of a render, found wherever an object holds a
// pod spec (a map with a list of containers), whatever its kind.
type Pod struct {
	Object inventory.ObjectRef
	// Path is the pod spec's place in the object (spec.template.spec).
	Path string
	// ClusterScoped marks a template of a cluster-scoped object (a KServe
	// ClusterServingRuntime): its pods run in the namespaces of whatever
	// uses it, so a claim template it names is in none of them.
	ClusterScoped bool
	// Users are the namespaces of the render's objects that use a
	// cluster-scoped template (InferenceServices naming the runtime,
	// TrainJobs whose runtimeRef names it): its claims must resolve in each.
	Users      []string
	Containers []Container
}

// Key identifies the pod template across two renders.
func (p Pod) Key() string {
	return p.Object.APIVersion + "/" + p.Object.Kind + "/" + p.Object.Namespace + "/" + p.Object.Name + "/" + p.Path
}

// Container is what one container of a pod template gets.
type Container struct {
	Name string
	// Extended are the extended resources it asks for (limits, else
	// requests), with their counts; zero counts are left out.
	Extended map[string]int64
	// Devices are the devices of the claims it names.
	Devices []Device
	// Unresolved are its claims that name nothing in the render.
	Unresolved []string
	// Classic marks a container with a claim of classic DRA (before
	// Kubernetes 1.31: a pod claim's source, a resource.k8s.io/v1alpha2
	// template): its devices are in the driver's opaque parameters, which
	// the proof cannot count, so it is not compared.
	Classic bool
}

// Device is one request of a claim a container names.
type Device struct {
	// Claim is the pod's claim name; Shared marks a ResourceClaim (one
	// allocation for every pod that names it) rather than a template.
	Claim  string
	Shared bool
	Class  string
	// Count is the devices asked for; All asks for every matching device.
	Count int64
	All   bool
	// Selectors are the CEL expressions, Capacity what each device must
	// give (sharing), Constraints the claim's matchAttribute constraints,
	// Alternatives the request's other subrequests (firstAvailable).
	Selectors    []string
	Capacity     []string
	Constraints  []string
	Alternatives int
	// Invalid says why the API server would reject the request ("": it
	// would not).
	Invalid string
}

// String is the device as a message says it.
func (d Device) String() string {
	n := fmt.Sprint(d.Count)
	if d.All {
		n = "all"
	}
	return n + " " + d.Class
}

// shares is the count of the device's capacity request "shares" (a
// consumable share of one device), or 0.
func (d Device) shares() int64 {
	for _, c := range d.Capacity {
		if k, v, ok := strings.Cut(c, "="); ok && k == "shares" {
			if q, err := resource.ParseQuantity(v); err == nil {
				return q.Value()
			}
		}
	}
	return 0
}

func (d Device) same(o Device) bool {
	return d.Claim == o.Claim && d.Shared == o.Shared && d.Class == o.Class && d.Count == o.Count && d.All == o.All &&
		slices.Equal(d.Selectors, o.Selectors) && slices.Equal(d.Capacity, o.Capacity) && slices.Equal(d.Constraints, o.Constraints) &&
		d.Alternatives == o.Alternatives
}

// clusterScoped are the kinds with pod templates whose objects have no
// namespace.
var clusterScoped = map[string]bool{"ClusterServingRuntime": true, "ClusterTrainingRuntime": true}

// Pods are the pod templates of a render, each container with the devices
// it gets.
func Pods(objs []*yaml.RNode) []Pod {
	claims := index(objs)
	users := runtimeUsers(objs)
	var out []Pod
	for _, o := range objs {
		ref := inventory.ObjectRef{APIVersion: o.GetApiVersion(), Kind: o.GetKind(), Namespace: o.GetNamespace(), Name: o.GetName()}
		walk(o.YNode(), "", func(spec *yaml.Node, path string) {
			p := Pod{Object: ref, Path: path, ClusterScoped: clusterScoped[ref.Kind]}
			namespaces := []string{ref.Namespace}
			if p.ClusterScoped {
				p.Users = users[ref.Kind+"/"+ref.Name]
				if len(p.Users) > 0 {
					namespaces = p.Users
				}
			}
			podClaims := map[string]*yaml.Node{}
			for _, c := range seq(field(spec, "resourceClaims")) {
				podClaims[scalar(field(c, "name"))] = c
			}
			for _, list := range []string{"initContainers", "containers"} {
				for _, c := range seq(field(spec, list)) {
					ctr := container(c, podClaims, claims, namespaces[0])
					// In every other namespace its pods run in, the same
					// claims must resolve: "claim@namespace" when not.
					for _, ns := range namespaces[1:] {
						for _, u := range container(c, podClaims, claims, ns).Unresolved {
							ctr.Unresolved = append(ctr.Unresolved, u+"@"+ns)
						}
					}
					if p.ClusterScoped && len(p.Users) > 0 {
						for i, u := range ctr.Unresolved {
							if !strings.Contains(u, "@") {
								ctr.Unresolved[i] = u + "@" + namespaces[0]
							}
						}
					}
					p.Containers = append(p.Containers, ctr)
				}
			}
			out = append(out, p)
		})
	}
	return out
}

// runtimeUsers are, per cluster-scoped runtime ("Kind/name"), the
// namespaces of the render's objects that run pods from it, sorted: KServe
// InferenceServices whose predictor's model names the runtime (KServe
// prefers a namespaced ServingRuntime of that name, which a namespaced
// claim template serves as well), and Kubeflow TrainJobs whose runtimeRef
// names a ClusterTrainingRuntime (its default kind).
func runtimeUsers(objs []*yaml.RNode) map[string][]string {
	out := map[string][]string{}
	add := func(key, ns string) {
		if !slices.Contains(out[key], ns) {
			out[key] = append(out[key], ns)
			slices.Sort(out[key])
		}
	}
	for _, o := range objs {
		group, _, _ := strings.Cut(o.GetApiVersion(), "/")
		spec := field(o.YNode(), "spec")
		switch {
		case group == "serving.kserve.io" && o.GetKind() == "InferenceService":
			if rt := scalar(field(field(field(spec, "predictor"), "model"), "runtime")); rt != "" {
				add("ClusterServingRuntime/"+rt, o.GetNamespace())
			}
		case group == "trainer.kubeflow.org" && o.GetKind() == "TrainJob":
			ref := field(spec, "runtimeRef")
			if kind := scalar(field(ref, "kind")); kind == "" || kind == "ClusterTrainingRuntime" {
				if name := scalar(field(ref, "name")); name != "" {
					add("ClusterTrainingRuntime/"+name, o.GetNamespace())
				}
			}
		}
	}
	return out
}

// walk calls fn for every pod spec under n (a map with a list of
// containers), with its path; it does not look inside a pod spec.
func walk(n *yaml.Node, path string, fn func(*yaml.Node, string)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walk(c, path, fn)
		}
	case yaml.MappingNode:
		if cs := field(n, "containers"); cs != nil && cs.Kind == yaml.SequenceNode && path != "" {
			fn(n, path)
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			walk(n.Content[i+1], join(path, n.Content[i].Value), fn)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walk(c, fmt.Sprintf("%s[%d]", path, i), fn)
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index holds the render's claims and claim templates by kind, namespace
// and name, and the templates a controller makes from an object of the
// render (provided).
func index(objs []*yaml.RNode) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	for _, o := range objs {
		k := o.GetKind()
		switch {
		case (k == "ResourceClaimTemplate" || k == "ResourceClaim") && strings.HasPrefix(o.GetApiVersion(), "resource.k8s.io/"):
			out[k+"/"+o.GetNamespace()+"/"+o.GetName()] = o.YNode()
		case k == "ComputeDomain" && strings.HasPrefix(o.GetApiVersion(), "resource.nvidia.com/"):
			// NVIDIA's ComputeDomain controller creates the IMEX channel's
			// template: a claim of it gives no GPU.
			if name := scalar(field(field(field(field(o.YNode(), "spec"), "channel"), "resourceClaimTemplate"), "name")); name != "" {
				out["ResourceClaimTemplate/"+o.GetNamespace()+"/"+name] = provided
			}
		}
	}
	return out
}

// provided stands for a claim template a controller makes: it resolves,
// and asks for no device the proof counts.
var provided = &yaml.Node{Kind: yaml.MappingNode}

func container(c *yaml.Node, podClaims map[string]*yaml.Node, claims map[string]*yaml.Node, ns string) Container {
	out := Container{Name: scalar(field(c, "name")), Extended: map[string]int64{}}
	res := field(c, "resources")
	for _, list := range []string{"requests", "limits"} {
		m := field(res, list)
		if m == nil || m.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			name := m.Content[i].Value
			if !detect.IsExtendedResource(name) {
				continue
			}
			q, err := resource.ParseQuantity(m.Content[i+1].Value)
			if n := q.Value(); err == nil && n > 0 {
				out.Extended[name] = n // limits win: they come second
			} else if err == nil {
				delete(out.Extended, name)
			}
		}
	}
	for _, cc := range seq(field(res, "claims")) {
		name, request := scalar(field(cc, "name")), scalar(field(cc, "request"))
		if classic(podClaims[name], claims, ns) {
			out.Classic = true
			continue
		}
		devs, ok := resolve(name, request, podClaims[name], claims, ns)
		if !ok {
			out.Unresolved = append(out.Unresolved, name)
		}
		out.Devices = append(out.Devices, devs...)
	}
	return out
}

// classic reports whether a pod claim is classic DRA: the v1alpha2 form
// (source.resourceClaimTemplateName, source.resourceClaimName) or a
// template or claim of resource.k8s.io/v1alpha2 in the render.
func classic(pc *yaml.Node, claims map[string]*yaml.Node, ns string) bool {
	if pc == nil {
		return false
	}
	if field(pc, "source") != nil {
		return true
	}
	for kind, key := range map[string]string{"ResourceClaimTemplate": "resourceClaimTemplateName", "ResourceClaim": "resourceClaimName"} {
		if n := claims[kind+"/"+ns+"/"+scalar(field(pc, key))]; n != nil && scalar(field(n, "apiVersion")) == "resource.k8s.io/v1alpha2" {
			return true
		}
	}
	return false
}

// resolve finds the devices of a container's claim: the pod's claim entry
// names a template or a claim, which must be in the render in the pod's
// namespace.
func resolve(name, request string, pc *yaml.Node, claims map[string]*yaml.Node, ns string) ([]Device, bool) {
	if pc == nil {
		return nil, false
	}
	kind, obj, shared := "ResourceClaimTemplate", scalar(field(pc, "resourceClaimTemplateName")), false
	if obj == "" {
		kind, obj, shared = "ResourceClaim", scalar(field(pc, "resourceClaimName")), true
	}
	n := claims[kind+"/"+ns+"/"+obj]
	if n == nil || obj == "" {
		return nil, false
	}
	if n == provided {
		return nil, true
	}
	spec := field(n, "spec")
	if kind == "ResourceClaimTemplate" {
		spec = field(spec, "spec")
	}
	devices := field(spec, "devices")
	var constraints []string
	for _, c := range seq(field(devices, "constraints")) {
		constraints = append(constraints, strings.Join(scalars(field(c, "requests")), ",")+"="+scalar(field(c, "matchAttribute")))
	}
	v1 := scalar(field(n, "apiVersion")) == "resource.k8s.io/v1"
	var out []Device
	for _, r := range seq(field(devices, "requests")) {
		if request != "" && scalar(field(r, "name")) != request {
			continue
		}
		d := device(r, v1)
		d.Claim, d.Shared, d.Constraints = name, shared, constraints
		out = append(out, d)
	}
	return out, len(out) > 0
}

// device reads one request, as resource.k8s.io/v1 (exactly,
// firstAvailable) or v1beta1 (the fields at the top) writes it; v1 says
// the object is resource.k8s.io/v1, which has no fields at the top.
func device(r *yaml.Node, v1 bool) Device {
	var d Device
	src := r
	if ex := field(r, "exactly"); ex != nil {
		src = ex
	} else if fa := seq(field(r, "firstAvailable")); len(fa) > 0 {
		src, d.Alternatives = fa[0], len(fa)-1
	} else if v1 {
		d.Invalid = "request " + scalar(field(r, "name")) + " has neither exactly nor firstAvailable, which resource.k8s.io/v1 needs (deviceClassName at the request's top is v1beta1's shape: the API server rejects it)"
	}
	d.Class = scalar(field(src, "deviceClassName"))
	d.Count = 1
	switch scalar(field(src, "allocationMode")) {
	case "All":
		d.All, d.Count = true, 0
	default:
		if c := scalar(field(src, "count")); c != "" {
			fmt.Sscan(c, &d.Count)
		}
	}
	for _, s := range seq(field(src, "selectors")) {
		d.Selectors = append(d.Selectors, scalar(field(field(s, "cel"), "expression")))
	}
	if req := field(field(src, "capacity"), "requests"); req != nil && req.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(req.Content); i += 2 {
			d.Capacity = append(d.Capacity, req.Content[i].Value+"="+req.Content[i+1].Value)
		}
	}
	return d
}

func field(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func seq(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func scalars(n *yaml.Node) []string {
	var out []string
	for _, c := range seq(n) {
		out = append(out, scalar(c))
	}
	return out
}
