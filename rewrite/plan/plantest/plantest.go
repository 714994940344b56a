// Package plantest holds test doubles for package plan: a small Resolver
// with fixed, documented rules and an Encoder for resource.k8s.io/v1, so
// rewrite, emit and the CLI can be tested without the real rules table.
package plantest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// Resolver maps, per container:
//   - nvidia.com/gpu: N to gpu.nvidia.com, count N; a nodeSelector or
//     required node-affinity hint on nvidia.com/gpu.product becomes a
//     selector and is "used"; without hints the request can be served by
//     KEP-5004 (ExtendedResource);
//   - nvidia.com/mig-<p>: N to mig.nvidia.com with a profile selector;
//   - aws.amazon.com/neuron: N and vpc.amazonaws.com/efa: M of one
//     container to one claim with two requests and a matchAttribute
//     constraint (topology);
//   - nvidia.com/gpu.shared: 1 to a shared claim, lossy;
//   - example.com/lossy to a lossy per-pod claim;
//   - anything else unmapped; a non-integer quantity unmapped.
type Resolver struct{}

// Resolve implements plan.Resolver.
func (Resolver) Resolve(pod rules.Pod, opts rules.Options) (rules.Resolution, error) {
	var res rules.Resolution
	var sel []string
	for i, h := range pod.Hints {
		if h.Key == "nvidia.com/gpu.product" && (h.Kind == inventory.HintNodeSelector || h.Kind == inventory.HintNodeAffinity) && len(h.Values) > 0 {
			sel = append(sel, fmt.Sprintf(`device.attributes["gpu.nvidia.com"].productName == %q`, h.Values[0]))
			res.UsedHints = append(res.UsedHints, i)
		}
	}
	claimOf := map[string]int{} // container key -> claim for neuron+efa
	for _, r := range pod.Requests {
		d := rules.Decision{Status: rules.Unmapped, Claim: -1}
		n, err := strconv.ParseInt(r.Quantity, 10, 64)
		ck := string(r.ContainerType) + "/" + r.Container
		cname := func(base string) string {
			name := base
			for k := 2; ; k++ {
				taken := false
				for _, c := range res.Claims {
					if c.Name == name {
						taken = true
					}
				}
				if !taken {
					return name
				}
				name = fmt.Sprintf("%s-%d", base, k)
			}
		}
		one := func(class, claim, req string, sels []string) {
			d.Status, d.Driver, d.DeviceClass, d.Count, d.Selectors = rules.Mappable, "gpu.nvidia.com", class, n, sels
			d.Rule = &rules.RuleRef{ID: claim, Source: "plantest"}
			d.Claim, d.Request = len(res.Claims), req
			res.Claims = append(res.Claims, rules.Claim{Name: cname(claim), Spec: spec(req, class, n, sels)})
		}
		switch {
		case err != nil || n <= 0:
			d.Reason = fmt.Sprintf("quantity %q is not a positive integer", r.Quantity)
		case r.Resource == "nvidia.com/gpu":
			one("gpu.nvidia.com", "gpu", "gpu", sel)
			d.ExtendedResource, d.ExtendedResourceName = len(sel) == 0, "nvidia.com/gpu"
		case strings.HasPrefix(r.Resource, "nvidia.com/mig-"):
			p := strings.TrimPrefix(r.Resource, "nvidia.com/mig-")
			one("mig.nvidia.com", "mig", "mig", []string{fmt.Sprintf(`device.attributes["gpu.nvidia.com"].profile == %q`, p)})
		case r.Resource == "aws.amazon.com/neuron" || r.Resource == "vpc.amazonaws.com/efa":
			req, class := "neuron", "neuron.aws.com"
			if r.Resource == "vpc.amazonaws.com/efa" {
				req, class = "efa", "efa.networking.k8s.aws"
			}
			d.Status, d.DeviceClass, d.Count, d.Request = rules.Mappable, class, n, req
			d.Rule = &rules.RuleRef{ID: req, Source: "plantest"}
			if ci, ok := claimOf[ck]; ok {
				c := &res.Claims[ci]
				c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, spec(req, class, n, nil).Devices.Requests...)
				c.Spec.Devices.Constraints = []resourcev1.DeviceConstraint{{Requests: []string{"neuron", "efa"},
					MatchAttribute: ptr(resourcev1.FullyQualifiedName("resource.aws.com/devicegroup4_id"))}}
				c.Name = "neuron-efa"
				d.Claim = ci
			} else {
				claimOf[ck] = len(res.Claims)
				d.Claim = len(res.Claims)
				res.Claims = append(res.Claims, rules.Claim{Name: cname(req), Spec: spec(req, class, n, nil)})
			}
		case r.Resource == "nvidia.com/gpu.shared":
			d.Status, d.Loss, d.Fix = rules.Lossy, "time-slicing replicas become one shared GPU claim", "pass --allow-lossy"
			if opts.AllowLossy {
				d.DeviceClass, d.Count, d.Request = "gpu.nvidia.com", 1, "gpu"
				d.Claim = len(res.Claims)
				res.Claims = append(res.Claims, rules.Claim{Name: "shared-gpu", Shared: true, Spec: spec("gpu", "gpu.nvidia.com", 1, nil)})
			}
		case r.Resource == "example.com/lossy":
			d.Status, d.Loss = rules.Lossy, "fractions are rounded up to whole devices"
			if opts.AllowLossy {
				one("lossy.example.com", "lossy", "lossy", nil)
				d.Status = rules.Lossy
			}
		default:
			d.Reason = "no rule for " + r.Resource
		}
		res.Decisions = append(res.Decisions, d)
	}
	return res, nil
}

func ptr[T any](v T) *T { return &v }

func spec(req, class string, n int64, sels []string) resourcev1.ResourceClaimSpec {
	e := &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: n}
	for _, s := range sels {
		e.Selectors = append(e.Selectors, resourcev1.DeviceSelector{CEL: &resourcev1.CELDeviceSelector{Expression: s}})
	}
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: req, Exactly: e}}}}
}

// Encoder encodes resource.k8s.io/v1 objects through their Go types.
type Encoder struct{}

func object(v any) (*yaml.RNode, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	// Drop the null creationTimestamp metav1 writes for an empty time.
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	delete(m, "status")
	if sp, ok := m["spec"].(map[string]any); ok {
		if md, ok := sp["metadata"].(map[string]any); ok && len(md) == 0 {
			delete(sp, "metadata")
		}
	}
	out, err := yaml.Marshal(ordered(m, []string{"apiVersion", "kind", "metadata", "spec"}))
	if err != nil {
		return nil, err
	}
	return yaml.Parse(string(out))
}

// ordered builds a node with the given keys first, in order, then the
// rest sorted, and "name" first in nested maps (as people write them).
func ordered(m map[string]any, first []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	keys := append([]string{}, first...)
	var rest []string
	for k := range m {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	for _, k := range append(keys, rest...) {
		v, ok := m[k]
		if !ok {
			continue
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, value(v))
	}
	return n
}

func value(v any) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		return ordered(v, []string{"name"})
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range v {
			n.Content = append(n.Content, value(e))
		}
		return n
	}
	var vn yaml.Node
	_ = vn.Encode(v)
	return &vn
}

// ClaimTemplate implements plan.Encoder.
func (Encoder) ClaimTemplate(name, ns string, c rules.Claim, _ rules.Version) (*yaml.RNode, error) {
	return object(resourcev1.ResourceClaimTemplate{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: resourcev1.ResourceClaimTemplateSpec{Spec: c.Spec}})
}

// Claim implements plan.Encoder.
func (Encoder) Claim(name, ns string, c rules.Claim, _ rules.Version) (*yaml.RNode, error) {
	return object(resourcev1.ResourceClaim{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: c.Spec})
}

// DeviceClass implements plan.Encoder.
func (Encoder) DeviceClass(d rules.Decision, _ rules.Version) (*yaml.RNode, error) {
	ern := d.ExtendedResourceName
	return object(resourcev1.DeviceClass{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
		ObjectMeta: metav1.ObjectMeta{Name: d.DeviceClass + "-extended"},
		Spec: resourcev1.DeviceClassSpec{ExtendedResourceName: &ern,
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", d.Driver)}}}}})
}
