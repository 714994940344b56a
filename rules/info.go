package rules

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// RuleInfo describes one rule for `kubedra rules list` and `rules show`.
type RuleInfo struct {
	ID       string `json:"id" yaml:"id"`
	Vendor   string `json:"vendor" yaml:"vendor"`
	Resource string `json:"resource" yaml:"resource"`
	// When is the hint condition, e.g. "nvidia.com/mig.strategy=single".
	When                 string   `json:"when,omitempty" yaml:"when,omitempty"`
	Driver               string   `json:"driver,omitempty" yaml:"driver,omitempty"`
	DeviceClass          string   `json:"deviceClass,omitempty" yaml:"deviceClass,omitempty"`
	Status               Status   `json:"status" yaml:"status"`
	ExtendedResourceName string   `json:"extendedResourceName,omitempty" yaml:"extendedResourceName,omitempty"`
	Loss                 string   `json:"loss,omitempty" yaml:"loss,omitempty"`
	Reason               string   `json:"reason,omitempty" yaml:"reason,omitempty"`
	Notes                string   `json:"notes,omitempty" yaml:"notes,omitempty"`
	Examples             []string `json:"examples,omitempty" yaml:"examples,omitempty"`
	// Selectors are the rule's CEL selectors as written ({{var}} not
	// expanded), [] when it has none.
	Selectors []string `json:"selectors" yaml:"selectors"`
	// Count says how the requested quantity becomes a device count.
	Count string `json:"count" yaml:"count"`
	// Source is "builtin:<file>" or the user file, with the line.
	Source string `json:"source" yaml:"source"`
	// Applies is "yes", "disabled" or "replaced by <source>".
	Applies string `json:"applies" yaml:"applies"`
}

// Rules lists every rule, built-in and user, in load order, saying which
// apply.
func (s *Set) Rules() []RuleInfo {
	out := make([]RuleInfo, 0, len(s.rules))
	for _, r := range s.rules {
		out = append(out, info(r))
	}
	return out
}

// Matching lists the rules whose resource or pattern matches resource, the
// one Resolve picks without scheduling hints first.
func (s *Set) Matching(resource string) []RuleInfo {
	var out []RuleInfo
	for _, r := range s.rules {
		if r.Resource == resource || r.re != nil && r.re.MatchString(resource) {
			out = append(out, info(r))
		}
	}
	if m := s.find(resource, nil, nil); m != nil {
		i := slices.IndexFunc(out, func(ri RuleInfo) bool { return ri.ID == m.r.ID && ri.Applies == "yes" })
		if i > 0 {
			out[0], out[i] = out[i], out[0]
		}
	}
	return out
}

// countInfo says how a rule's Count turns the quantity into devices.
func countInfo(c *Count) string {
	if c == nil || c.UnitsPerDevice <= 1 && len(c.ByInstanceFamily) == 0 {
		return "one device per unit requested"
	}
	s := fmt.Sprintf("ceil(units / %d)", c.UnitsPerDevice)
	if len(c.ByInstanceFamily) > 0 {
		var fams []string
		for _, f := range slices.Sorted(maps.Keys(c.ByInstanceFamily)) {
			fams = append(fams, fmt.Sprintf("%s %d", f, c.ByInstanceFamily[f]))
		}
		s += "; by instance family: " + strings.Join(fams, ", ")
	}
	return s
}

func info(r *rule) RuleInfo {
	ri := RuleInfo{
		ID: r.ID, Vendor: r.Vendor, Resource: r.Resource, Driver: r.Driver, DeviceClass: r.DeviceClass,
		Status: r.Status, ExtendedResourceName: r.ExtendedResourceName, Loss: r.Loss, Reason: r.Reason,
		Notes: r.Notes, Examples: r.Examples, Source: fmt.Sprintf("%s:%d", r.source, r.line), Applies: "yes",
		Selectors: append([]string{}, r.Selectors...), Count: countInfo(r.Count),
	}
	if ri.Resource == "" {
		ri.Resource = r.Match
	}
	if w := r.When; w != nil {
		switch {
		case len(w.Values) > 0:
			ri.When = w.Label + "=" + strings.Join(w.Values, "|")
		case w.Match != "":
			ri.When = w.Label + "=~" + w.Match
		default:
			ri.When = w.Label
		}
	}
	switch {
	case r.replacedBy != "":
		ri.Applies = "replaced by " + r.replacedBy
	case r.disabled:
		ri.Applies = "disabled"
	}
	return ri
}
