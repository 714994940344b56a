package chart

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/chart/values"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
)

// Rendered is a chart rendered and read: its documents and what detection
// finds in them (as in any other source: detect.All). Documents and
// findings name the template file (File.Path); their lines are lines of
// the rendered text until Trace moves the device findings' lines to the
// template.
type Rendered struct {
	Files    []File
	Docs     []*inventory.Document
	Findings []inventory.Finding
	// DRA and Gov are the DRA objects and the objects that count devices
	// (quotas, queues) the templates render.
	DRA         []inventory.DRAFinding
	Gov         []inventory.GovFinding
	Diagnostics inventory.Diagnostics // rendered text that does not parse
}

// Read renders the chart (with vals, nil: the user's values) and detects
// what it rendered.
func (c *Chart) Read(ctx context.Context, vals map[string]any, dopts detect.Options) (*Rendered, error) {
	fs, err := c.Render(ctx, vals)
	if err != nil {
		return nil, err
	}
	r := &Rendered{Files: fs}
	for _, f := range fs {
		pf := files.Parse(f.Path, f.Text)
		for _, d := range pf.Diagnostics {
			d.Message = "rendered from the chart: " + d.Message
			d.Line = 0 // a line of the render, not of the template
			r.Diagnostics = append(r.Diagnostics, d)
		}
		r.Docs = append(r.Docs, pf.Docs...)
		found := detect.All(pf.Docs, dopts)
		r.Findings = append(r.Findings, found.Findings...)
		r.DRA = append(r.DRA, found.DRA...)
		r.Gov = append(r.Gov, found.Gov...)
	}
	return r, nil
}

// Stats count the work of tracing one chart.
type Stats struct {
	// Renders counts the probe renders (beyond the chart's own render).
	Renders int
	// Candidates counts the values leaves perturbed.
	Candidates int
}

// Trace points each finding of r at the chart: its Chart.Template and Line
// become the template file and line that produced the request (the line
// with the literal resource key, or the line whose {{ .Values.x }}
// expanded it, maybe in a helper), and its Chart names the values key that
// fed it with the values file and line. Origin keeps naming the rendered
// file and document.
//
// The values key is found by probe rendering: each values leaf that could
// feed a request (a key named like a requested resource, a value equal to
// a requested quantity or resource name) is set to a value of its own, the
// chart is rendered again, and the requests that changed to that value
// are the leaf's. All candidates are probed in one render; when that
// render fails or loses a request, each candidate gets a render of its own.
func (c *Chart) Trace(ctx context.Context, r *Rendered, dopts detect.Options) (Stats, error) {
	var st Stats
	if len(r.Findings) == 0 {
		return st, nil
	}
	coalesced, err := c.Coalesced()
	if err != nil {
		return st, err
	}
	leaves := candidates(coalesced, r.Findings)
	st.Candidates = len(leaves)
	fed := make([][]string, len(r.Findings)) // finding -> leaf path
	if len(leaves) > 0 {
		base := keys(r.Findings)
		probe := func(ls []leaf) bool {
			vals := c.Values()
			for _, l := range ls {
				values.SetValue(vals, l.path, l.probe)
			}
			st.Renders++
			pr, err := c.Read(ctx, vals, dopts)
			if err != nil {
				return false
			}
			got := map[string]inventory.Finding{}
			for i, k := range keys(pr.Findings) {
				got[k] = pr.Findings[i]
			}
			complete := true
			for i, k := range base {
				f, ok := got[k]
				if !ok {
					complete = false
					continue
				}
				for _, l := range ls {
					if f.Quantity() == l.sentinel || f.Resource == l.sentinel {
						fed[i] = l.path
					}
				}
			}
			return complete
		}
		if !probe(leaves) && len(leaves) > 1 {
			for _, l := range leaves {
				probe([]leaf{l})
			}
		}
	}
	templates := c.Templates()
	rendered := map[string][]byte{}
	for _, f := range r.Files {
		rendered[f.Path] = f.Text
	}
	nth := map[string]int{} // file + resource -> findings seen
	for i := range r.Findings {
		f := &r.Findings[i]
		src := &inventory.ChartSource{Chart: c.Path, Rendered: f.Origin.Path, RenderedLine: f.Line}
		k := f.Origin.Path + "\x00" + f.Resource
		n := nth[k]
		nth[k]++
		file, line := "", 0
		// The template lines that write the resource key, and the render's:
		// when they pair one to one, the request's line is its pair.
		at := literalLines(templates[f.Origin.Path], f.Resource)
		if out := literalLines(rendered[f.Origin.Path], f.Resource); len(at) > 0 && len(at) == len(out) {
			if j := slices.Index(out, f.Line); j >= 0 {
				file, line = f.Origin.Path, at[j]
			}
		}
		if p := fed[i]; p != nil {
			src.Key = values.KeyString(p)
			src.ValuesFile, src.ValuesLine = c.valuesLine(p)
			rfile, rline, ref := reference(templates, f.Origin.Path, c.dependency(f.Origin.Path), p)
			src.Values = ref
			if line == 0 {
				file, line = rfile, rline
			}
		}
		if line == 0 && len(at) > 0 {
			file, line = f.Origin.Path, at[min(n, len(at)-1)]
		}
		// Origin stays the render's (file and document: what groups the
		// requests of one pod); the location reported is the template's.
		src.Template, f.Line, f.Column = file, line, 0
		if line == 0 {
			src.Template = f.Origin.Path
		}
		f.Chart = src
		// Hint lines are lines of the render, not of the template.
		f.Hints = slices.Clone(f.Hints)
		for j := range f.Hints {
			f.Hints[j].Line = 0
		}
	}
	return st, nil
}

// leaf is a values leaf that could feed a request, with the value that
// probes it.
type leaf struct {
	path     []string
	probe    any
	sentinel string // the probe as a quantity or resource name
}

// candidates lists the leaves of vals that could feed the findings: under
// a key named like a requested resource, or equal to a requested quantity
// or resource name. Each gets a distinct probe value.
func candidates(vals map[string]any, fs []inventory.Finding) []leaf {
	quantities, resources := map[string]bool{}, map[string]bool{}
	for _, f := range fs {
		quantities[f.Quantity()] = true
		resources[f.Resource] = true
	}
	var out []leaf
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		switch v := v.(type) {
		case map[string]any:
			ks := make([]string, 0, len(v))
			for k := range v {
				ks = append(ks, k)
			}
			slices.Sort(ks)
			for _, k := range ks {
				walk(v[k], append(slices.Clone(path), k))
			}
			return
		case []any:
			return // a list is replaced whole by a values file: not probed
		}
		s := scalar(v)
		if s == "" || len(path) == 0 {
			return
		}
		n := 7301 + len(out)
		l := leaf{path: path, sentinel: strconv.Itoa(n)}
		switch {
		case resources[s]:
			l.sentinel = fmt.Sprintf("probe%d.kubedra.dev/device", n)
			l.probe = l.sentinel
		case quantities[s] || resources[path[len(path)-1]]:
			if _, isString := v.(string); isString {
				l.probe = l.sentinel
			} else {
				l.probe = n
			}
		default:
			return
		}
		out = append(out, l)
	}
	walk(vals, nil)
	return out
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool, nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// keys identify findings across renders of one chart.
func keys(fs []inventory.Finding) []string {
	out := make([]string, len(fs))
	seen := map[string]int{}
	for i, f := range fs {
		k := strings.Join([]string{f.Origin.Path, strconv.Itoa(f.Origin.Index), f.PodTemplatePath, string(f.ContainerType), f.Container}, "\x00")
		out[i] = k + "\x00" + strconv.Itoa(seen[k])
		seen[k]++
	}
	return out
}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// reference finds the template line that reads the longest prefix of the
// values path p (`.Values.resources` for resources.limits.nvidia\.com/gpu),
// in the rendered file's template first, then in the chart's other
// templates (helpers). dep, when the file is a dependency's, is its name:
// its templates read the parent's dep.x as .Values.x.
func reference(templates map[string][]byte, file, dep string, p []string) (string, int, string) {
	if dep != "" && len(p) > 1 && p[0] == dep {
		p = p[1:]
	}
	names := make([]string, 0, len(templates))
	for name := range templates {
		if name != file {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	names = append([]string{file}, names...)
	n := 0
	for n < len(p) && ident.MatchString(p[n]) {
		n++
	}
	for ; n > 0; n-- {
		ref := ".Values." + strings.Join(p[:n], ".")
		pat := regexp.MustCompile(regexp.QuoteMeta(ref) + `([^A-Za-z0-9_]|$)`)
		for _, name := range names {
			for i, l := range lines(templates[name]) {
				if bytes.Contains(l, []byte(ref)) && pat.Match(l) {
					return name, i + 1, ref
				}
			}
		}
	}
	return "", 0, ""
}

// literalLines are the lines of a text that write the resource as a key
// (`nvidia.com/gpu: 1`, `nvidia.com/gpu: {{ .Values.gpus }}`).
func literalLines(text []byte, resource string) []int {
	var at []int
	key := regexp.MustCompile(`(^|[\s"'{,])` + regexp.QuoteMeta(resource) + `["']?\s*:`)
	for i, l := range lines(text) {
		if bytes.Contains(l, []byte(resource)) && key.Match(l) {
			at = append(at, i+1)
		}
	}
	return at
}

func lines(b []byte) [][]byte { return bytes.Split(b, []byte("\n")) }

// dependency is the name of the dependency whose template a rendered file
// is, "" for the chart's own.
func (c *Chart) dependency(path string) string {
	rel := strings.TrimPrefix(path, c.Path)
	parts := strings.Split(strings.Trim(strings.ReplaceAll(rel, `\`, "/"), "/"), "/")
	dep := ""
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == "charts" {
			dep = parts[i+1]
		}
	}
	return dep
}

// valuesLine is where the values path p is set: the last -f file that sets
// it, "--set" when a --set flag does, else the chart's values.yaml.
func (c *Chart) valuesLine(p []string) (string, int) {
	// Helm applies --set-json, --set, --set-string, then --set-file: the
	// last flag that sets the key wins.
	key := values.KeyString(p)
	found := ""
	for _, fl := range []struct {
		name string
		vals []string
	}{{"--set-json", c.opts.SetJSON}, {"--set", c.opts.Set}, {"--set-string", c.opts.SetString}, {"--set-file", c.opts.SetFile}} {
		for _, s := range fl.vals {
			// One flag may set several keys: a=1,b=2.
			for _, kv := range strings.Split(s, ",") {
				if k, _, ok := strings.Cut(kv, "="); ok && (key == strings.TrimSpace(k) || strings.HasPrefix(key, strings.TrimSpace(k)+".")) {
					found = fl.name + " " + s
				}
			}
		}
	}
	if found != "" {
		return found, 0
	}
	files := slices.Clone(c.opts.Values)
	slices.Reverse(files)
	files = append(files, filepath.Join(c.Path, "values.yaml"))
	for _, f := range files {
		if line := c.lineIn(f, p); line > 0 {
			return f, line
		}
	}
	// A dependency's own default: dep.x is x in charts/dep/values.yaml.
	if len(p) > 1 {
		f := filepath.Join(c.Path, "charts", p[0], "values.yaml")
		if line := c.lineIn(f, p[1:]); line > 0 {
			return f, line
		}
	}
	return "", 0
}

// lineIn is the line of the values path p in the YAML file f, 0 when
// absent.
func (c *Chart) lineIn(f string, p []string) int {
	data, err := os.ReadFile(inventory.Resolve(c.opts.Dir, f))
	if err != nil {
		return 0
	}
	return lineOf(data, p)
}

// lineOf is the line of the key at path p in a YAML text, 0 when absent.
func lineOf(data []byte, p []string) int {
	n, err := yaml.Parse(string(data))
	if err != nil {
		return 0
	}
	cur := n.YNode()
	line := 0
	for _, k := range p {
		if cur.Kind != yaml.MappingNode {
			return 0
		}
		found := false
		for i := 0; i+1 < len(cur.Content); i += 2 {
			if cur.Content[i].Value == k {
				line, cur, found = cur.Content[i].Line, cur.Content[i+1], true
				break
			}
		}
		if !found {
			return 0
		}
	}
	return line
}
