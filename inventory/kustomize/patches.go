package kustomize

// What kubedra reads in patches: a JSON 6902 patch from a strategic-merge
// one, and the operations and inline patches that set extended resources.

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

// roleOf tells a JSON 6902 patch (a list of operations) from a
// strategic-merge patch (an object), as kustomize does.
func roleOf(content []byte) Role {
	trim := bytes.TrimSpace(stripComments(content))
	if bytes.HasPrefix(trim, []byte("[")) || bytes.HasPrefix(trim, []byte("- ")) || bytes.HasPrefix(trim, []byte("-\n")) {
		return JSON6902
	}
	return StrategicMerge
}

func stripComments(b []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] == '#' {
			continue
		}
		out = append(out, l)
	}
	return bytes.Join(out, []byte("\n"))
}

// op is one JSON 6902 operation.
type op struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	From  string `json:"from"`
	Value any    `json:"value"`
}

// jsonPatch reports the operations of a JSON 6902 patch that add, replace
// or remove an extended-resource request: kubedra cannot rewrite them
// exactly without the object they apply to (their paths index lists of
// the base), so their build unit is left as it is.
func jsonPatch(file string, line int, content []byte, target *types.Selector) (inventory.Diagnostics, []ClaimList, []inventory.Finding, []MapAdd) {
	var ops []op
	if err := sigsyaml.Unmarshal(content, &ops); err != nil {
		return nil, nil, nil, nil
	}
	node, _ := kyaml.Parse(string(content))
	var diags inventory.Diagnostics
	var lists []ClaimList
	var findings []inventory.Finding
	var adds []MapAdd
	for i, o := range ops {
		if a, ok := mapAdd(o, target); ok {
			adds = append(adds, a)
		}
		if l, ok := o.Value.([]any); ok && len(l) > 0 && o.Op == "add" && (strings.HasSuffix(o.Path, "/resourceClaims") || strings.HasSuffix(o.Path, "/resources/claims")) {
			lists = append(lists, ClaimList{File: file, Op: i, Path: o.Path})
		}
		ern := ""
		for _, p := range []string{o.Path, o.From} {
			if e := pathResource(p); e != "" {
				ern = e
			}
		}
		if ern == "" && strings.Contains(o.Path, "/resources") {
			ern = valueResource(o.Value, strings.HasSuffix(o.Path, "/limits") || strings.HasSuffix(o.Path, "/requests"))
		}
		if ern == "" {
			continue
		}
		l := line
		if node != nil && node.YNode().Kind == kyaml.SequenceNode && i < len(node.YNode().Content) {
			l = line - 1 + node.YNode().Content[i].Line
		}
		if o.Op == "add" || o.Op == "replace" {
			findings = append(findings, opFinding(file, l, o, ern, target))
		}
		diags = append(diags, inventory.Diagnostic{Severity: inventory.Error, Rule: RulePatch, File: file, Line: l, Resource: ern,
			Message: fmt.Sprintf("JSON 6902 patch operation %q on %s %s %s: kubedra cannot rewrite it exactly (its paths index the base's lists), so the kustomizations that reach it are left unchanged", o.Op, o.Path, opVerb(o.Op), ern),
			Fix:     "turn the operation into a strategic-merge patch file (patches: - path: ...) that sets the resource, then migrate again"})
	}
	return diags, lists, findings, adds
}

// MapAdd is a JSON 6902 operation that adds a key into a container's
// resources.limits or requests (rdma/ib beside the base's GPU): the map
// must still be there once migrate takes the GPU out, or the add fails.
type MapAdd struct {
	// Kind is the patch target's kind ("" any), Init marks an init
	// container, Index the container's index, Field limits or requests.
	Kind  string
	Init  bool
	Index int
	Field string
}

// mapAdd reads an add into .../containers/N/resources/(limits|requests)/KEY.
func mapAdd(o op, target *types.Selector) (MapAdd, bool) {
	parts := strings.Split(strings.TrimPrefix(o.Path, "/"), "/")
	n := len(parts)
	if o.Op != "add" || n < 5 || parts[n-3] != "resources" || parts[n-2] != "limits" && parts[n-2] != "requests" ||
		parts[n-5] != "containers" && parts[n-5] != "initContainers" {
		return MapAdd{}, false
	}
	idx, err := strconv.Atoi(parts[n-4])
	if err != nil {
		return MapAdd{}, false
	}
	a := MapAdd{Init: parts[n-5] == "initContainers", Index: idx, Field: parts[n-2]}
	if target != nil {
		a.Kind = target.Kind
	}
	return a, true
}

// opFinding is the device request a JSON 6902 operation sets, as a
// Finding of the objects its target selects: the pod spec and container
// its path names, the quantity its value gives.
func opFinding(file string, line int, o op, resource string, target *types.Selector) inventory.Finding {
	f := inventory.Finding{Origin: inventory.Origin{Path: file, Line: line, ListIndex: -1}, Line: line, Column: 1, Resource: resource,
		ContainerIndex: -1, ContainerType: inventory.Container}
	if target != nil {
		f.Kind, f.Name, f.Namespace = target.Kind, target.Name, target.Namespace
		if target.Version != "" {
			f.APIVersion = strings.Trim(target.Group+"/"+target.Version, "/")
		}
	}
	parts := strings.Split(strings.TrimPrefix(o.Path, "/"), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] != "containers" && parts[i] != "initContainers" {
			continue
		}
		if n, err := strconv.Atoi(parts[i+1]); err == nil {
			f.PodTemplatePath = strings.Join(parts[:i], ".")
			f.ContainerIndex, f.Container = n, fmt.Sprintf("%s[%d]", parts[i], n)
			if parts[i] == "initContainers" {
				f.ContainerType = inventory.InitContainer
			}
		}
		break
	}
	q := quantity(o.Value, resource)
	if strings.Contains(o.Path, "/requests") && !strings.Contains(o.Path, "/limits") {
		f.Request = q
	} else {
		f.Limit = q
	}
	return f
}

// quantity finds resource's quantity in a patch value (the value itself
// when it is a scalar).
func quantity(v any, resource string) string {
	switch x := v.(type) {
	case map[string]any:
		if q, ok := x[resource]; ok {
			return fmt.Sprint(q)
		}
		for _, k := range []string{"limits", "requests"} {
			if q := quantity(x[k], resource); q != "" {
				return q
			}
		}
		for _, e := range x {
			if q := quantity(e, resource); q != "" {
				return q
			}
		}
	case []any:
		for _, e := range x {
			if q := quantity(e, resource); q != "" {
				return q
			}
		}
	case nil:
	default:
		return fmt.Sprint(x)
	}
	return ""
}

// ClaimList is a JSON 6902 operation that adds a whole claims list (a
// pod's resourceClaims, a container's resources.claims): once migrate
// writes that list into the base, the add would replace it, so migrate
// makes it add at the list's end (rewrite.AppendToLists; plan names the
// list, SideFiles.Compose).
type ClaimList struct {
	// File is the patch file, or the kustomization of an inline patch,
	// whose text starts at Inline (0 for a patch file).
	File   string
	Inline int
	// Op is the operation's index in the patch, Path its JSON pointer.
	Op   int
	Path string
}

// opVerb says what a JSON 6902 operation does to the resource it names.
func opVerb(op string) string {
	switch op {
	case "remove":
		return "removes"
	case "move":
		return "moves"
	case "copy":
		return "copies"
	case "test":
		return "tests"
	}
	return "sets" // add, replace
}

// pathResource is the extended resource a JSON pointer addresses under
// limits or requests ("/spec/.../limits/nvidia.com~1gpu"), or "".
func pathResource(p string) string {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		if parts[i-1] != "limits" && parts[i-1] != "requests" {
			continue
		}
		name := strings.ReplaceAll(strings.ReplaceAll(parts[i], "~1", "/"), "~0", "~")
		if detect.IsExtendedResource(name) {
			return name
		}
	}
	return ""
}

// valueResource is an extended resource a patch value sets under limits
// or requests (or directly, when the value is a limits or requests map).
func valueResource(v any, quantities bool) string {
	if l, ok := v.([]any); ok {
		for _, e := range l {
			if r := valueResource(e, false); r != "" {
				return r
			}
		}
		return ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if quantities && detect.IsExtendedResource(k) {
			return k
		}
		if e := valueResource(m[k], k == "limits" || k == "requests"); e != "" {
			return e
		}
	}
	return ""
}

// devices returns an extended resource inline YAML sets under limits or
// requests, or "".
func devices(s string) string {
	var v any
	if err := sigsyaml.Unmarshal([]byte(s), &v); err != nil {
		return ""
	}
	return valueResource(v, false)
}

// inlineStart is the line where the text of the i-th inline patch starts
// (the line after "patch: |" for a block scalar), or line.
func inlineStart(n *kyaml.RNode, i, line int) int {
	if n == nil {
		return line
	}
	for _, field := range []string{"patches", "patchesJson6902"} {
		seq := n.Field(field)
		if seq == nil || seq.Value.YNode().Kind != kyaml.SequenceNode || i >= len(seq.Value.YNode().Content) {
			continue
		}
		if p := kyaml.NewRNode(seq.Value.YNode().Content[i]).Field("patch"); p != nil {
			v := p.Value.YNode()
			if v.Style&(kyaml.LiteralStyle|kyaml.FoldedStyle) != 0 {
				return v.Line + 1
			}
			return v.Line
		}
	}
	return line
}
