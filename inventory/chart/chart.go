package chart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/chart/values"
)

// FileName is the file that makes a folder a chart.
const FileName = "Chart.yaml"

// Rule ids of this package's diagnostics.
const (
	// RuleRender: a chart did not load or render.
	RuleRender = "chart/render"
)

// ReleaseName and Namespace are what a chart renders with, as `helm
// template` does without arguments.
const (
	ReleaseName = values.ReleaseName
	Namespace   = "default"
)

// Options are the values and the cluster a chart renders for: helm
// template's -f/--values, --set, --set-string, --set-file, --set-json and
// --kube-version.
type Options struct {
	Flags
	// KubeVersion is the cluster's version (.Capabilities.KubeVersion),
	// e.g. "1.34"; "" is Helm's default.
	KubeVersion string
	// Dir is the folder relative paths (the chart's and the values files')
	// are read from; "" is the process's working folder.
	Dir string
}

// Flags are the values a chart renders with, as helm template takes
// them: --values, --set, --set-string, --set-file and --set-json, and the
// namespace of the release (--namespace; "" is Namespace).
type Flags struct {
	Values, Set, SetString, SetFile, SetJSON []string
	Namespace                                string
}

// Args are the flags as helm template's arguments, quoted for a shell.
func (v Flags) Args() []string {
	var out []string
	add := func(name string, vals []string) {
		for _, s := range vals {
			out = append(out, name+" "+values.ShellQuote(s))
		}
	}
	add("--values", v.Values)
	add("--set", v.Set)
	add("--set-string", v.SetString)
	add("--set-file", v.SetFile)
	add("--set-json", v.SetJSON)
	if v.Namespace != "" {
		out = append(out, "--namespace "+values.ShellQuote(v.Namespace))
	}
	return out
}

// IsChart reports whether the folder opened at dir holds a Chart.yaml.
func IsChart(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, FileName))
	return err == nil && fi.Mode().IsRegular()
}

// Chart is a loaded chart with the user's values.
type Chart struct {
	// Path is the chart's folder as the user named it.
	Path string
	// Name is the chart's name (Chart.yaml's name): rendered files are
	// named "<Name>/templates/...".
	Name string

	chart *chart.Chart
	user  map[string]any // the user's values (files, then --set)
	vo    valueFlags     // the user's value flags, paths resolved
	kube  *chartutil.KubeVersion
	opts  Options
}

// Error is a chart that could not load or render, located in the chart:
// Chart.yaml, a values file or a template file and line.
type Error struct {
	File string
	Line int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Diagnostic is the error as kubedra's one diagnostic type.
func (e *Error) Diagnostic() inventory.Diagnostic {
	return inventory.Diagnostic{Severity: inventory.Error, Rule: RuleRender, File: e.File, Line: e.Line,
		Message: "the chart does not render: " + e.Err.Error(),
		Fix:     "check that `helm template` renders it with the same values; its templates are listed as skipped"}
}

// Load reads the chart in the folder path (as the user named it) and the
// user's values. Dependencies must be present under charts/, as helm
// template needs them.
func Load(path string, opts Options) (*Chart, error) {
	open := inventory.Resolve(opts.Dir, path)
	chartFile := filepath.Join(path, FileName)
	if err := symlinksWithin(open, path); err != nil {
		return nil, &Error{File: chartFile, Err: err}
	}
	ch, err := loader.LoadDir(open)
	if err != nil {
		return nil, &Error{File: chartFile, Err: err}
	}
	if reqs := ch.Metadata.Dependencies; len(reqs) > 0 {
		if err := checkDependencies(ch, reqs); err != nil {
			return nil, &Error{File: chartFile, Err: fmt.Errorf("%w (run helm dependency build %s)", err, path)}
		}
	}
	c := &Chart{Path: path, Name: ch.Name(), chart: ch, opts: opts}
	vo := valueOptions(opts)
	for i, f := range vo.files {
		if strings.TrimSpace(f) == "-" {
			// Helm would read the process's stdin, which is kubedra's input.
			return nil, &Error{File: chartFile, Err: errors.New("--values -: stdin is not read for chart values; give a file")}
		}
		vo.files[i] = inventory.Resolve(opts.Dir, f)
	}
	for i, s := range vo.setFile {
		// --set-file key=path: the path is relative to the working folder.
		if k, p, ok := strings.Cut(s, "="); ok {
			if strings.TrimSpace(p) == "-" {
				return nil, &Error{File: chartFile, Err: fmt.Errorf("--set-file %s: stdin is not read for chart values; give a file", s)}
			}
			vo.setFile[i] = k + "=" + inventory.Resolve(opts.Dir, p)
		}
	}
	if c.user, err = vo.merge(nil); err != nil {
		return nil, &Error{File: chartFile, Err: fmt.Errorf("reading values: %w", err)}
	}
	c.vo = vo
	if opts.KubeVersion != "" {
		if c.kube, err = chartutil.ParseKubeVersion(opts.KubeVersion); err != nil {
			return nil, &Error{File: chartFile, Err: err}
		}
	}
	return c, nil
}

// checkDependencies is action.CheckDependencies (helm template's check that
// every dependency Chart.yaml names is under charts/), here so that
// kubedra does not link Helm's action package, and with it the Kubernetes
// client, release storage (SQL drivers included) and OCI registry code
// that rendering never uses.
func checkDependencies(ch *chart.Chart, reqs []*chart.Dependency) error {
	var missing []string
	for _, r := range reqs {
		if !slices.ContainsFunc(ch.Dependencies(), func(d *chart.Chart) bool { return d.Name() == r.Name }) {
			missing = append(missing, r.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("found in Chart.yaml, but missing in charts/ directory: %s", strings.Join(missing, ", "))
	}
	return nil
}

// valueFlags are helm's value flags (its cli/values.Options, whose
// package reaches remote getters and so the OCI registry code; values
// here are only ever read from local files).
type valueFlags struct {
	files, set, setString, setFile, setJSON []string
}

// valueOptions are the value flags of opts.
func valueOptions(opts Options) valueFlags {
	return valueFlags{
		files:     slices.Clone(opts.Values),
		set:       slices.Clone(opts.Set),
		setString: slices.Clone(opts.SetString),
		setFile:   slices.Clone(opts.SetFile),
		setJSON:   slices.Clone(opts.SetJSON),
	}
}

// Values are the user's values (a copy): what -f and --set give, without
// the chart's defaults.
func (c *Chart) Values() map[string]any { return copyMap(c.user) }

// ValuesWith are the user's values with one more values file, given as
// its content, after the user's -f files: as helm does with a last -f, the
// file is merged over the files and the --set flags apply after it.
func (c *Chart) ValuesWith(file []byte) (map[string]any, error) {
	return c.vo.merge(&file)
}

// merge is what helm's MergeValues makes of the flags: the values files
// merged in order (then last, when it is not nil), then --set-json, --set,
// --set-string and --set-file applied in that order.
func (vo valueFlags) merge(last *[]byte) (map[string]any, error) {
	base := map[string]any{}
	read := func(name string, data []byte) error {
		cur := map[string]any{}
		if err := sigsyaml.Unmarshal(data, &cur); err != nil {
			return fmt.Errorf("failed to parse %s: %w", or(name, "the values file"), err)
		}
		base = mergeMaps(base, cur)
		return nil
	}
	for _, f := range vo.files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		if err := read(f, data); err != nil {
			return nil, err
		}
	}
	if last != nil {
		if err := read("", *last); err != nil {
			return nil, err
		}
	}
	for _, v := range vo.setJSON {
		if err := strvals.ParseJSON(v, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-json data %s", v)
		}
	}
	for _, v := range vo.set {
		if err := strvals.ParseInto(v, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set data: %w", err)
		}
	}
	for _, v := range vo.setString {
		if err := strvals.ParseIntoString(v, base); err != nil {
			return nil, fmt.Errorf("failed parsing --set-string data: %w", err)
		}
	}
	for _, v := range vo.setFile {
		reader := func(rs []rune) (any, error) {
			b, err := os.ReadFile(string(rs))
			return string(b), err
		}
		if err := strvals.ParseIntoFile(v, base, reader); err != nil {
			return nil, fmt.Errorf("failed parsing --set-file data: %w", err)
		}
	}
	return base, nil
}

// mergeMaps is Helm's merge of a later values file over earlier ones.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bv, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bv, v)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Coalesced are the values the templates see: the chart's defaults under
// the user's.
func (c *Chart) Coalesced() (map[string]any, error) {
	v, err := chartutil.CoalesceValues(c.chart, copyMap(c.user))
	return v, err
}

// File is what one template file rendered to.
type File struct {
	// Source is the template as Helm names it: "<chart>/templates/x.yaml"
	// (a dependency's: "<chart>/charts/<dep>/templates/x.yaml").
	Source string
	// Path is that template as the user would name it: the chart's folder
	// joined with the rest of Source.
	Path string
	// Text is the rendered YAML (the template's documents).
	Text []byte
}

// Render renders the chart as `helm template` does (hooks included, CRDs
// of crds/ not, as without --include-crds), with the user's values, or
// with vals instead when vals is not nil. Files come in Helm's install
// order; a template's documents stay together.
func (c *Chart) Render(ctx context.Context, vals map[string]any) ([]File, error) {
	if vals == nil {
		vals = copyMap(c.user)
	}
	// What `helm template` (an Install with DryRun and ClientOnly) does up
	// to the manifests, with the engine and release packages it calls:
	// dependencies enabled by the values, the default capabilities at the
	// target's version, values checked against values.schema.json, the
	// chart's kubeVersion range, the engine without cluster lookups, NOTES
	// dropped, manifests and hooks sorted in install order.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := chartutil.ProcessDependenciesWithMerge(c.chart, vals); err != nil {
		return nil, c.locate(err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if c.kube != nil {
		caps.KubeVersion = *c.kube
	}
	options := chartutil.ReleaseOptions{Name: ReleaseName, Namespace: or(c.opts.Namespace, Namespace), Revision: 1, IsInstall: true}
	// The schema is checked by validateSchema, which fetches no $ref.
	top, err := chartutil.ToRenderValuesWithSchemaValidation(c.chart, vals, options, caps, true)
	if err != nil {
		return nil, c.locate(err)
	}
	if err := validateSchema(c.chart, valuesOf(top)); err != nil {
		return nil, c.locate(fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s", err))
	}
	if kv := c.chart.Metadata.KubeVersion; kv != "" && !chartutil.IsCompatibleRange(kv, caps.KubeVersion.String()) {
		return nil, c.locate(fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", kv, caps.KubeVersion.String()))
	}
	rendered, err := renderBounded(ctx, c.chart, top)
	if err != nil {
		return nil, c.locate(err)
	}
	for name := range rendered {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(rendered, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(rendered, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, c.locate(err)
	}
	var out []File
	byName := map[string]int{}
	add := func(source, text string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		if i, ok := byName[source]; ok {
			out[i].Text = append(out[i].Text, "\n---\n"+text+"\n"...)
			return
		}
		byName[source] = len(out)
		out = append(out, File{Source: source, Path: c.path(source), Text: []byte(text + "\n")})
	}
	for _, m := range manifests {
		add(m.Name, m.Content)
	}
	for _, h := range hooks {
		add(h.Path, h.Manifest)
	}
	return out, nil
}

// path is the file a rendered Source comes from, as the user names it.
func (c *Chart) path(source string) string {
	rest, ok := strings.CutPrefix(source, c.Name+"/")
	if !ok {
		return filepath.Join(c.Path, filepath.FromSlash(source))
	}
	return filepath.Join(c.Path, filepath.FromSlash(rest))
}

// Helm names templates and lines in its errors in a few forms:
// "template: nim/templates/x.yaml:12:3: executing ...",
// "parse error at (nim/templates/x.yaml:5): ...",
// "YAML parse error on nim/templates/x.yaml: ...".
var (
	errAt = regexp.MustCompile(`([^\s:()"]+/templates/[^\s:()"]+):(\d+)`)
	errOn = regexp.MustCompile(`(?:error on|error in) ([^\s:()"]+/templates/[^\s:()"]+)`)
)

// locate names the template (and line) of a render error, else Chart.yaml.
func (c *Chart) locate(err error) error {
	msg := err.Error()
	if m := errAt.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[2])
		return &Error{File: c.path(m[1]), Line: line, Err: err}
	}
	if m := errOn.FindStringSubmatch(msg); m != nil {
		// The line of a YAML error is in the rendered text, not the
		// template: the file is named, the line is not.
		return &Error{File: c.path(m[1]), Err: err}
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if strings.Contains(msg, "values don't meet the specifications of the schema") {
		return &Error{File: filepath.Join(c.Path, "values.schema.json"), Err: err}
	}
	return &Error{File: filepath.Join(c.Path, FileName), Err: err}
}

// Templates are the chart's template files (its dependencies' too) as
// Path -> text, for tracing.
func (c *Chart) Templates() map[string][]byte {
	out := map[string][]byte{}
	var walk func(ch *chart.Chart, prefix string)
	walk = func(ch *chart.Chart, prefix string) {
		for _, t := range ch.Templates {
			out[c.path(prefix+t.Name)] = t.Data
		}
		for _, d := range ch.Dependencies() {
			walk(d, prefix+"charts/"+d.Name()+"/")
		}
	}
	walk(c.chart, c.Name+"/")
	return out
}

// Owned reports whether the file opened at open belongs to a chart that
// renders at the folder opened at dir: its templates and its dependencies
// (charts/) are read by rendering, not as files.
func Owned(dir, open string) bool {
	rel, err := filepath.Rel(dir, open)
	if err != nil || strings.HasPrefix(rel, "..") {
		return false
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first == "templates" || first == "charts"
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return copyMap(v)
	case chartutil.Values:
		return copyMap(v)
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = copyValue(v[i])
		}
		return out
	}
	return v
}
