package rules

import (
	"bytes"
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/internal/confine"
	"github.com/kubedra/kubedra/inventory"
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
		data, err := confine.ReadFile(inventory.Resolve(dir, p), 0)
		if err != nil {
			errs = append(errs, LoadError{File: p, Msg: fmt.Sprintf("reading rules: %v", cmp.Or(errors.Unwrap(err), err))})
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

var varRe = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

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
