package simulate

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// Inventory kind and apiVersion.
const (
	InventoryAPIVersion = "kubedra.io/v1alpha1"
	InventoryKind       = "NodeInventory"
)

// Mode is how a pool serves devices in one world.
type Mode string

// Device modes.
const (
	ModePlugin Mode = "plugin"
	ModeDRA    Mode = "dra"
)

// Pool is one node pool of an inventory.
type Pool struct {
	Name   string
	Shape  *Shape
	Count  int
	Labels map[string]string
	Taints []corev1.Taint
	// Before and After are the pool's device modes (default plugin, dra).
	Before, After Mode
	Options       PoolOptions
	// Line is where the pool starts in its file.
	Line int
}

// Inventory is a NodeInventory file: node pools described by shapes.
type Inventory struct {
	File  string
	Pools []Pool
}

// Rule ids of the input simulate cannot use.
const (
	// RuleInventory: a NodeInventory file that does not parse or describes
	// pools simulate cannot build; nothing is simulated.
	RuleInventory = "simulate/inventory"
	// RuleBadInput: a manifest object simulate cannot decode; the other
	// workloads are still simulated.
	RuleBadInput = "simulate/bad-input"
)

type parser struct {
	file string
	errs inventory.Diagnostics
}

// errorf records a problem of the inventory at n's line (0: none known).
func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, inventory.Diagnostic{Severity: inventory.Error, Rule: RuleInventory, File: p.file, Line: line, Message: fmt.Sprintf(format, args...)})
}

// fields checks that n is a map with only the allowed keys and returns its
// values by key.
func (p *parser) fields(n *yaml.Node, where string, allowed ...string) map[string]*yaml.Node {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "%s must be a map", where)
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ok := false
		for _, a := range allowed {
			if k.Value == a {
				ok = true
			}
		}
		if !ok {
			p.errorf(k, "unknown key %q in %s (known: %s)", k.Value, where, strings.Join(allowed, ", "))
			continue
		}
		out[k.Value] = v
	}
	return out
}

func (p *parser) str(n *yaml.Node, where string) string {
	if n == nil {
		return ""
	}
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, "%s must be a string", where)
		return ""
	}
	return n.Value
}

func (p *parser) decode(n *yaml.Node, where string, into any) bool {
	data, err := yaml.NewRNode(n).MarshalJSON()
	if err == nil {
		err = sigsyaml.UnmarshalStrict(data, into)
	}
	if err != nil {
		p.errorf(n, "%s: %v", where, err)
		return false
	}
	return true
}

// ParseInventory reads a NodeInventory. Its problems are an
// *inventory.DiagnosticsError, each at the file and line of its YAML node;
// unknown keys and unknown shapes are errors.
func ParseInventory(file string, data []byte) (*Inventory, error) {
	p := &parser{file: file}
	rn, err := yaml.Parse(string(data))
	if err != nil {
		p.errorf(nil, "%v", err)
		return nil, p.errs.Err()
	}
	root := rn.YNode()
	f := p.fields(root, "the inventory", "apiVersion", "kind", "metadata", "pools")
	if f == nil {
		return nil, p.errs.Err()
	}
	if v := p.str(f["apiVersion"], "apiVersion"); v != InventoryAPIVersion {
		p.errorf(orNode(f["apiVersion"], root), "apiVersion must be %s, not %q", InventoryAPIVersion, v)
	}
	if v := p.str(f["kind"], "kind"); v != InventoryKind {
		p.errorf(orNode(f["kind"], root), "kind must be %s, not %q", InventoryKind, v)
	}
	inv := &Inventory{File: file}
	pools := f["pools"]
	if pools == nil || pools.Kind != yaml.SequenceNode || len(pools.Content) == 0 {
		p.errorf(orNode(pools, root), "pools must be a non-empty list")
		return nil, p.errs.Err()
	}
	names := map[string]bool{}
	for i, pn := range pools.Content {
		pool, ok := p.pool(pn, fmt.Sprintf("pools[%d]", i))
		if !ok {
			continue
		}
		if names[pool.Name] {
			p.errorf(pn, "pools[%d]: pool %q is listed twice", i, pool.Name)
			continue
		}
		names[pool.Name] = true
		inv.Pools = append(inv.Pools, pool)
	}
	if err := p.errs.Err(); err != nil {
		return nil, err
	}
	return inv, nil
}

func orNode(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

func (p *parser) pool(n *yaml.Node, where string) (Pool, bool) {
	before := len(p.errs)
	f := p.fields(n, where, "name", "shape", "count", "labels", "taints", "mode", "mig", "migStrategy", "timeSlicing")
	if f == nil {
		return Pool{}, false
	}
	pool := Pool{Line: n.Line, Before: ModePlugin, After: ModeDRA}
	pool.Name = p.str(f["name"], where+".name")
	if pool.Name == "" {
		p.errorf(n, "%s: name is required", where)
	} else if errs := validation.IsDNS1123Label(pool.Name); len(errs) > 0 {
		p.errorf(f["name"], "%s.name %q: %s", where, pool.Name, errs[0])
	}
	where = fmt.Sprintf("pool %s", orString(pool.Name, where))
	switch c := f["count"]; {
	case c == nil:
		p.errorf(n, "%s: count is required", where)
	default:
		v, err := strconv.Atoi(c.Value)
		if err != nil || v < 1 || c.Kind != yaml.ScalarNode {
			p.errorf(c, "%s: count must be a positive integer, not %q", where, c.Value)
		}
		pool.Count = v
	}
	if l := f["labels"]; l != nil {
		p.decode(l, where+".labels", &pool.Labels)
	}
	if t := f["taints"]; t != nil {
		if p.decode(t, where+".taints", &pool.Taints) {
			for _, tt := range pool.Taints {
				switch tt.Effect {
				case corev1.TaintEffectNoSchedule, corev1.TaintEffectNoExecute, corev1.TaintEffectPreferNoSchedule:
				default:
					p.errorf(t, "%s.taints: taint %q has effect %q: use NoSchedule, PreferNoSchedule or NoExecute", where, tt.Key, tt.Effect)
				}
			}
		}
	}
	if m := f["mode"]; m != nil {
		p.mode(m, where, &pool)
	}
	pool.Options.MIG = p.str(f["mig"], where+".mig")
	pool.Options.MIGStrategy = p.str(f["migStrategy"], where+".migStrategy")
	if ts := f["timeSlicing"]; ts != nil {
		v, err := strconv.Atoi(ts.Value)
		if err != nil || v < 1 {
			p.errorf(ts, "%s: timeSlicing must be a positive integer, not %q", where, ts.Value)
		}
		pool.Options.TimeSlicing = v
	}
	switch s := f["shape"]; {
	case s == nil:
		p.errorf(n, "%s: shape is required", where)
	case s.Kind == yaml.ScalarNode:
		sh, ok := LookupShape(s.Value)
		if !ok {
			p.errorf(s, "%s: unknown shape %q (kubedra simulate --list-shapes lists them, or write the shape out in full)", where, s.Value)
			break
		}
		pool.Shape = sh
	default:
		pool.Shape = p.customShape(s, where+".shape")
	}
	if pool.Shape != nil {
		if err := pool.Shape.check(pool.Options); err != nil {
			p.errorf(n, "%s: %v", where, err)
		}
	}
	return pool, len(p.errs) == before
}

func orString(s, fallback string) string {
	if s != "" {
		return s
	}
	return fallback
}

func (p *parser) mode(n *yaml.Node, where string, pool *Pool) {
	parse := func(n *yaml.Node) Mode {
		switch m := Mode(p.str(n, where+".mode")); m {
		case ModePlugin, ModeDRA:
			return m
		default:
			p.errorf(n, "%s: mode %q: use plugin or dra", where, m)
			return ""
		}
	}
	if n.Kind == yaml.ScalarNode {
		m := parse(n)
		pool.Before, pool.After = m, m
		return
	}
	f := p.fields(n, where+".mode", "before", "after")
	if b := f["before"]; b != nil {
		pool.Before = parse(b)
	}
	if a := f["after"]; a != nil {
		pool.After = parse(a)
	}
}

// customShape is a shape written out in full.
func (p *parser) customShape(n *yaml.Node, where string) *Shape {
	f := p.fields(n, where, "name", "labels", "allocatable", "devices")
	if f == nil {
		return nil
	}
	s := &Shape{Name: p.str(f["name"], where+".name"), Provider: "custom", Source: "inventory " + p.file,
		Custom: &View{Labels: map[string]string{}, Allocatable: map[string]int64{}, Devices: map[string][]resourceapi.Device{}}}
	if s.Name == "" {
		s.Name = "custom"
	}
	if l := f["labels"]; l != nil {
		p.decode(l, where+".labels", &s.Custom.Labels)
	}
	if a := f["allocatable"]; a != nil {
		var m map[string]string
		if p.decode(a, where+".allocatable", &m) {
			for k, v := range m {
				q, err := resource.ParseQuantity(v)
				if err != nil || q.Sign() < 0 {
					p.errorf(a, "%s.allocatable.%s: %q is not a quantity", where, k, v)
					continue
				}
				s.Custom.Allocatable[k] = q.Value()
			}
		}
	}
	if d := f["devices"]; d != nil {
		if d.Kind != yaml.SequenceNode {
			p.errorf(d, "%s.devices must be a list", where)
			return s
		}
		for i, dn := range d.Content {
			dw := fmt.Sprintf("%s.devices[%d]", where, i)
			df := p.fields(dn, dw, "driver", "name", "count", "attributes", "capacity")
			if df == nil {
				continue
			}
			driver := p.str(df["driver"], dw+".driver")
			name := p.str(df["name"], dw+".name")
			if driver == "" || name == "" {
				p.errorf(dn, "%s: driver and name are required", dw)
				continue
			}
			count := 1
			if c := df["count"]; c != nil {
				v, err := strconv.Atoi(c.Value)
				if err != nil || v < 1 {
					p.errorf(c, "%s.count must be a positive integer", dw)
					continue
				}
				count = v
			}
			var dev resourceapi.Device
			if a := df["attributes"]; a != nil {
				p.decode(a, dw+".attributes", &dev.Attributes)
			}
			if c := df["capacity"]; c != nil {
				var m map[resourceapi.QualifiedName]resource.Quantity
				if p.decode(c, dw+".capacity", &m) {
					dev.Capacity = map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}
					for k, q := range m {
						dev.Capacity[k] = resourceapi.DeviceCapacity{Value: q}
					}
				}
			}
			for k := range count {
				dd := *dev.DeepCopy()
				dd.Name = name
				if count > 1 {
					dd.Name = fmt.Sprintf("%s-%d", name, k)
				}
				s.Custom.Devices[driver] = append(s.Custom.Devices[driver], dd)
			}
		}
	}
	return s
}
