package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules/selector"
)

// lineOf returns the line of the node at path (map keys and sequence
// indexes) below n, or of the deepest node found.
func lineOf(n *yaml.Node, p ...any) int {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, step := range p {
		switch k := step.(type) {
		case string:
			if n.Kind != yaml.MappingNode {
				return line
			}
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == k {
					line = n.Content[i].Line
					n = n.Content[i+1]
					found = true
					break
				}
			}
			if !found {
				return line
			}
		case int:
			if n.Kind != yaml.SequenceNode || k >= len(n.Content) {
				return line
			}
			n = n.Content[k]
			line = n.Line
		}
	}
	return line
}

var (
	idRe        = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)
	dnsLabelRe  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	qualifiedRe = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	transforms  = []string{"nvidiaMIGProfile", "lower"}
	roles       = []string{"accelerator", "network"}
)

// atFunc returns the line of a field (map keys and sequence indexes) of the
// entry being checked.
type atFunc func(field ...any) int

// addFunc records one problem at a line.
type addFunc func(line int, format string, args ...any)

// entryAt returns the atFunc of entry i of the list key (rules, hints).
func entryAt(node *yaml.Node, key string, i int) atFunc {
	return func(field ...any) int { return lineOf(node, append([]any{key, i}, field...)...) }
}

// validate checks one decoded rules document, records the lines of its
// enable and disable entries, and keeps the rules and hints that pass.
func (p *parsed) validate(node *yaml.Node) LoadErrors {
	var errs LoadErrors
	add := func(line int, format string, args ...any) {
		errs = append(errs, LoadError{File: p.src.name, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	f := &p.file
	for i := range f.Enable {
		p.enableLines = append(p.enableLines, lineOf(node, "enable", i))
	}
	for i := range f.Disable {
		p.disableLines = append(p.disableLines, lineOf(node, "disable", i))
	}
	if f.APIVersion != APIVersion {
		add(lineOf(node, "apiVersion"), "apiVersion is %q, want %s", f.APIVersion, APIVersion)
	}
	if f.Kind != Kind {
		add(lineOf(node, "kind"), "kind is %q, want %s", f.Kind, Kind)
	}
	for i := range f.Rules {
		r := &f.Rules[i]
		at := entryAt(node, "rules", i)
		if r.Vendor == "" {
			r.Vendor = f.Vendor
		}
		cr := &rule{Rule: *r, source: p.src.name, line: at(), layer: p.src.layer, disabled: r.Disabled}
		n := len(errs)
		validateRule(cr, at, add)
		if len(errs) == n {
			p.rules = append(p.rules, cr)
		}
	}
	for i, h := range f.Hints {
		n := len(errs)
		hr := validateHint(h, p.src, entryAt(node, "hints", i), add)
		if len(errs) == n {
			p.hints = append(p.hints, hr)
		}
	}
	validateTemplatePaths(f.TemplatePaths, node, add)
	validateNaming(f.Naming, node, add)
	return errs
}

// validateHint checks one hint rule and returns it ready to translate.
func validateHint(h HintRule, src source, at atFunc, add addFunc) *hintRule {
	hr := &hintRule{HintRule: h, source: src.name, layer: src.layer}
	if h.Label == "" {
		add(at(), "hint needs a label")
	}
	if len(h.Drivers) == 0 {
		add(at(), "hint %s needs drivers", h.Label)
	}
	sample := map[string][]string{"value": {"x"}, "raw": {"1"}}
	if h.Value != "" {
		re, err := regexp.Compile("^(?:" + h.Value + ")$")
		if err != nil {
			add(at("value"), "value: %v", err)
		} else {
			for _, n := range re.SubexpNames() {
				if n != "" && n != "value" && n != "raw" {
					sample[n] = []string{"1"}
				}
			}
		}
		hr.re = re
	}
	validateHintExprs(h, sample, at, add)
	return hr
}

// validateHintExprs checks that a hint rule has at least one selector
// template and that each expands with sample values and compiles.
func validateHintExprs(h HintRule, sample map[string][]string, at atFunc, add addFunc) {
	exprs := map[string]string{"in": h.In, "gt": h.Gt, "lt": h.Lt, "exists": h.Exists}
	any := false
	for _, k := range []string{"in", "gt", "lt", "exists"} {
		e := exprs[k]
		if e == "" {
			continue
		}
		any = true
		x, err := expand(e, sample, map[string]string{"raw": "raw"})
		if err != nil {
			add(at(k), "%s: %v", k, err)
			continue
		}
		if _, err := selector.Compile(x, loadFeatures); err != nil {
			add(at(k), "%s: %v", k, err)
		}
	}
	if !any {
		add(at(), "hint %s needs at least one of in, gt, lt, exists", h.Label)
	}
}

// validateTemplatePaths checks that every templatePaths entry has a kind
// and dot-separated paths.
func validateTemplatePaths(tps []inventory.TemplatePath, node *yaml.Node, add addFunc) {
	for i, tp := range tps {
		if tp.Kind == "" || len(tp.Paths) == 0 {
			add(lineOf(node, "templatePaths", i), "templatePaths entries need kind and paths")
		}
		for j, pth := range tp.Paths {
			if pth == "" || strings.HasPrefix(pth, ".") || strings.HasSuffix(pth, ".") || strings.Contains(pth, "..") {
				add(lineOf(node, "templatePaths", i, "paths", j), "path %q: want dot-separated field names, e.g. spec.template.spec", pth)
			}
		}
	}
}

// validateNaming checks that the request and claim name overrides are DNS
// labels.
func validateNaming(nm *Naming, node *yaml.Node, add addFunc) {
	if nm == nil {
		return
	}
	for res, n := range nm.Requests {
		if !dnsLabelRe.MatchString(n) || len(n) > 63 {
			add(lineOf(node, "naming", "requests", res), "request name %q for %s is not a DNS label", n, res)
		}
	}
	for res, n := range nm.Claims {
		if !dnsLabelRe.MatchString(n) || len(n) > 63 {
			add(lineOf(node, "naming", "claims", res), "claim name %q for %s is not a DNS label", n, res)
		}
	}
}

// validateRule checks one rule, defaults its status, and prepares it to
// match: compiled patterns, list variables and minimum target.
func validateRule(r *rule, at atFunc, add addFunc) {
	if !idRe.MatchString(r.ID) {
		add(at("id"), "rule id %q: want lower-case letters, digits, '-' and '.'", r.ID)
	}
	if (r.Resource == "") == (r.Match == "") {
		add(at(), "rule %s: set exactly one of resource and match", r.ID)
	}
	r.modes = map[string]string{}
	vars := compilePatterns(r, at, add)
	validateValues(r, vars, at, add)
	validateStatus(r, at, add)
	validateNames(r, at, add)
	if r.MinTarget != "" {
		v, err := ParseVersion(r.MinTarget)
		if err != nil {
			add(at("minTarget"), "minTarget: %v", err)
		}
		r.minimum = v
	}
	validateTemplates(r, vars, at, add)
	for i, ex := range r.Examples {
		if r.Resource != "" && ex != r.Resource || r.re != nil && !r.re.MatchString(ex) {
			add(at("examples", i), "example %q does not match the rule's resource", ex)
		}
	}
	validateBlocks(r, at, add)
}

// compilePatterns compiles the rule's match and when.match expressions and
// returns the variables their named groups define.
func compilePatterns(r *rule, at atFunc, add addFunc) map[string]bool {
	vars := map[string]bool{}
	if r.Match != "" {
		re, err := regexp.Compile("^(?:" + r.Match + ")$")
		if err != nil {
			add(at("match"), "match: %v", err)
		} else {
			r.re = re
			addGroups(vars, re)
		}
	}
	if w := r.When; w != nil {
		if w.Label == "" {
			add(at("when"), "when needs a label")
		}
		if w.Match != "" {
			re, err := regexp.Compile(w.Match)
			if err != nil {
				add(at("when", "match"), "when.match: %v", err)
			} else {
				r.whenRe = re
				addGroups(vars, re)
			}
		}
	}
	return vars
}

// addGroups adds the names of re's named groups to vars.
func addGroups(vars map[string]bool, re *regexp.Regexp) {
	for _, n := range re.SubexpNames() {
		if n != "" {
			vars[n] = true
		}
	}
}

// validateValues checks the rule's derived variables, adds them to vars
// and marks the list-valued ones in r.modes.
func validateValues(r *rule, vars map[string]bool, at atFunc, add addFunc) {
	for name, v := range r.Values {
		if !vars[v.From] {
			add(at("values", name), "values.%s: from %q is not a variable of this rule", name, v.From)
		}
		if !slices.Contains(transforms, v.Transform) {
			add(at("values", name), "values.%s: transform %q: want one of %s", name, v.Transform, strings.Join(transforms, ", "))
		}
		vars[name] = true
		if v.Transform == "nvidiaMIGProfile" {
			r.modes[name] = "list"
		}
	}
}

// validateStatus defaults the rule's status to mappable and checks the
// fields its status needs.
func validateStatus(r *rule, at atFunc, add addFunc) {
	switch r.Status {
	case "":
		r.Status = Mappable
	case Mappable, Lossy, Unmapped, DRABacked:
	default:
		add(at("status"), "status %q: want mappable, lossy, unmapped or dra-backed", r.Status)
	}
	applies := r.Status == Mappable || r.Status == Lossy
	if applies && r.Capacity == nil {
		if r.Driver == "" {
			add(at(), "rule %s: driver is required", r.ID)
		}
		if r.DeviceClass == "" {
			add(at(), "rule %s: deviceClass is required", r.ID)
		}
	}
	if (r.Status == Unmapped || r.Status == DRABacked) && r.Reason == "" {
		add(at(), "rule %s: status %s needs a reason", r.ID, r.Status)
	}
	if r.Status == Lossy && r.Loss == "" {
		add(at(), "rule %s: status lossy needs loss (what the mapping loses)", r.ID)
	}
}

// validateNames checks the request, claim and extended resource names the
// rule sets.
func validateNames(r *rule, at atFunc, add addFunc) {
	names := []struct {
		field, value, msg string
		re                *regexp.Regexp
	}{
		{"request", r.Request, "request %q is not a DNS label", dnsLabelRe},
		{"claim", r.Claim, "claim %q is not a DNS label", dnsLabelRe},
		{"extendedResourceName", r.ExtendedResourceName, "extendedResourceName %q is not a qualified name", qualifiedRe},
	}
	for _, n := range names {
		if n.value != "" && !n.re.MatchString(n.value) {
			add(at(n.field), n.msg, n.value)
		}
	}
}

// validateTemplates checks that the rule's selectors, class selectors and
// device class expand with its variables, and that the selectors compile.
func validateTemplates(r *rule, vars map[string]bool, at atFunc, add addFunc) {
	sample := map[string][]string{}
	for v := range vars {
		sample[v] = []string{"x"}
	}
	check := func(field any, i int, e string) {
		x, err := expand(e, sample, r.modes)
		if err == nil {
			_, err = selector.Compile(x, loadFeatures)
		}
		if err != nil {
			add(at(field, i), "%s[%d]: %v", field, i, err)
		}
	}
	for i, e := range r.Selectors {
		check("selectors", i, e)
	}
	for i, e := range r.ClassSelectors {
		check("classSelectors", i, e)
	}
	if r.DeviceClass != "" {
		if _, err := expand(r.DeviceClass, sample, r.modes); err != nil {
			add(at("deviceClass"), "deviceClass: %v", err)
		}
	}
}

// validateBlocks checks the rule's count, capacity, topology, sharing and
// config blocks.
func validateBlocks(r *rule, at atFunc, add addFunc) {
	if c := r.Count; c != nil && c.UnitsPerDevice < 1 {
		add(at("count"), "count.unitsPerDevice must be at least 1")
	}
	if c := r.Capacity; c != nil && c.AttachTo == "" {
		add(at("capacity"), "capacity.attachTo is required")
	}
	if t := r.Topology; t != nil {
		validateTopology(t, at, add)
	}
	if sh := r.Sharing; sh != nil && sh.Config.Driver == "" {
		add(at("sharing"), "sharing.config.driver is required")
	}
	for i, c := range r.Config {
		if c.Driver == "" {
			add(at("config", i), "config[%d].driver is required", i)
		}
	}
}

// validateTopology checks a topology block's role and alignment attribute.
func validateTopology(t *Topology, at atFunc, add addFunc) {
	if !slices.Contains(roles, t.Role) {
		add(at("topology", "role"), "topology.role %q: want accelerator or network", t.Role)
	}
	if t.Align != "" && !qualifiedRe.MatchString(strings.ReplaceAll(t.Align, "{n}", "1")) {
		add(at("topology", "align"), "topology.align %q is not a qualified attribute name", t.Align)
	}
	if strings.Contains(t.Align, "{n}") && len(t.Groups) == 0 {
		add(at("topology", "align"), "topology.align uses {n} but groups is empty")
	}
}

// loadFeatures are the CEL features rules are checked with when loaded: the
// newest environment kubedra targets with default gates (consumable capacity
// is beta-on from 1.36). Resolve checks generated expressions again for the
// actual target, so a rule that uses device.allowMultipleAllocations loads,
// and is reported unmapped on targets that lack it.
var loadFeatures = selector.Features{ConsumableCapacity: true}
