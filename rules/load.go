package rules

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules/selector"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// LoadError is one problem in a rules file, located by file and line.
type LoadError struct {
	File string
	Line int
	Msg  string
}

func (e LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// LoadErrors are all the problems found in rules files.
type LoadErrors []LoadError

func (es LoadErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// rule is a Rule ready to match.
type rule struct {
	Rule
	source   string // "builtin:nvidia.yaml" or a path
	line     int
	layer    int // 0 for built-ins, then one per user file
	re       *regexp.Regexp
	whenRe   *regexp.Regexp
	minimum  Version
	disabled bool
	modes    map[string]string // variable -> "list" for list variables
	// replacedBy is the source of a later rule with the same id.
	replacedBy string
}

type hintRule struct {
	HintRule
	source string
	layer  int
	re     *regexp.Regexp
}

// Set is a loaded, validated mapping table: built-in rules plus user files,
// later files winning. It implements plan.Resolver.
type Set struct {
	rules         []*rule
	hints         []*hintRule
	templatePaths []inventory.TemplatePath
	naming        Naming
}

// Default returns the built-in rules. It panics only if the embedded files
// are broken, which the package tests rule out.
func Default() *Set {
	s, err := Load()
	if err != nil {
		panic(fmt.Sprintf("built-in rules: %v", err))
	}
	return s
}

// Load returns the built-in rules overlaid with the user rules files at
// paths, in order (later files win). Every problem in every file is
// reported, as LoadErrors with file:line. Callers that read rules from
// stdin use LoadBytes.
func Load(paths ...string) (*Set, error) { return LoadFrom("", paths...) }

// LoadFrom is Load with relative paths read from the folder dir ("": the
// process's working folder); errors name the paths as given.
func LoadFrom(dir string, paths ...string) (*Set, error) {
	srcs := []source{}
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		data, err := builtinFS.ReadFile(path.Join("builtin", e.Name()))
		if err != nil {
			return nil, err
		}
		srcs = append(srcs, source{name: "builtin:" + e.Name(), data: data, layer: 0})
	}
	var errs LoadErrors
	for i, p := range paths {
		data, err := os.ReadFile(inventory.Resolve(dir, p))
		if err != nil {
			errs = append(errs, LoadError{File: p, Msg: fmt.Sprintf("reading rules: %v", errors.Unwrap(err))})
			continue
		}
		srcs = append(srcs, source{name: p, data: data, layer: i + 1})
	}
	s, lerrs := build(srcs)
	errs = append(errs, lerrs...)
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// LoadBytes is Load for rules given as data (name is used in errors and as
// the rules' source).
func LoadBytes(name string, data []byte) (*Set, error) {
	srcs := []source{}
	entries, _ := builtinFS.ReadDir("builtin")
	for _, e := range entries {
		d, _ := builtinFS.ReadFile(path.Join("builtin", e.Name()))
		srcs = append(srcs, source{name: "builtin:" + e.Name(), data: d})
	}
	srcs = append(srcs, source{name: name, data: data, layer: 1})
	s, errs := build(srcs)
	if len(errs) > 0 {
		return nil, errs
	}
	return s, nil
}

// Validate checks rules files on their own (as `kubedra rules validate`
// does): schema, regular expressions and every CEL expression.
func Validate(name string, data []byte) error {
	_, errs := parse(source{name: name, data: data, layer: 1})
	if len(errs) > 0 {
		return errs
	}
	return nil
}

type source struct {
	name  string
	data  []byte
	layer int
}

type parsed struct {
	src   source
	file  File
	rules []*rule
	hints []*hintRule
	// enableLines and disableLines locate Enable and Disable entries.
	enableLines, disableLines []int
}

func build(srcs []source) (*Set, LoadErrors) {
	var errs LoadErrors
	s := &Set{}
	byID := map[string]*rule{}
	for _, src := range srcs {
		ps, perrs := parse(src)
		errs = append(errs, perrs...)
		for _, p := range ps {
			for _, r := range p.rules {
				if old := byID[r.ID]; old != nil {
					if old.layer == r.layer {
						errs = append(errs, LoadError{File: src.name, Line: r.line, Msg: fmt.Sprintf("rule id %q is already used by %s:%d", r.ID, old.source, old.line)})
						continue
					}
					old.replacedBy = r.source
				}
				byID[r.ID] = r
				s.rules = append(s.rules, r)
			}
			s.hints = append(s.hints, p.hints...)
			s.templatePaths = append(s.templatePaths, p.file.TemplatePaths...)
			if n := p.file.Naming; n != nil {
				s.naming.Requests = mergeMap(s.naming.Requests, n.Requests)
				s.naming.Claims = mergeMap(s.naming.Claims, n.Claims)
			}
			for i, id := range p.file.Enable {
				r := byID[id]
				if r == nil {
					errs = append(errs, LoadError{File: src.name, Line: p.enableLines[i], Msg: fmt.Sprintf("enable: no rule with id %q", id)})
					continue
				}
				r.disabled = false
			}
			for i, id := range p.file.Disable {
				r := byID[id]
				if r == nil {
					errs = append(errs, LoadError{File: src.name, Line: p.disableLines[i], Msg: fmt.Sprintf("disable: no rule with id %q", id)})
					continue
				}
				r.disabled = true
			}
		}
	}
	return s, errs
}

func mergeMap(a, b map[string]string) map[string]string {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

// parse decodes every document of a rules file strictly and validates it.
func parse(src source) ([]parsed, LoadErrors) {
	var errs LoadErrors
	var out []parsed
	// Two decoders walk the same documents: one keeps the node tree for
	// line numbers, the other decodes strictly (unknown fields are errors).
	dec := yaml.NewDecoder(bytes.NewReader(src.data))
	strict := yaml.NewDecoder(bytes.NewReader(src.data))
	strict.KnownFields(true)
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if err == io.EOF {
			break
		}
		if err != nil {
			errs = append(errs, yamlErrors(src.name, err)...)
			break
		}
		var f File
		serr := strict.Decode(&f)
		if node.Kind == yaml.DocumentNode && len(node.Content) == 0 {
			continue
		}
		if serr != nil {
			errs = append(errs, yamlErrors(src.name, serr)...)
			// Unknown fields and type errors leave the rest decoded: keep
			// validating so one run reports every problem.
			var te *yaml.TypeError
			if !errors.As(serr, &te) {
				continue
			}
			p := parsed{src: src, file: f}
			errs = append(errs, p.validate(&node)...)
			continue
		}
		p := parsed{src: src, file: f}
		errs = append(errs, p.validate(&node)...)
		out = append(out, p)
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, LoadError{File: src.name, Msg: "no rules document (want apiVersion: " + APIVersion + ", kind: " + Kind + ")"})
	}
	return out, errs
}

var yamlLineRe = regexp.MustCompile(`^\s*(?:yaml: )?line (\d+): (.*)$`)

func yamlErrors(file string, err error) LoadErrors {
	var out LoadErrors
	for _, l := range strings.Split(err.Error(), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "yaml: unmarshal errors:") {
			continue
		}
		if m := yamlLineRe.FindStringSubmatch(l); m != nil {
			n, _ := strconv.Atoi(m[1])
			msg := regexp.MustCompile(` in type [\w.]+$`).ReplaceAllString(m[2], "")
			out = append(out, LoadError{File: file, Line: n, Msg: msg})
			continue
		}
		out = append(out, LoadError{File: file, Msg: strings.TrimPrefix(l, "yaml: ")})
	}
	return out
}

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
	varRe       = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)
	transforms  = []string{"nvidiaMIGProfile", "lower"}
	roles       = []string{"accelerator", "network"}
)

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
		at := func(field ...any) int { return lineOf(node, append([]any{"rules", i}, field...)...) }
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
	for i := range f.Hints {
		h := f.Hints[i]
		at := func(field ...any) int { return lineOf(node, append([]any{"hints", i}, field...)...) }
		n := len(errs)
		hr := &hintRule{HintRule: h, source: p.src.name, layer: p.src.layer}
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
		if len(errs) == n {
			p.hints = append(p.hints, hr)
		}
	}
	for i, tp := range f.TemplatePaths {
		if tp.Kind == "" || len(tp.Paths) == 0 {
			add(lineOf(node, "templatePaths", i), "templatePaths entries need kind and paths")
		}
		for j, pth := range tp.Paths {
			if pth == "" || strings.HasPrefix(pth, ".") || strings.HasSuffix(pth, ".") || strings.Contains(pth, "..") {
				add(lineOf(node, "templatePaths", i, "paths", j), "path %q: want dot-separated field names, e.g. spec.template.spec", pth)
			}
		}
	}
	if nm := f.Naming; nm != nil {
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
	return errs
}

func validateRule(r *rule, at func(...any) int, add func(int, string, ...any)) {
	if !idRe.MatchString(r.ID) {
		add(at("id"), "rule id %q: want lower-case letters, digits, '-' and '.'", r.ID)
	}
	if (r.Resource == "") == (r.Match == "") {
		add(at(), "rule %s: set exactly one of resource and match", r.ID)
	}
	vars := map[string]bool{}
	r.modes = map[string]string{}
	if r.Match != "" {
		re, err := regexp.Compile("^(?:" + r.Match + ")$")
		if err != nil {
			add(at("match"), "match: %v", err)
		} else {
			r.re = re
			for _, n := range re.SubexpNames() {
				if n != "" {
					vars[n] = true
				}
			}
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
				for _, n := range re.SubexpNames() {
					if n != "" {
						vars[n] = true
					}
				}
			}
		}
	}
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
	if r.Request != "" && !dnsLabelRe.MatchString(r.Request) {
		add(at("request"), "request %q is not a DNS label", r.Request)
	}
	if r.Claim != "" && !dnsLabelRe.MatchString(r.Claim) {
		add(at("claim"), "claim %q is not a DNS label", r.Claim)
	}
	if r.ExtendedResourceName != "" && !qualifiedRe.MatchString(r.ExtendedResourceName) {
		add(at("extendedResourceName"), "extendedResourceName %q is not a qualified name", r.ExtendedResourceName)
	}
	if r.MinTarget != "" {
		v, err := ParseVersion(r.MinTarget)
		if err != nil {
			add(at("minTarget"), "minTarget: %v", err)
		}
		r.minimum = v
	}
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
	for i, ex := range r.Examples {
		if r.Resource != "" && ex != r.Resource || r.re != nil && !r.re.MatchString(ex) {
			add(at("examples", i), "example %q does not match the rule's resource", ex)
		}
	}
	if c := r.Count; c != nil && c.UnitsPerDevice < 1 {
		add(at("count"), "count.unitsPerDevice must be at least 1")
	}
	if c := r.Capacity; c != nil && c.AttachTo == "" {
		add(at("capacity"), "capacity.attachTo is required")
	}
	if t := r.Topology; t != nil {
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
	if sh := r.Sharing; sh != nil && sh.Config.Driver == "" {
		add(at("sharing"), "sharing.config.driver is required")
	}
	for i, c := range r.Config {
		if c.Driver == "" {
			add(at("config", i), "config[%d].driver is required", i)
		}
	}
}

// expand replaces {{var}} with a CEL string literal of the variable's value.
// Variables whose mode is "list" become a CEL list literal (even with one
// value, so `x in {{profiles}}` always compiles), "raw" ones are inserted as
// they are (callers make sure raw text is safe).
func expand(tmpl string, vars map[string][]string, modes map[string]string) (string, error) {
	var err error
	out := varRe.ReplaceAllStringFunc(tmpl, func(m string) string {
		name := varRe.FindStringSubmatch(m)[1]
		vs, ok := vars[name]
		if !ok {
			err = fmt.Errorf("unknown variable {{%s}}", name)
			return m
		}
		switch modes[name] {
		case "raw":
			return strings.Join(vs, "")
		case "list":
		default:
			return celString(strings.Join(vs, ""))
		}
		q := make([]string, len(vs))
		for i, v := range vs {
			q[i] = celString(v)
		}
		return "[" + strings.Join(q, ", ") + "]"
	})
	return out, err
}

func celString(s string) string { return strconv.Quote(s) }

// loadFeatures are the CEL features rules are checked with when loaded: the
// newest environment kubedra targets with default gates (consumable capacity
// is beta-on from 1.36). Resolve checks generated expressions again for the
// actual target, so a rule that uses device.allowMultipleAllocations loads,
// and is reported unmapped on targets that lack it.
var loadFeatures = selector.Features{ConsumableCapacity: true}
