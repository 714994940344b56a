package detect

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// ResourceGroup is the DRA API group.
const ResourceGroup = "resource.k8s.io"

// ParameterGroups are the API groups of classic DRA drivers' parameter
// objects (dra.md section 1.9): NVIDIA's k8s-dra-driver and Intel's classic
// GPU driver.
var ParameterGroups = []string{"gpu.resource.nvidia.com", "gpu.resource.intel.com"}

// Gates are the DRA feature gates whose settings break on upgrade: the
// umbrella gate (removed in 1.38, locked on from 1.35) and classic DRA's
// control-plane controller (removed in 1.32).
var Gates = []string{"DynamicResourceAllocation", "DRAControlPlaneController"}

// MayDRA reports whether a document's text can hold something DRA
// detection reports (a byte filter like MayRequest).
func MayDRA(doc []byte) bool {
	for _, s := range [][]byte{[]byte(ResourceGroup), []byte("resourceClaims"), []byte(".resource.nvidia.com"),
		[]byte(".resource.intel.com"), []byte("DynamicResourceAllocation"), []byte("DRAControlPlaneController")} {
		if bytes.Contains(doc, s) {
			return true
		}
	}
	return hidesText(doc)
}

// DRADocuments returns the DRA findings of all documents, in order.
func DRADocuments(docs []*inventory.Document, opts Options) []inventory.DRAFinding {
	var out []inventory.DRAFinding
	for _, d := range docs {
		out = append(out, DRA(d, opts)...)
	}
	return out
}

// DRA returns what a document holds that was written for an earlier DRA,
// or that any DRA version judgement needs: every resource.k8s.io object
// (whatever its version: the judgement against a target is the rules'),
// classic parameter objects, pod claim references under `source:`, and
// DRA feature-gate settings.
func DRA(doc *inventory.Document, opts Options) []inventory.DRAFinding {
	if doc == nil || doc.Node == nil {
		return nil
	}
	root := deref(doc.Node.YNode())
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	meta := get(root, "metadata")
	base := inventory.DRAFinding{Origin: doc.Origin, APIVersion: scalar(get(root, "apiVersion")), Kind: scalar(get(root, "kind")),
		Namespace: scalar(get(meta, "namespace")), Name: scalar(get(meta, "name"))}
	if why := annotation(meta, IgnoreAnnotation); why != nil {
		base.Ignore = *why
	}
	at := func(f inventory.DRAFinding, n *yaml.Node) inventory.DRAFinding {
		if n != nil && n.Line > 0 {
			f.Line, f.Column = n.Line, n.Column
		} else {
			f.Line = doc.Origin.Line
		}
		return f
	}
	var out []inventory.DRAFinding
	group, _, _ := strings.Cut(base.APIVersion, "/")
	switch {
	case group == ResourceGroup:
		f := base
		f.What = inventory.DRAObject
		spec := get(root, "spec")
		switch base.Kind {
		case "ResourceClass":
			f.Classic = true
			f.ClassName = scalar(get(root, "driverName"))
			f.Parameters = parametersRef(get(root, "parametersRef"))
		case "ResourceClaimTemplate":
			spec = get(spec, "spec")
			fallthrough
		case "ResourceClaim":
			for _, r := range seqItems(get(get(spec, "devices"), "requests")) {
				if scalar(get(r, "adminAccess")) == "true" || scalar(get(get(r, "exactly"), "adminAccess")) == "true" {
					f.AdminAccess = true
				}
			}
			if cls := get(spec, "resourceClassName"); cls != nil {
				f.Classic = true
				f.ClassName = scalar(cls)
				f.Parameters = parametersRef(get(spec, "parametersRef"))
				if f.Parameters != nil && f.Parameters.Namespace == "" {
					f.Parameters.Namespace = base.Namespace
				}
			}
		}
		out = append(out, at(f, keyOf(root, "apiVersion")))
	case isParameterGroup(group):
		f := base
		f.What = inventory.DRAParameters
		if spec := get(root, "spec"); spec != nil && spec.Kind == yaml.MappingNode {
			var m map[string]any
			if err := spec.Decode(&m); err == nil {
				f.Spec = m
			}
		}
		if f.Spec == nil {
			f.Spec = map[string]any{}
		}
		out = append(out, at(f, keyOf(root, "apiVersion")))
	}
	gs, sources := gates(root, base, at)
	if sources {
		for _, ps := range PodSpecs(doc, opts) {
			seq := get(ps.Node.YNode(), "resourceClaims")
			if seq == nil || seq.Kind != yaml.SequenceNode {
				continue
			}
			for _, el := range seq.Content {
				src := get(el, "source")
				if src == nil {
					continue
				}
				f := base
				f.What = inventory.DRAPodSource
				f.PodTemplatePath = ps.Path
				f.Claim = scalar(get(el, "name"))
				out = append(out, at(f, keyOf(el, "source")))
			}
		}
	}
	return append(out, gs...)
}

func seqItems(n *yaml.Node) []*yaml.Node {
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func isParameterGroup(group string) bool {
	for _, g := range ParameterGroups {
		if g == group {
			return true
		}
	}
	return false
}

func parametersRef(n *yaml.Node) *inventory.ParametersRef {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return &inventory.ParametersRef{APIGroup: scalar(get(n, "apiGroup")), Kind: scalar(get(n, "kind")),
		Name: scalar(get(n, "name")), Namespace: scalar(get(n, "namespace"))}
}

// gateSetting finds gate=value in flag text: --feature-gates=A=true,B=false,
// `feature-gates: "A=true"` in an embedded kubeadm patch, and the like.
var gateSetting = regexp.MustCompile(`\b(` + strings.Join(Gates, "|") + `)\s*=\s*([A-Za-z0-9]*)`)

// gates finds DRA feature-gate settings anywhere in a document: keys of a
// featureGates map (KubeletConfiguration, kind's Cluster, ...) and
// gate=value text in any string (component flags in a static pod's
// command, kubeadm extraArgs, k3s args, kind's kubeadmConfigPatches). It
// also reports whether the document has a resourceClaims entry with a
// source key, so that pod specs are looked up only then. It visits each
// node once and builds a field path only for what it finds.
func gates(root *yaml.Node, base inventory.DRAFinding, at func(inventory.DRAFinding, *yaml.Node) inventory.DRAFinding) ([]inventory.DRAFinding, bool) {
	var out []inventory.DRAFinding
	sources := false
	var stack []string // path segments
	path := func(last string) string {
		p := ""
		for _, s := range stack {
			if strings.HasPrefix(s, "[") {
				p += s
			} else {
				p = join(p, s)
			}
		}
		if last != "" {
			p = join(p, last)
		}
		return p
	}
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		if n == nil || depth > 64 {
			return
		}
		switch n.Kind {
		case yaml.AliasNode:
			walk(n.Alias, depth+1)
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], deref(n.Content[i+1])
				if v == nil {
					continue
				}
				if v.Kind == yaml.ScalarNode && isGate(k.Value) {
					f := base
					f.What, f.Gate, f.Value, f.Field = inventory.DRAFeatureGate, k.Value, v.Value, path(escape(k.Value))
					out = append(out, at(f, k))
					continue
				}
				if k.Value == "resourceClaims" && v.Kind == yaml.SequenceNode {
					for _, el := range v.Content {
						if get(el, "source") != nil {
							sources = true
						}
					}
				}
				if v.Kind == yaml.ScalarNode && !strings.Contains(v.Value, "=") {
					continue // the common case: no flag text
				}
				stack = append(stack, escape(k.Value))
				walk(n.Content[i+1], depth+1)
				stack = stack[:len(stack)-1]
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				stack = append(stack, "["+strconv.Itoa(i)+"]")
				walk(c, depth+1)
				stack = stack[:len(stack)-1]
			}
		case yaml.ScalarNode:
			if !strings.Contains(n.Value, "DynamicResourceAllocation") && !strings.Contains(n.Value, "DRAControlPlaneController") {
				return
			}
			for _, m := range gateSetting.FindAllStringSubmatchIndex(n.Value, -1) {
				f := base
				f.What, f.Gate, f.Value, f.Field = inventory.DRAFeatureGate, n.Value[m[2]:m[3]], n.Value[m[4]:m[5]], path("")
				f = at(f, n)
				if n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
					// A block scalar's text starts on the line after its
					// indicator.
					f.Line += 1 + strings.Count(n.Value[:m[0]], "\n")
				}
				out = append(out, f)
			}
		}
	}
	walk(root, 0)
	return out, sources
}

func isGate(key string) bool {
	for _, g := range Gates {
		if g == key {
			return true
		}
	}
	return false
}
