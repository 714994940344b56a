package rewrite

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// exactlyFields are the fields of a v1alpha3/v1beta1 DeviceRequest that
// v1beta2 and v1 keep under `exactly` (dra.md section 1.2), in the order
// they are written.
var exactlyFields = []string{"deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity", "derivedAttributes"}

// Upgrade applies one DRA upgrade to a document (or list item) node, in
// place: the nodes that stay are moved, not copied, so their comments move
// with them. It checks that the document is the one the upgrade was
// planned for.
func Upgrade(root *yaml.RNode, u *plan.Upgrade) error {
	if root.YNode().Kind == yaml.DocumentNode {
		root = yaml.NewRNode(root.YNode().Content[0])
	}
	if k := root.GetKind(); k != u.Kind || root.GetName() != u.Name {
		return fmt.Errorf("document is %s/%s, the upgrade is for %s/%s", k, root.GetName(), u.Kind, u.Name)
	}
	if err := hoistPods(root, u.Pods); err != nil {
		return err
	}
	if err := removeGates(root, u.Gates); err != nil {
		return err
	}
	if u.APIVersion == "" {
		return nil
	}
	if err := upgradeLayout(root, u); err != nil {
		return err
	}
	return setScalar(root, "apiVersion", u.APIVersion)
}

// hoistPods moves up the resourceClaims[].source entries of the pod specs
// at paths.
func hoistPods(root *yaml.RNode, paths []string) error {
	for _, path := range paths {
		spec, err := lookup(root, path)
		if err != nil || spec == nil || spec.YNode().Kind != yaml.MappingNode {
			return fmt.Errorf("pod template %s not found", path)
		}
		if err := hoistSources(spec); err != nil {
			return err
		}
	}
	return nil
}

// removeGates removes the feature-gate settings of gates.
func removeGates(root *yaml.RNode, gates []plan.GateEdit) error {
	// Last first: removing a list item must not move the ones still to edit.
	for i := len(gates) - 1; i >= 0; i-- {
		if err := removeGate(root, gates[i]); err != nil {
			return err
		}
	}
	return nil
}

// upgradeLayout moves the fields of an object's older layout into the
// layout of u.APIVersion.
func upgradeLayout(root *yaml.RNode, u *plan.Upgrade) error {
	v1beta1 := strings.HasSuffix(u.APIVersion, "/v1beta1")
	switch u.Kind {
	case "ResourceClass":
		if err := toDeviceClass(root, u.DeviceClass); err != nil {
			return err
		}
	case "DeviceClass":
		clearField(field(root, "spec"), "suitableNodes")
	case "ResourceClaim", "ResourceClaimTemplate":
		return upgradeClaim(root, u, v1beta1)
	case "ResourceSlice":
		upgradeSlice(root, v1beta1)
	}
	return nil
}

// upgradeClaim rewrites a claim's (or claim template's) spec: a classic
// claim's devices, no controller, and requests in the target's layout.
func upgradeClaim(root *yaml.RNode, u *plan.Upgrade, v1beta1 bool) error {
	spec := field(root, "spec")
	if u.Kind == "ResourceClaimTemplate" {
		spec = field(spec, "spec")
	}
	if spec == nil {
		return fmt.Errorf("%s has no claim spec", u.Kind)
	}
	if u.Devices != nil {
		if err := classicClaim(spec, u.Devices); err != nil {
			return err
		}
	}
	clearField(spec, "controller") // 1.31's classic control-plane controller
	if devices := field(spec, "devices"); devices != nil {
		if reqs := field(devices, "requests"); reqs != nil && reqs.YNode().Kind == yaml.SequenceNode {
			for _, r := range reqs.YNode().Content {
				if v1beta1 {
					flatten(r)
				} else {
					wrapExactly(r)
				}
			}
		}
	}
	return nil
}

// upgradeSlice rewrites a ResourceSlice's devices for a target after
// v1beta1: basic devices unwrapped, v1alpha3 capacities wrapped.
func upgradeSlice(root *yaml.RNode, v1beta1 bool) {
	alpha3 := strings.HasSuffix(root.GetApiVersion(), "/v1alpha3")
	if devs := field(field(root, "spec"), "devices"); devs != nil && devs.YNode().Kind == yaml.SequenceNode && !v1beta1 {
		for _, d := range devs.YNode().Content {
			unwrapBasic(d)
			if alpha3 {
				wrapCapacity(d)
			}
		}
	}
}

// setScalar sets a top-level scalar in place, so that its comments stay.
func setScalar(root *yaml.RNode, key, value string) error {
	v := field(root, key)
	if v == nil || v.YNode().Kind != yaml.ScalarNode {
		return root.PipeE(yaml.SetField(key, yaml.NewStringRNode(value)))
	}
	v.YNode().Value, v.YNode().Tag = value, "!!str"
	return nil
}

// field returns the value of key in a map node, or nil.
func field(n *yaml.RNode, key string) *yaml.RNode {
	if n == nil || n.YNode().Kind != yaml.MappingNode {
		return nil
	}
	if f := n.Field(key); f != nil {
		return f.Value
	}
	return nil
}

// clearField removes key from a map node, if there.
func clearField(n *yaml.RNode, key string) {
	if n != nil && n.YNode().Kind == yaml.MappingNode {
		_, _ = n.Pipe(yaml.FieldClearer{Name: key})
	}
}

// take removes key from map m and returns its key and value nodes (nil
// when absent), so that they can be put elsewhere with their comments.
func take(m *yaml.Node, key string) (k, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			k, v = m.Content[i], m.Content[i+1]
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return k, v
		}
	}
	return nil, nil
}

// hoistSources moves each resourceClaims[].source.{resourceClaimName,
// resourceClaimTemplateName} up into the entry, where the `source` key
// was.
func hoistSources(spec *yaml.RNode) error {
	seq := field(spec, "resourceClaims")
	if seq == nil || seq.YNode().Kind != yaml.SequenceNode {
		return nil
	}
	for _, el := range seq.YNode().Content {
		if el.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i+1 < len(el.Content); i += 2 {
			k, v := el.Content[i], el.Content[i+1]
			if k.Value != "source" {
				continue
			}
			if v.Kind != yaml.MappingNode {
				return inventory.AtLine(k.Line, errors.New("resourceClaims[].source is not a map"))
			}
			moved := v.Content
			if len(moved) > 0 && k.HeadComment != "" && moved[0].HeadComment == "" {
				moved[0].HeadComment = k.HeadComment
			}
			el.Content = append(el.Content[:i], append(append([]*yaml.Node{}, moved...), el.Content[i+2:]...)...)
			break
		}
	}
	return nil
}

// wrapExactly moves a flat request's fields under `exactly` (v1alpha3 and
// v1beta1 to v1beta2 and v1). Requests with firstAvailable stay: their
// subrequests have the same fields in every version.
func wrapExactly(req *yaml.Node) {
	if req.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(req.Content); i += 2 {
		if k := req.Content[i].Value; k == "exactly" || k == "firstAvailable" {
			return
		}
	}
	ex := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	at := -1
	var rest []*yaml.Node
	for i := 0; i+1 < len(req.Content); i += 2 {
		k, v := req.Content[i], req.Content[i+1]
		if !slices.Contains(exactlyFields, k.Value) {
			rest = append(rest, k, v)
			continue
		}
		if at < 0 {
			at = len(rest)
		}
		ex.Content = append(ex.Content, k, v) // in the order written
	}
	if at < 0 {
		return
	}
	req.Content = rest
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "exactly"}
	req.Content = append(req.Content[:at], append([]*yaml.Node{key, ex}, req.Content[at:]...)...)
}

// flatten moves `exactly`'s fields up into the request (v1beta1, the
// target of 1.32).
func flatten(req *yaml.Node) {
	if req.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(req.Content); i += 2 {
		if req.Content[i].Value == "exactly" && req.Content[i+1].Kind == yaml.MappingNode {
			inner := req.Content[i+1].Content
			req.Content = append(req.Content[:i], append(append([]*yaml.Node{}, inner...), req.Content[i+2:]...)...)
			return
		}
	}
}

// unwrapBasic moves a device's basic.<field> up into the device.
func unwrapBasic(dev *yaml.Node) {
	if dev.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(dev.Content); i += 2 {
		if dev.Content[i].Value == "basic" && dev.Content[i+1].Kind == yaml.MappingNode {
			inner := dev.Content[i+1].Content
			dev.Content = append(dev.Content[:i], append(append([]*yaml.Node{}, inner...), dev.Content[i+2:]...)...)
			return
		}
	}
}

// wrapCapacity turns v1alpha3's capacity {memory: 80Gi} into {memory:
// {value: 80Gi}}.
func wrapCapacity(dev *yaml.Node) {
	caps := field(yaml.NewRNode(dev), "capacity")
	if caps == nil || caps.YNode().Kind != yaml.MappingNode {
		return
	}
	c := caps.YNode().Content
	for i := 1; i < len(c); i += 2 {
		if c[i].Kind == yaml.ScalarNode {
			v := c[i]
			c[i] = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: "value"}, {Kind: yaml.ScalarNode, Tag: v.Tag, Value: v.Value, Style: v.Style, LineComment: v.LineComment}}}
		}
	}
}

// classicClaim replaces a classic claim spec's class and parameters by
// devices, where resourceClassName was; their comments go to devices.
func classicClaim(spec, devices *yaml.RNode) error {
	m := spec.YNode()
	at, comments, line := takeFields(m, "resourceClassName", "parametersRef", "allocationMode")
	if _, v := take(m, "devices"); v != nil {
		return fmt.Errorf("a classic claim that also has devices")
	}
	if at < 0 || at > len(m.Content) {
		at = len(m.Content)
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "devices", HeadComment: comments, LineComment: line}
	m.Content = append(m.Content[:at], append([]*yaml.Node{key, yaml.CopyYNode(devices.YNode())}, m.Content[at:]...)...)
	return nil
}

// toDeviceClass turns a ResourceClass into a DeviceClass: its top-level
// driverName, parametersRef, suitableNodes and structuredParameters give
// way to spec, where driverName was.
func toDeviceClass(root, spec *yaml.RNode) error {
	if spec == nil {
		return fmt.Errorf("no DeviceClass spec planned")
	}
	m := root.YNode()
	at, comments, line := takeFields(m, "driverName", "parametersRef", "suitableNodes", "structuredParameters")
	if at < 0 || at > len(m.Content) {
		at = len(m.Content)
	}
	key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "spec", HeadComment: comments, LineComment: line}
	m.Content = append(m.Content[:at], append([]*yaml.Node{key, yaml.CopyYNode(spec.YNode())}, m.Content[at:]...)...)
	return setScalar(root, "kind", "DeviceClass")
}

// takeFields removes fields from map m and returns where the first of them
// was, and their head comments and line comments joined, for what
// replaces them.
func takeFields(m *yaml.Node, fields ...string) (at int, head, line string) {
	at = -1
	var heads, lines []string
	for _, f := range fields {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == f {
				if at < 0 || i < at {
					at = i
				}
				k, v := m.Content[i], m.Content[i+1]
				if k.HeadComment != "" {
					heads = append(heads, k.HeadComment)
				}
				for _, c := range []string{k.LineComment, v.LineComment} {
					if c != "" {
						lines = append(lines, strings.TrimSpace(strings.TrimPrefix(c, "#")))
					}
				}
				break
			}
		}
		take(m, f)
	}
	if len(lines) > 0 {
		line = "# " + strings.Join(lines, "; ")
	}
	return at, strings.Join(heads, "\n"), line
}

// removeGate removes one feature-gate setting: a featureGates map's key, or
// "Gate=value" (with one of its commas) from a flag string, in place.
func removeGate(root *yaml.RNode, g plan.GateEdit) error {
	if g.Key {
		parent := strings.TrimSuffix(strings.TrimSuffix(g.Field, g.Gate), ".")
		m := root
		if parent != "" {
			var err error
			if m, err = lookup(root, parent); err != nil || m == nil {
				return fmt.Errorf("feature gates at %s not found", parent)
			}
		}
		clearField(m, g.Gate)
		if parent != "" {
			dropEmpty(walk(root.YNode(), parsePath(parent)))
		}
		return nil
	}
	chain := walk(root.YNode(), parsePath(g.Field))
	if len(chain) == 0 || chain[len(chain)-1].Kind != yaml.ScalarNode {
		return fmt.Errorf("feature-gate setting at %s not found", g.Field)
	}
	n := chain[len(chain)-1]
	n.Value = withoutGate(n.Value, g.Gate)
	if strings.TrimSpace(n.Value) != "" && strings.TrimSpace(n.Value) != "--feature-gates=" || len(chain) < 2 {
		return nil
	}
	// A flag or argument left with no gates goes: the "--feature-gates="
	// item of a command, the feature-gates key of kubeadm's extraArgs map,
	// or the {name: feature-gates, value} entry of its list form.
	parent := chain[len(chain)-2]
	switch {
	case parent.Kind == yaml.SequenceNode:
		remove(parent, n)
		dropEmpty(chain[:len(chain)-1])
	case parent.Kind == yaml.MappingNode && len(chain) >= 3 && scalarField(parent, "name") == "feature-gates" && chain[len(chain)-3].Kind == yaml.SequenceNode:
		remove(chain[len(chain)-3], parent)
		dropEmpty(chain[:len(chain)-2])
	case parent.Kind == yaml.MappingNode:
		remove(parent, n)
		dropEmpty(chain[:len(chain)-1])
	}
	return nil
}

// dropEmpty removes the last node of chain (root first) from the map that
// holds it when removing a setting left it empty, and so on up: no
// `featureGates: {}`, `extraArgs: []` or `controllerManager: {}` stays
// behind (issue 28).
func dropEmpty(chain []*yaml.Node) {
	for ; len(chain) >= 2; chain = chain[:len(chain)-1] {
		last, parent := chain[len(chain)-1], chain[len(chain)-2]
		if last.Kind != yaml.MappingNode && last.Kind != yaml.SequenceNode || len(last.Content) > 0 || parent.Kind != yaml.MappingNode {
			return
		}
		remove(parent, last)
	}
}

// scalarField is the value of key in map m when it is a scalar, else "".
func scalarField(m *yaml.Node, key string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.ScalarNode {
			return m.Content[i+1].Value
		}
	}
	return ""
}

// withoutGate removes every "gate=value" from comma-separated flag text,
// with the comma that joined it to its neighbours.
func withoutGate(s, gate string) string {
	re := regexp.MustCompile(`\b` + regexp.QuoteMeta(gate) + `\s*=\s*[A-Za-z0-9]*`)
	ms := re.FindAllStringIndex(s, -1)
	for i := len(ms) - 1; i >= 0; i-- {
		start, end := ms[i][0], ms[i][1]
		before := strings.TrimRight(s[:start], " ")
		after := strings.TrimLeft(s[end:], " ")
		switch {
		case strings.HasSuffix(before, ","):
			s = strings.TrimSuffix(before, ",") + s[end:]
		case strings.HasPrefix(after, ","):
			s = s[:start] + strings.TrimPrefix(after, ",")
		default:
			s = s[:start] + s[end:]
		}
	}
	return s
}
