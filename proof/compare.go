package proof

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

// Problem is a pod template whose devices differ after the migration.
type Problem struct {
	Object    inventory.ObjectRef `json:"object" yaml:"object"`
	Path      string              `json:"path" yaml:"path"`
	Container string              `json:"container,omitempty" yaml:"container,omitempty"`
	Message   string              `json:"message" yaml:"message"`
}

// Diagnostic is the problem as an error of rule at file: its object and
// container, the message after what (the unit's or the file's verdict).
func (p Problem) Diagnostic(rule, file, what, fix string) inventory.Diagnostic {
	obj := p.Object
	return inventory.Diagnostic{Severity: inventory.Error, Rule: rule, File: file, Object: &obj, Container: p.Container, Message: what + p.Message, Fix: fix}
}

// String is the problem as one line.
func (p Problem) String() string {
	s := p.Object.String()
	if p.Container != "" {
		s += " container " + p.Container
	}
	return s + ": " + p.Message
}

// Classes knows which device family each device class serves: the class's
// driver (from its selectors) and detect's driver families.
type Classes map[string]string

// driverExpr finds the driver a DeviceClass selects.
var driverExpr = regexp.MustCompile(`device\.driver\s*==\s*["']([^"']+)["']`)

// Add learns the class's family from one of its CEL selectors.
func (c Classes) Add(class, expression string) {
	if m := driverExpr.FindStringSubmatch(expression); m != nil {
		if f := detect.FamilyOfDriver(m[1]); f != "" {
			c[class] = f
		}
	}
}

// With is c and the DeviceClasses of a render.
func (c Classes) With(objs []*yaml.RNode) Classes {
	out := Classes{}
	for k, v := range c {
		out[k] = v
	}
	for _, o := range objs {
		if o.GetKind() != "DeviceClass" || !strings.HasPrefix(o.GetApiVersion(), "resource.k8s.io/") {
			continue
		}
		for _, s := range seq(field(field(o.YNode(), "spec"), "selectors")) {
			out.Add(o.GetName(), scalar(field(field(s, "cel"), "expression")))
		}
	}
	return out
}

// family is the device family of an extended resource; an unknown one is
// its own family, which only the same resource (or a class of no known
// family) can serve.
func family(resource string) string {
	if f := detect.FamilyOfResource(resource); f != "" {
		return f
	}
	return "?"
}

func (c Classes) family(class string) string {
	if f := c[class]; f != "" {
		return f
	}
	return "?"
}

// Compare says how each pod template of before fares in after: every
// container must get the same devices (what it asked through extended
// resources, now through claims of a class of the same family and count,
// a MIG profile kept in the selectors; claims it had kept as they were),
// with no extended resource left beside a new claim for the same devices,
// and every new claim found in the render, in the pod's namespace.
func Compare(before, after []Pod, classes Classes) []Problem {
	// Objects of one kind, namespace and name may come more than once
	// (documents from several files, in memory): the n-th before is the
	// n-th after.
	byKey := map[string]Pod{}
	for _, p := range keyed(after) {
		byKey[p.key] = p.Pod
	}
	var out []Problem
	for _, kb := range keyed(before) {
		b := kb.Pod
		a, ok := byKey[kb.key]
		if !ok {
			if asks(b) {
				out = append(out, Problem{Object: b.Object, Path: b.Path, Message: "the pod template is not in the render after the migration"})
			}
			continue
		}
		// The first container of each name (a pod of 10,000 containers
		// made a search for each a quadratic walk).
		byName := make(map[string]int, len(a.Containers))
		for i := len(a.Containers) - 1; i >= 0; i-- {
			byName[a.Containers[i].Name] = i
		}
		for _, bc := range b.Containers {
			i, found := byName[bc.Name]
			if !found {
				if len(bc.Extended)+len(bc.Devices) > 0 {
					out = append(out, Problem{Object: b.Object, Path: b.Path, Container: bc.Name, Message: "the container is gone after the migration"})
				}
				continue
			}
			if bc.Classic {
				continue // classic DRA: its devices are opaque parameters
			}
			for _, msg := range compareContainer(bc, a.Containers[i], a, classes) {
				out = append(out, Problem{Object: b.Object, Path: b.Path, Container: bc.Name, Message: msg})
			}
		}
	}
	return out
}

// keyedPod is a pod template with its key, made unique by its occurrence.
type keyedPod struct {
	Pod
	key string
}

func keyed(pods []Pod) []keyedPod {
	seen := map[string]int{}
	out := make([]keyedPod, len(pods))
	for i, p := range pods {
		k := p.Key()
		if n := seen[k]; n > 0 {
			out[i] = keyedPod{p, fmt.Sprintf("%s#%d", k, n)}
		} else {
			out[i] = keyedPod{p, k}
		}
		seen[k]++
	}
	return out
}

func asks(p Pod) bool {
	for _, c := range p.Containers {
		if len(c.Extended)+len(c.Devices) > 0 {
			return true
		}
	}
	return false
}

// compareContainer compares one container before and after.
func compareContainer(b, a Container, pod Pod, classes Classes) []string {
	var msgs []string
	// Claims it had must be there as they were; the others are new.
	added := slices.Clone(a.Devices)
	for _, d := range b.Devices {
		if i := slices.IndexFunc(added, d.same); i >= 0 {
			added = slices.Delete(added, i, i+1)
		} else {
			msgs = append(msgs, fmt.Sprintf("claim %s (%s) changed or is gone", d.Claim, d))
		}
	}
	for _, u := range a.Unresolved {
		if !slices.Contains(b.Unresolved, u) {
			name, ns, ok := strings.Cut(u, "@")
			if !ok {
				ns = pod.Object.Namespace
			}
			msgs = append(msgs, fmt.Sprintf("claim %s names no ResourceClaimTemplate or ResourceClaim in the render in namespace %q", name, ns))
		}
	}
	if pod.ClusterScoped && len(pod.Users) == 0 && len(added) > 0 {
		msgs = append(msgs, "a cluster-scoped template: its pods run in the namespaces of what uses it (nothing in the render does), where its claim templates do not exist")
	}
	// Per family: what was asked before must be asked after, once.
	want, left, got := map[string]int64{}, map[string]int64{}, map[string]int64{}
	var fams []string
	see := func(f string) {
		if !slices.Contains(fams, f) {
			fams = append(fams, f)
		}
	}
	// A time-sliced resource (nvidia.com/gpu.shared) counts shares of a
	// device: a claim that takes shares of one device (capacity shares)
	// serves as many.
	shared := map[string]bool{}
	for r, n := range b.Extended {
		want[family(r)] += n
		see(family(r))
		if strings.HasSuffix(r, ".shared") {
			shared[family(r)] = true
		}
	}
	for r, n := range a.Extended {
		left[family(r)] += n
		see(family(r))
	}
	for _, d := range added {
		if d.Invalid != "" {
			msgs = append(msgs, fmt.Sprintf("claim %s: %s", d.Claim, d.Invalid))
			continue
		}
		if d.All {
			msgs = append(msgs, fmt.Sprintf("claim %s asks for every %s device", d.Claim, d.Class))
		}
		f := classes.family(d.Class)
		if n := d.shares(); shared[f] && n > 0 {
			got[f] += d.Count * n
		} else {
			got[f] += d.Count
		}
		see(f)
	}
	sort.Strings(fams)
	for _, f := range fams {
		switch {
		case left[f] > 0 && got[f] > 0:
			msgs = append(msgs, fmt.Sprintf("asks for the same devices twice: %s and %s", extended(a.Extended, f), devices(added, f, classes)))
		case want[f] != left[f]+got[f]:
			msgs = append(msgs, fmt.Sprintf("before: %s; after: %s", extended(b.Extended, f), after(a.Extended, added, f, classes)))
		}
	}
	// A MIG profile must be kept in the new claims' selectors.
	for r := range b.Extended {
		profile, ok := strings.CutPrefix(r, "nvidia.com/mig-")
		if !ok || a.Extended[r] > 0 {
			continue
		}
		if !slices.ContainsFunc(added, func(d Device) bool {
			return slices.ContainsFunc(d.Selectors, func(s string) bool { return strings.Contains(s, profile) })
		}) {
			msgs = append(msgs, fmt.Sprintf("%s: no new claim selects profile %s", r, profile))
		}
	}
	return msgs
}

// extended says a container's extended resources of family f.
func extended(m map[string]int64, f string) string {
	var parts []string
	for r, n := range m {
		if family(r) == f {
			parts = append(parts, fmt.Sprintf("%s: %d", r, n))
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "no device"
	}
	return strings.Join(parts, ", ")
}

// devices says the new claims' devices of family f.
func devices(ds []Device, f string, classes Classes) string {
	var parts []string
	for _, d := range ds {
		if classes.family(d.Class) == f {
			parts = append(parts, d.String())
		}
	}
	if len(parts) == 0 {
		return "no device"
	}
	return strings.Join(parts, " + ") + " (claims)"
}

func after(m map[string]int64, ds []Device, f string, classes Classes) string {
	e, d := extended(m, f), devices(ds, f, classes)
	switch {
	case e == "no device":
		return d
	case d == "no device":
		return e
	}
	return e + " and " + d
}
