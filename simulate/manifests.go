package simulate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

// Template is one pod template of a workload, with the number of pods it
// makes.
type Template struct {
	File            string `json:"file"`
	Line            int    `json:"line"`
	APIVersion      string `json:"-"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	PodTemplatePath string `json:"podTemplatePath"`
	// Pods is replicas (times parallelism for nested jobs); DaemonSet
	// means one pod per node its placement allows.
	Pods      int  `json:"pods"`
	DaemonSet bool `json:"-"`
	// Gang names the object whose templates schedule together, in Groups
	// groups that each fit whole or not at all (Pods/Groups pods of this
	// template each); "" when the template's pods schedule one by one.
	Gang   string `json:"-"`
	Groups int    `json:"-"`
	Spec   *corev1.PodSpec
	// Key identifies the template across the before and after manifests:
	// kind, namespace, name, path and the occurrence of that identity.
	Key string `json:"-"`
}

// Manifests are the objects simulate needs from a set of documents.
type Manifests struct {
	Templates []*Template
	// others are the pod templates that ask for no device, by Key: the
	// after form of a template a migration left without one.
	others         map[string]*Template
	ClaimTemplates map[string]*resourceapi.ResourceClaimTemplate
	Claims         map[string]*resourceapi.ResourceClaim
	Classes        []*resourceapi.DeviceClass
	// Skipped are the pod templates simulate cannot judge (a quantity
	// left as a placeholder), with the reason.
	Skipped []Skip
	// Diagnostics are the objects that could not be decoded (RuleBadInput),
	// at their file and line.
	Diagnostics inventory.Diagnostics
}

func nsName(ns, name string) string {
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + name
}

// Collect reads the pod templates that ask for devices (extended
// resources or resource claims) and the DRA objects of docs. file names
// documents whose Origin has no path.
func Collect(docs []*inventory.Document, opts detect.Options) *Manifests {
	m := &Manifests{ClaimTemplates: map[string]*resourceapi.ResourceClaimTemplate{}, Claims: map[string]*resourceapi.ResourceClaim{}, others: map[string]*Template{}}
	seen := map[string]int{}
	for di, d := range docs {
		if d == nil || d.Node == nil {
			continue
		}
		kind, api := d.Node.GetKind(), d.Node.GetApiVersion()
		if strings.HasPrefix(api, "resource.k8s.io/") {
			m.draObject(d, kind, api)
			continue
		}
		specs := detect.PodSpecs(d, opts)
		gang, groups := gangOf(d.Node, api, kind, len(specs))
		for _, ps := range specs {
			if ps.Generic {
				continue
			}
			id := strings.Join([]string{kind, d.Node.GetNamespace(), d.Node.GetName(), ps.Path}, "|")
			key := id + "|" + strconv.Itoa(seen[id])
			seen[id]++
			line := d.Origin.Line
			if line == 0 {
				line = d.Node.YNode().Line
			}
			if why := placeholder(ps.Node); why != "" {
				ref := TemplateRef{File: d.Origin.Path, Line: line, Kind: kind, Namespace: d.Node.GetNamespace(), Name: d.Node.GetName(), PodTemplatePath: ps.Path}
				m.Skipped = append(m.Skipped, Skip{TemplateRef: ref, Reason: why, key: key})
				continue
			}
			var spec corev1.PodSpec
			data, err := ps.Node.MarshalJSON()
			if err == nil {
				err = json.Unmarshal(data, &spec)
			}
			if err != nil {
				m.bad(d, ps.Node.YNode().Line, ps.Path, "%s %s: pod template %s: %v", kind, d.Node.GetName(), ps.Path, err)
				continue
			}
			t := &Template{File: d.Origin.Path, Line: line, APIVersion: api, Kind: kind, Namespace: d.Node.GetNamespace(),
				Name: d.Node.GetName(), PodTemplatePath: ps.Path, Spec: &spec, DaemonSet: kind == "DaemonSet", Key: key}
			t.Pods = ps.Replicas
			if t.Pods == 0 {
				t.Pods = replicas(d.Node, ps.Path)
			}
			if gang && groups > 0 && t.Pods%groups == 0 {
				t.Gang, t.Groups = strconv.Itoa(di), groups
			}
			if !asksDevices(&spec) {
				m.others[t.Key] = t
				continue
			}
			m.Templates = append(m.Templates, t)
		}
	}
	return m
}

// Skip is a pod template simulate cannot judge, with the reason: input to
// render first, not an error.
type Skip struct {
	TemplateRef
	Reason string `json:"reason"`
	key    string
}

// TemplateRef names a pod template: its object, path and location.
type TemplateRef struct {
	File            string `json:"file"`
	Line            int    `json:"line"`
	Kind            string `json:"kind"`
	Namespace       string `json:"namespace"`
	Name            string `json:"name"`
	PodTemplatePath string `json:"podTemplatePath"`
}

func (t *Template) ref() TemplateRef {
	return TemplateRef{File: t.File, Line: t.Line, Kind: t.Kind, Namespace: t.Namespace, Name: t.Name, PodTemplatePath: t.PodTemplatePath}
}

// placeholder says which device quantity of a pod spec is a placeholder
// left in ($GPU_PER_NODE, ${N}, {{ .Values.x }}), "" when none is.
func placeholder(spec *yaml.RNode) string {
	for _, list := range []string{"initContainers", "containers"} {
		cs := spec.Field(list)
		if cs == nil || cs.Value.YNode().Kind != yaml.SequenceNode {
			continue
		}
		for _, c := range cs.Value.Content() {
			for _, rl := range []string{"limits", "requests"} {
				m := yaml.NewRNode(c).Field("resources")
				if m == nil || m.Value.Field(rl) == nil {
					continue
				}
				q := m.Value.Field(rl).Value
				if q.YNode().Kind != yaml.MappingNode {
					continue
				}
				content := q.YNode().Content
				for i := 0; i+1 < len(content); i += 2 {
					v := content[i+1].Value
					if detect.IsExtendedResource(content[i].Value) && (strings.Contains(v, "$") || strings.Contains(v, "{{")) {
						name := ""
						if n := yaml.NewRNode(c).Field("name"); n != nil {
							name = n.Value.YNode().Value
						}
						return fmt.Sprintf("quantity is a placeholder: render it first (%s: %s in container %s)", content[i].Value, v, name)
					}
				}
			}
		}
	}
	return ""
}

// gangOf says whether the templates of an object schedule together, and
// in how many groups: a LeaderWorkerSet's replicas groups (leader and
// workers), a JobSet (and a training runtime's JobSet), an MPIJob, a
// PyTorchJob of more than one replica spec (their operators gang-schedule
// them); specs is the number of pod templates the object has.
func gangOf(obj *yaml.RNode, api, kind string, specs int) (bool, int) {
	group, _, _ := strings.Cut(api, "/")
	switch group + "/" + kind {
	case "leaderworkerset.x-k8s.io/LeaderWorkerSet":
		n := 1
		if spec := obj.Field("spec"); spec != nil {
			if k, ok := count(spec.Value, "replicas"); ok {
				n = k
			}
		}
		return true, n
	case "jobset.x-k8s.io/JobSet", "trainer.kubeflow.org/TrainingRuntime", "trainer.kubeflow.org/ClusterTrainingRuntime", "kubeflow.org/MPIJob":
		return true, 1
	case "kubeflow.org/PyTorchJob":
		return specs > 1, 1
	}
	return false, 0
}

// bad records that the object of d, or its part at field (at line), could
// not be decoded.
func (m *Manifests) bad(d *inventory.Document, line int, field, format string, args ...any) {
	m.Diagnostics = append(m.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleBadInput,
		File: d.Origin.Path, Line: line, Object: objectRef(d), Field: field, Message: fmt.Sprintf(format, args...)})
}

// objectRef names the object of d.
func objectRef(d *inventory.Document) *inventory.ObjectRef {
	return &inventory.ObjectRef{APIVersion: d.Node.GetApiVersion(), Kind: d.Node.GetKind(), Namespace: d.Node.GetNamespace(), Name: d.Node.GetName()}
}

func (m *Manifests) draObject(d *inventory.Document, kind, api string) {
	switch kind {
	case "ResourceClaimTemplate", "ResourceClaim", "DeviceClass":
	default:
		return
	}
	if api != "resource.k8s.io/v1" && api != "resource.k8s.io/v1beta2" {
		m.bad(d, d.Origin.Line, "", "%s %s: %s is not simulated (resource.k8s.io/v1 and v1beta2 are)", kind, d.Node.GetName(), api)
		return
	}
	data, err := d.Node.MarshalJSON()
	if err != nil {
		m.bad(d, d.Origin.Line, "", "%v", err)
		return
	}
	var obj interface{ GetName() string }
	switch kind {
	case "ResourceClaimTemplate":
		o := &resourceapi.ResourceClaimTemplate{}
		if err = json.Unmarshal(data, o); err == nil {
			m.ClaimTemplates[nsName(o.Namespace, o.Name)] = o
		}
		obj = o
	case "ResourceClaim":
		o := &resourceapi.ResourceClaim{}
		if err = json.Unmarshal(data, o); err == nil {
			m.Claims[nsName(o.Namespace, o.Name)] = o
		}
		obj = o
	case "DeviceClass":
		o := &resourceapi.DeviceClass{}
		if err = json.Unmarshal(data, o); err == nil {
			m.Classes = append(m.Classes, o)
		}
		obj = o
	}
	if err != nil {
		m.bad(d, d.Origin.Line, "", "%s %s: %v", kind, obj.GetName(), err)
	}
}

// asksDevices reports whether a pod spec requests an extended resource
// (more than zero of it) or references a resource claim.
func asksDevices(spec *corev1.PodSpec) bool {
	if len(spec.ResourceClaims) > 0 {
		return true
	}
	for _, list := range [][]corev1.Container{spec.InitContainers, spec.Containers} {
		for _, c := range list {
			for _, rl := range []corev1.ResourceList{c.Resources.Limits, c.Resources.Requests} {
				for r, q := range rl {
					if detect.IsExtendedResource(string(r)) && !q.IsZero() {
						return true
					}
				}
			}
		}
	}
	return false
}

// replicas is the number of pods a pod template of a kind without replica
// groups makes: the replicas (or a Job's parallelism, its completions when
// fewer) of each map that holds a template on the way to it.
func replicas(doc *yaml.RNode, path string) int {
	segs := splitPath(path)
	n := 1
	for len(segs) >= 2 && segs[len(segs)-2] == "template" && segs[len(segs)-1] == "spec" {
		segs = segs[:len(segs)-2]
		holder, err := doc.Pipe(yaml.Lookup(segs...))
		if err != nil || holder == nil {
			break
		}
		if k, ok := count(holder, "replicas"); ok {
			n *= k
		} else if k, ok := count(holder, "parallelism"); ok {
			if c, ok := count(holder, "completions"); ok && c < k {
				k = c
			}
			n *= k
		}
	}
	return n
}

// count is the non-negative integer field f of m.
func count(m *yaml.RNode, f string) (int, bool) {
	v := m.Field(f)
	if v == nil || v.Value == nil {
		return 0, false
	}
	k, err := strconv.Atoi(v.Value.YNode().Value)
	return k, err == nil && k >= 0
}

// splitPath splits a kyaml field path on dots outside [...].
func splitPath(p string) []string {
	var out []string
	depth, start := 0, 0
	for i, r := range p {
		switch r {
		case '[':
			if depth == 0 && i > start {
				out = append(out, p[start:i])
				start = i
			}
			depth++
		case ']':
			depth--
		case '.':
			if depth == 0 {
				if i > start {
					out = append(out, p[start:i])
				}
				start = i + 1
			}
		}
	}
	if start < len(p) {
		out = append(out, p[start:])
	}
	return out
}
