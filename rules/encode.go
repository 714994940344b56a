package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// Feature-gate milestones that decide what output may use (dra.md section
// 4: the first release where each gate is on by default).
var (
	// ExtendedResourceOn is the first release with DRAExtendedResource on
	// by default (beta 1.36).
	ExtendedResourceOn = Version{1, 36}
	// ExtendedResourceField is the first release whose DeviceClass has
	// spec.extendedResourceName (alpha, off by default, in 1.34).
	ExtendedResourceField = Version{1, 34}
)

// GateError says that an object needs a feature gate the target release
// does not enable by default. migrate refuses such output unless forced.
type GateError struct {
	Gate   string
	Target Version
	// On is the first release with the gate on by default.
	On Version
	// What is the field or feature that needs it.
	What string
}

func (e *GateError) Error() string {
	return fmt.Sprintf("%s needs the %s feature gate, which is off by default on Kubernetes %s (on from %s)", e.What, e.Gate, e.Target, e.On)
}

// ResourceAPIVersion returns the resource.k8s.io version kubedra writes for
// target: v1 from 1.34, v1beta2 on 1.33, v1beta1 on 1.32.
func ResourceAPIVersion(target Version) string {
	switch {
	case target.AtLeast(Version{1, 34}):
		return "resource.k8s.io/v1"
	case target.AtLeast(Version{1, 33}):
		return "resource.k8s.io/v1beta2"
	default:
		return "resource.k8s.io/v1beta1"
	}
}

// CheckSpec reports the first field of spec that target does not enable by
// default (as a *GateError), or nil.
func CheckSpec(spec resourcev1.ResourceClaimSpec, target Version) error {
	gate := func(name string, on Version, what string) error {
		if target.Less(on) {
			return &GateError{Gate: name, Target: target, On: on, What: what}
		}
		return nil
	}
	var errs []error
	check := func(e *resourcev1.ExactDeviceRequest, sub *resourcev1.DeviceSubRequest) {
		if e != nil {
			if e.AdminAccess != nil {
				errs = append(errs, gate("DRAAdminAccess", Version{1, 34}, "adminAccess"))
			}
			if len(e.Tolerations) > 0 {
				errs = append(errs, gate("DRADeviceTaints", Version{1, 36}, "device tolerations"))
			}
			if e.Capacity != nil {
				errs = append(errs, gate("DRAConsumableCapacity", Version{1, 36}, "capacity requests"))
			}
			if len(e.DerivedAttributes) > 0 {
				errs = append(errs, gate("DRADerivedAttributes", Version{1, 99}, "derivedAttributes"))
			}
		}
		if sub != nil {
			if len(sub.Tolerations) > 0 {
				errs = append(errs, gate("DRADeviceTaints", Version{1, 36}, "device tolerations"))
			}
			if sub.Capacity != nil {
				errs = append(errs, gate("DRAConsumableCapacity", Version{1, 36}, "capacity requests"))
			}
			if len(sub.DerivedAttributes) > 0 {
				errs = append(errs, gate("DRADerivedAttributes", Version{1, 99}, "derivedAttributes"))
			}
		}
	}
	for _, r := range spec.Devices.Requests {
		check(r.Exactly, nil)
		if len(r.FirstAvailable) > 0 {
			errs = append(errs, gate("DRAPrioritizedList", Version{1, 34}, "firstAvailable"))
		}
		for i := range r.FirstAvailable {
			check(nil, &r.FirstAvailable[i])
		}
	}
	for _, c := range spec.Devices.Constraints {
		if c.DistinctAttribute != nil {
			errs = append(errs, gate("DRAConsumableCapacity", Version{1, 36}, "distinctAttribute"))
		}
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// EncodeClaimTemplate returns the ResourceClaimTemplate for c in the shape
// target serves by default (see ResourceAPIVersion). namespace is omitted
// when "". Fields the target does not enable by default are an error
// (*GateError); the object is decoded strictly into the target's Go types
// before it is returned, so an output kubedra produces always parses.
func EncodeClaimTemplate(name, namespace string, c Claim, target Version) (*yaml.RNode, error) {
	if err := CheckSpec(c.Spec, target); err != nil {
		return nil, err
	}
	obj := resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: c.Spec},
	}
	return convert(obj, target, func() any {
		switch ResourceAPIVersion(target) {
		case "resource.k8s.io/v1beta1":
			return &resourcev1beta1.ResourceClaimTemplate{}
		case "resource.k8s.io/v1beta2":
			return &resourcev1beta2.ResourceClaimTemplate{}
		}
		return &resourcev1.ResourceClaimTemplate{}
	})
}

// EncodeClaim returns a ResourceClaim named name for c, for claims shared
// by several pods (Claim.Shared), in the target's shape; otherwise as
// EncodeClaimTemplate.
func EncodeClaim(name, namespace string, c Claim, target Version) (*yaml.RNode, error) {
	if err := CheckSpec(c.Spec, target); err != nil {
		return nil, err
	}
	obj := resourcev1.ResourceClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       c.Spec,
	}
	return convert(obj, target, func() any {
		switch ResourceAPIVersion(target) {
		case "resource.k8s.io/v1beta1":
			return &resourcev1beta1.ResourceClaim{}
		case "resource.k8s.io/v1beta2":
			return &resourcev1beta2.ResourceClaim{}
		}
		return &resourcev1.ResourceClaim{}
	})
}

// convert rewrites a v1 object into the target version's shape, decodes it
// strictly into the target's type (newObj) and returns it as an RNode in
// the Go types' field order.
func convert(v1obj any, target Version, newObj func() any) (*yaml.RNode, error) {
	raw, err := json.Marshal(v1obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	apiVersion := ResourceAPIVersion(target)
	m["apiVersion"] = apiVersion
	if apiVersion == "resource.k8s.io/v1beta1" {
		flattenExactly(m)
	}
	raw, err = json.Marshal(m)
	if err != nil {
		return nil, err
	}
	typed := newObj()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(typed); err != nil {
		return nil, fmt.Errorf("encoding %s: %w", apiVersion, err)
	}
	raw, err = json.Marshal(typed)
	if err != nil {
		return nil, err
	}
	return jsonToRNode(raw)
}

// flattenExactly moves every request's `exactly` fields up into the request:
// v1beta1 has a flat DeviceRequest.
func flattenExactly(m map[string]any) {
	spec, _ := m["spec"].(map[string]any)
	if inner, ok := spec["spec"].(map[string]any); ok { // template
		spec = inner
	}
	devices, _ := spec["devices"].(map[string]any)
	reqs, _ := devices["requests"].([]any)
	for _, r := range reqs {
		rm, _ := r.(map[string]any)
		ex, ok := rm["exactly"].(map[string]any)
		if !ok {
			continue
		}
		delete(rm, "exactly")
		for k, v := range ex {
			rm[k] = v
		}
	}
}

// jsonToRNode parses JSON into a block-style RNode, keeping key order and
// dropping empty creationTimestamp fields.
func jsonToRNode(raw []byte) (*yaml.RNode, error) {
	var n yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&n); err != nil {
		return nil, err
	}
	var walk func(*yaml.Node)
	walk = func(x *yaml.Node) {
		x.Style = 0
		for _, c := range x.Content {
			walk(c)
		}
	}
	walk(&n)
	doc := &n
	if doc.Kind == yaml.DocumentNode {
		doc = doc.Content[0]
	}
	rn := yaml.NewRNode(doc)
	// apiVersion first, as people write manifests (TypeMeta puts kind first).
	if doc.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if doc.Content[i].Value == "apiVersion" && i > 0 {
				k, v := doc.Content[i], doc.Content[i+1]
				doc.Content = append(doc.Content[:i], doc.Content[i+2:]...)
				doc.Content = append([]*yaml.Node{k, v}, doc.Content...)
				break
			}
		}
	}
	if md := rn.Field("metadata"); md != nil {
		_ = md.Value.PipeE(yaml.FieldClearer{Name: "creationTimestamp"})
	}
	// Empty status and template metadata are noise in generated manifests.
	_ = rn.PipeE(yaml.FieldClearer{Name: "status", IfEmpty: true})
	if spec := rn.Field("spec"); spec != nil {
		_ = spec.Value.PipeE(yaml.FieldClearer{Name: "metadata", IfEmpty: true})
	}
	return rn, nil
}

// DeviceClass returns a DeviceClass that serves d's extended resource
// through KEP-5004 (spec.extendedResourceName) for target: it selects the
// devices of d's driver that d's rule's stock class selects, plus the rule's
// own selectors (e.g. a MIG profile), so the extended resource keeps its
// meaning. It returns a *GateError for targets before 1.36, where
// DRAExtendedResource is off by default (migrate refuses unless forced; use
// DeviceClassForced then), and an error for requests without a mapping.
func (s *Set) DeviceClass(d Decision, target Version) (*yaml.RNode, error) {
	if target.Less(ExtendedResourceOn) {
		return nil, &GateError{Gate: "DRAExtendedResource", Target: target, On: ExtendedResourceOn, What: "DeviceClass.spec.extendedResourceName"}
	}
	return s.DeviceClassForced(d, target)
}

// Forced is a Set whose DeviceClass is DeviceClassForced: DeviceClasses
// written for targets where the gate is off by default (migrate --force).
type Forced struct{ *Set }

// DeviceClass is DeviceClassForced.
func (f Forced) DeviceClass(d Decision, target Version) (*yaml.RNode, error) {
	return f.DeviceClassForced(d, target)
}

// DeviceClassForced is DeviceClass without the default-gate check: it only
// fails for targets whose API has no extendedResourceName field (< 1.34).
func (s *Set) DeviceClassForced(d Decision, target Version) (*yaml.RNode, error) {
	if target.Less(ExtendedResourceField) {
		return nil, fmt.Errorf("DeviceClass.spec.extendedResourceName does not exist before Kubernetes %s (target is %s)", ExtendedResourceField, target)
	}
	if d.Driver == "" || d.ExtendedResourceName == "" {
		return nil, errors.New("the decision has no driver or extended resource name")
	}
	var r *rule
	if d.Rule != nil {
		for _, c := range s.rules {
			if c.ID == d.Rule.ID && c.source == d.Rule.Source {
				r = c
			}
		}
	}
	sels := []string{"device.driver == " + celString(d.Driver)}
	if r != nil {
		for _, x := range r.ClassSelectors {
			sels = append(sels, x)
		}
	}
	sels = append(sels, d.Selectors...)
	spec := resourcev1.DeviceClassSpec{ExtendedResourceName: &d.ExtendedResourceName}
	for _, x := range sels {
		if err := checkCEL(x, target); err != nil {
			return nil, fmt.Errorf("DeviceClass selector %q: %w", x, err)
		}
		spec.Selectors = append(spec.Selectors, cel(x))
	}
	obj := resourcev1.DeviceClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "DeviceClass"},
		ObjectMeta: metav1.ObjectMeta{Name: ExtendedResourceClassName(d.ExtendedResourceName)},
		Spec:       spec,
	}
	return convert(obj, target, func() any { return &resourcev1.DeviceClass{} })
}

// ExtendedResourceClassName is the name kubedra gives a DeviceClass that
// serves an extended resource: nvidia.com/gpu -> nvidia.com-gpu. The name
// differs from the drivers' stock class names (gpu.nvidia.com, ...), which
// belong to the drivers' charts and are never overwritten.
func ExtendedResourceClassName(ern string) string {
	domain, name, ok := strings.Cut(ern, "/")
	if !ok {
		return DNSSubdomain(ern, MaxSubdomainLength, "")
	}
	return DNSSubdomain(domain+"-"+name, MaxSubdomainLength, "")
}

// ClaimTemplate implements plan.Encoder (see EncodeClaimTemplate).
func (s *Set) ClaimTemplate(name, namespace string, c Claim, target Version) (*yaml.RNode, error) {
	return EncodeClaimTemplate(name, namespace, c, target)
}

// Claim implements plan.Encoder (see EncodeClaim).
func (s *Set) Claim(name, namespace string, c Claim, target Version) (*yaml.RNode, error) {
	return EncodeClaim(name, namespace, c, target)
}
