package rules

import (
	"errors"
	"fmt"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// Rule ids of Explain's diagnostics.
const (
	// RuleDriverClass: the driver's DeviceClass declares the extended
	// resource, so no class is added (migrate says it too).
	RuleDriverClass = "migrate/driver-class"
	// RuleFeatureGate: an object shown for a target where its feature gate
	// is off by default.
	RuleFeatureGate = "rules/feature-gate"
)

// ExplainOptions steer Explain (`kubedra rules show`).
type ExplainOptions struct {
	Resource string
	Count    int64
	// NodeSelector are KEY=VALUE nodeSelector entries of the pod template.
	NodeSelector []string
	Target       Version
	Share        bool
	// DeviceClass also makes the DeviceClass that serves the resource
	// unchanged (KEP-5004), when only a count is needed.
	DeviceClass bool
}

// Explanation is how one container requesting a resource is migrated.
type Explanation struct {
	Decision Decision
	// UsedNodeSelectors are the nodeSelector keys that became selectors.
	UsedNodeSelectors []string
	// Rules are the rules that match the resource, in order.
	Rules []RuleInfo
	// Objects are the ResourceClaimTemplate (or shared ResourceClaim) and,
	// with DeviceClass, the DeviceClass.
	Objects []*yaml.RNode
	// Diagnostics say what is shown anyway (a DeviceClass for a target
	// where its feature gate is off by default).
	Diagnostics inventory.Diagnostics
}

// Explain resolves one container requesting Count of Resource, as migrate
// would with --allow-lossy, and encodes what it becomes for the target.
func (set *Set) Explain(opts ExplainOptions) (*Explanation, error) {
	pod := Pod{Requests: []PodRequest{{
		Container: "main", ContainerType: inventory.Container, Resource: opts.Resource, Quantity: fmt.Sprint(opts.Count),
	}}}
	for _, ns := range opts.NodeSelector {
		k, v, _ := strings.Cut(ns, "=")
		pod.Hints = append(pod.Hints, inventory.Hint{Kind: inventory.HintNodeSelector, Key: k, Values: []string{v},
			Path: "spec.template.spec.nodeSelector." + k})
	}
	res, err := set.Resolve(pod, Options{Target: opts.Target, AllowLossy: true, Share: opts.Share})
	if err != nil {
		return nil, err
	}
	d := res.Decisions[0]
	e := &Explanation{Decision: d, Rules: set.Matching(opts.Resource)}
	for _, h := range res.UsedHints {
		e.UsedNodeSelectors = append(e.UsedNodeSelectors, pod.Hints[h].Key)
	}
	if d.Claim >= 0 {
		c := res.Claims[d.Claim]
		enc := EncodeClaimTemplate
		if c.Shared {
			enc = EncodeClaim
		}
		n, err := enc(c.Name, "", c, opts.Target)
		if err != nil {
			return nil, fmt.Errorf("encoding the claim for %s: %w", opts.Target, err)
		}
		e.Objects = append(e.Objects, n)
	}
	if opts.DeviceClass && d.ExtendedResource && d.ClassDeclares {
		e.Diagnostics = append(e.Diagnostics, inventory.Diagnostic{Severity: inventory.Info, Rule: RuleDriverClass,
			Message: fmt.Sprintf("the driver's DeviceClass %s declares extendedResourceName %s: it serves the resource unchanged, and a second class must not declare it", d.DeviceClass, d.ExtendedResourceName)})
	} else if opts.DeviceClass && d.ExtendedResource {
		n, err := set.DeviceClass(d, opts.Target)
		var ge *GateError
		if errors.As(err, &ge) {
			// Shown anyway: the gate can be turned on (migrate --force).
			e.Diagnostics = append(e.Diagnostics, inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleFeatureGate, Message: err.Error()})
			n, err = set.DeviceClassForced(d, opts.Target)
		}
		if err != nil {
			return nil, fmt.Errorf("DeviceClass for %s: %w", opts.Resource, err)
		}
		e.Objects = append(e.Objects, n)
	}
	return e, nil
}

// Maps reports whether a rule maps resource, as migrate --allow-lossy
// would decide one container asking for one.
func (set *Set) Maps(resource string, target Version) bool {
	pod := Pod{Requests: []PodRequest{{Container: "c", ContainerType: inventory.Container, Resource: resource, Quantity: "1"}}}
	res, err := set.Resolve(pod, Options{Target: target, AllowLossy: true})
	return err == nil && len(res.Decisions) > 0 && res.Decisions[0].Status != Unmapped
}
