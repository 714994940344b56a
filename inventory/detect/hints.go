package detect

import (
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// deviceLabelPrefixes are node-label prefixes published by device feature
// discovery (NVIDIA GFD, NFD, AMD/Intel labellers, Karpenter, GKE) or that
// pin the instance type (and so the devices).
var deviceLabelPrefixes = []string{
	"nvidia.com/",
	"karpenter.k8s.aws/instance-gpu-",
	"karpenter.k8s.aws/instance-accelerator-",
	"karpenter.k8s.aws/instance-neuron",
	"cloud.google.com/gke-accelerator",
	"cloud.google.com/gke-tpu-",
	"cloud.google.com/gke-gpu",
	"node.kubernetes.io/instance-type",
	"beta.kubernetes.io/instance-type",
	"feature.node.kubernetes.io/pci-",
	"intel.feature.node.kubernetes.io/gpu",
	"amd.com/",
	"beta.amd.com/",
	"gpu.intel.com/",
	"habana.ai/",
	"aws.amazon.com/neuron",
	"k8s.amazonaws.com/accelerator",
	"accelerator",
}

// deviceWords in a label or taint name (after any prefix) mark it as
// device-related, e.g. `gpu-type`, `accelerator`, `node-pool-tpu`.
var deviceWords = []string{"gpu", "accelerator", "tpu", "neuron", "gaudi"}

// DeviceLabel reports whether a node-label key describes devices.
func DeviceLabel(key string) bool {
	for _, p := range deviceLabelPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	name := strings.ToLower(key[strings.LastIndex(key, "/")+1:])
	for _, w := range deviceWords {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// deviceTaintDomains are vendor domains whose taints guard device nodes.
var deviceTaintDomains = []string{"nvidia.com/", "amd.com/", "habana.ai/", "gpu.intel.com/", "intel.com/",
	"aws.amazon.com/neuron", "google.com/tpu", "vpc.amazonaws.com/efa"}

// DeviceToleration reports whether a toleration (key, value) is for a
// device taint: a key that is an extended resource or in a vendor domain,
// or a key or value naming a device (AKS uses sku=gpu).
func DeviceToleration(key, value string) bool {
	if IsExtendedResource(key) {
		return true
	}
	for _, d := range deviceTaintDomains {
		if strings.HasPrefix(key, d) {
			return true
		}
	}
	for _, s := range []string{key, value} {
		s = strings.ToLower(s)
		for _, w := range deviceWords {
			if strings.Contains(s, w) {
				return true
			}
		}
	}
	return false
}

// Hints returns the device-related scheduling hints of a pod spec (or of
// any map with PodSpec scheduling fields), with paths under path.
func Hints(spec *yaml.Node, path string) []inventory.Hint {
	var out []inventory.Hint
	spec = deref(spec)
	eachPair(get(spec, "nodeSelector"), func(k, v *yaml.Node) {
		if DeviceLabel(k.Value) {
			out = append(out, inventory.Hint{Kind: inventory.HintNodeSelector, Key: k.Value,
				Values: []string{scalar(v)}, Path: join(join(path, "nodeSelector"), escape(k.Value)), Line: k.Line})
		}
	})
	na := get(get(spec, "affinity"), "nodeAffinity")
	req := "requiredDuringSchedulingIgnoredDuringExecution"
	if terms := get(get(na, req), "nodeSelectorTerms"); terms != nil && terms.Kind == yaml.SequenceNode {
		rests := make([]string, len(terms.Content))
		first := len(out)
		for t, term := range terms.Content {
			tp := join(join(path, "affinity.nodeAffinity."+req), "nodeSelectorTerms") + "[" + strconv.Itoa(t) + "]"
			out = append(out, expressions(term, tp, inventory.HintNodeAffinity, t)...)
			rests[t] = termRest(term)
		}
		for i := first; i < len(out) && len(rests) > 1; i++ {
			out[i].TermRests = rests
		}
	}
	pref := "preferredDuringSchedulingIgnoredDuringExecution"
	if terms := get(na, pref); terms != nil && terms.Kind == yaml.SequenceNode {
		for t, term := range terms.Content {
			tp := join(path, "affinity.nodeAffinity."+pref) + "[" + strconv.Itoa(t) + "].preference"
			out = append(out, expressions(get(term, "preference"), tp, inventory.HintPreferred, t)...)
		}
	}
	if tols := get(spec, "tolerations"); tols != nil && tols.Kind == yaml.SequenceNode {
		for i, tol := range tols.Content {
			key, value := scalar(get(tol, "key")), scalar(get(tol, "value"))
			if key == "" && value == "" || !DeviceToleration(key, value) {
				continue
			}
			h := inventory.Hint{Kind: inventory.HintToleration, Key: key, Operator: scalar(get(tol, "operator")),
				Effect: scalar(get(tol, "effect")), Path: join(path, "tolerations") + "[" + strconv.Itoa(i) + "]",
				Line: deref(tol).Line}
			if value != "" {
				h.Values = []string{value}
			}
			out = append(out, h)
		}
	}
	if rc := get(spec, "runtimeClassName"); rc != nil && strings.Contains(strings.ToLower(scalar(rc)), "nvidia") {
		out = append(out, inventory.Hint{Kind: inventory.HintRuntimeClassName, Key: "runtimeClassName",
			Values: []string{scalar(rc)}, Path: join(path, "runtimeClassName"), Line: rc.Line})
	}
	return out
}

// expressions returns the hints of one nodeSelectorTerm.
func expressions(term *yaml.Node, path string, kind inventory.HintKind, t int) []inventory.Hint {
	var out []inventory.Hint
	for _, field := range []string{"matchExpressions", "matchFields"} {
		exprs := get(term, field)
		if exprs == nil || exprs.Kind != yaml.SequenceNode {
			continue
		}
		for i, e := range exprs.Content {
			key := scalar(get(e, "key"))
			if !DeviceLabel(key) {
				continue
			}
			h := inventory.Hint{Kind: kind, Key: key, Operator: scalar(get(e, "operator")),
				Path: join(path, field) + "[" + strconv.Itoa(i) + "]", Term: t, Line: deref(e).Line}
			if vals := get(e, "values"); vals != nil && vals.Kind == yaml.SequenceNode {
				for _, v := range vals.Content {
					h.Values = append(h.Values, scalar(v))
				}
			}
			out = append(out, h)
		}
	}
	return out
}

// termRest is a canonical form of what a nodeSelectorTerm asks besides
// device labels: its other expressions and its field expressions.
func termRest(term *yaml.Node) string {
	var parts []string
	for _, field := range []string{"matchExpressions", "matchFields"} {
		exprs := get(term, field)
		if exprs == nil || exprs.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range exprs.Content {
			key := scalar(get(e, "key"))
			if field == "matchExpressions" && DeviceLabel(key) {
				continue
			}
			var vals []string
			if vs := get(e, "values"); vs != nil && vs.Kind == yaml.SequenceNode {
				for _, v := range vs.Content {
					vals = append(vals, scalar(v))
				}
			}
			slices.Sort(vals)
			parts = append(parts, field+":"+key+" "+scalar(get(e, "operator"))+" "+strings.Join(vals, ","))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "\x00")
}
