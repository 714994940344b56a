package chart

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/chart/values"
	"github.com/kubedra/kubedra/inventory/detect"
)

// ValuesFileName is the values file of the values-file strategy, which
// migrate writes beside Chart.yaml.
const ValuesFileName = values.FileName

// Source is one chart among the inputs, loaded, rendered and traced.
type Source struct {
	// Path is the chart's folder as the user named it, Open as opened.
	Path, Open string
	// Chart and Rendered are nil when the chart did not load or render
	// (Err says why, and Diagnostics hold it).
	Chart    *Chart
	Rendered *Rendered
	// Name is the chart's name (Chart.yaml), once it loaded.
	Name string
	// Findings are the render's requests traced to the chart: they name
	// template lines and values keys (Rendered.Findings name the render).
	Findings []inventory.Finding
	// ValueMaps are the device maps of the chart's values.yaml that feed
	// no traced request (an operator's profiles): Helm values findings.
	ValueMaps   []inventory.Finding
	Diagnostics inventory.Diagnostics
	Err         error
	// Renders counts the probe renders of the trace.
	Renders int
	// RenderedWith is the values file migrate wrote that the render used
	// (FindOptions.Installed), "" when none.
	RenderedWith string
	detect       detect.Options
}

// FindOptions steer Find.
type FindOptions struct {
	// Options are the user's values and the target (KubeVersion, Dir:
	// the folder relative paths are read from).
	Options
	Detect detect.Options
	// RenderOnly renders without tracing (simulate).
	RenderOnly bool
	// Installed renders a chart as it is installed once migrated: with the
	// values file migrate wrote beside Chart.yaml, after the user's values
	// (scan, check). migrate renders the chart's own values.
	Installed bool
}

// Find finds the charts among the inputs (a folder holding Chart.yaml, an
// input or below one; paths as named, read below opts.Dir) and reads
// each: loaded, rendered and, unless RenderOnly, traced. A chart's
// templates and dependencies render with it; other folders below it are
// walked on.
func Find(ctx context.Context, paths []string, opts FindOptions) []*Source {
	var out []*Source
	seen := map[string]bool{}      // charts by real path
	chartDirs := map[string]bool{} // charts as walked
	for _, p := range paths {
		root := inventory.Resolve(opts.Dir, p)
		if fi, err := os.Stat(root); p == "-" || err != nil || !fi.IsDir() {
			continue
		}
		_ = filepath.WalkDir(root, func(q string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if q != root && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			if chartDirs[filepath.Dir(q)] && (d.Name() == "charts" || d.Name() == "templates") {
				return fs.SkipDir // a chart's dependencies render with it
			}
			if !IsChart(q) {
				return nil
			}
			real, _ := filepath.EvalSymlinks(q)
			if seen[real] {
				return fs.SkipDir
			}
			seen[real] = true
			chartDirs[q] = true
			name := p
			if rel, err := filepath.Rel(root, q); err == nil && rel != "." {
				name = filepath.Join(p, rel)
			}
			out = append(out, readSource(ctx, name, q, opts))
			return nil
		})
	}
	return out
}

// readSource loads, renders and traces one chart.
func readSource(ctx context.Context, name, open string, opts FindOptions) *Source {
	s := &Source{Path: name, Open: open, detect: opts.Detect}
	lopts := opts.Options
	if opts.Installed {
		if fi, err := os.Stat(filepath.Join(open, ValuesFileName)); err == nil && fi.Mode().IsRegular() {
			s.RenderedWith = filepath.Join(name, ValuesFileName)
			lopts.Values = append(slices.Clone(lopts.Values), s.RenderedWith)
		}
	}
	c, err := Load(name, lopts)
	if err != nil {
		return s.fail(err)
	}
	s.Chart, s.Name = c, c.Name
	r, err := c.Read(ctx, nil, opts.Detect)
	if err != nil {
		return s.fail(err)
	}
	s.Rendered = r
	s.Diagnostics = append(s.Diagnostics, r.Diagnostics...)
	if opts.RenderOnly {
		return s
	}
	// The findings as rendered stay with the render (migrating it needs
	// them); the traced copies name the templates.
	traced := &Rendered{Files: r.Files, Docs: r.Docs, Findings: slices.Clone(r.Findings)}
	st, err := c.Trace(ctx, traced, opts.Detect)
	if err != nil {
		return s.fail(err)
	}
	s.Findings, s.Renders = traced.Findings, st.Renders
	s.ValueMaps = untraced(name, open, s.Findings)
	return s
}

// untraced are the device maps of a chart's values.yaml that feed no
// traced request and are no container's resources (an operator's GPU
// profiles the chart hands to it in a ConfigMap, as kubeai's
// resourceProfiles): findings of the values file, with Values their key.
func untraced(name, open string, traced []inventory.Finding) []inventory.Finding {
	data, err := os.ReadFile(filepath.Join(open, "values.yaml"))
	if err != nil {
		return nil
	}
	n, err := yaml.Parse(string(data))
	if err != nil {
		return nil
	}
	fed := map[string]bool{}
	for _, f := range traced {
		if f.Chart != nil {
			fed[strings.Join(values.SplitKey(f.Chart.Key), ".")] = true
		}
	}
	var out []inventory.Finding
	doc := &inventory.Document{Node: n, Origin: inventory.Origin{Path: filepath.Join(name, "values.yaml"), ListIndex: -1}}
	for _, f := range detect.HelmValues(doc) {
		// A map under a resources key is a container's, by Helm's
		// conventions, even when it feeds nothing in this render (a
		// disabled component, a value the installed values file
		// overrides); the others are handed to something else.
		parts := strings.Split(f.Values, ".")
		underResources := slices.Contains(parts, "resources")
		if !fed[f.Values] && !underResources {
			out = append(out, f)
		}
	}
	return out
}

// fail records why the chart could not be read.
func (s *Source) fail(err error) *Source {
	e, ok := err.(*Error)
	if !ok {
		e = &Error{File: filepath.Join(s.Path, FileName), Err: err}
	}
	s.Chart, s.Rendered, s.Err = nil, nil, e
	s.Diagnostics = append(s.Diagnostics, e.Diagnostic())
	return s
}

// Coalesced is the chart's values as its templates see them.
func (s *Source) Coalesced() (map[string]any, error) { return s.Chart.Coalesced() }

// MergeValues applies a values file after the user's values files and
// before their --set flags, as `helm template --values <user's> --values
// file --set <user's>` does.
func (s *Source) MergeValues(file []byte) (map[string]any, error) { return s.Chart.ValuesWith(file) }

// RenderValues renders the chart with merged values.
func (s *Source) RenderValues(ctx context.Context, merged map[string]any) ([]*inventory.Document, error) {
	r, err := s.Chart.Read(ctx, merged, s.detect)
	if err != nil {
		return nil, err
	}
	return r.Docs, nil
}

// OwnedBy reports whether a walked file (as opened) is read by rendering
// one of the charts: the templates, dependencies and values files of a
// chart that rendered. nil when no chart rendered.
func OwnedBy(sources []*Source) func(open string) bool {
	var dirs []string
	for _, s := range sources {
		if s.Rendered != nil {
			dirs = append(dirs, s.Open)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	return func(open string) bool {
		for _, d := range dirs {
			if Owned(d, open) || open == filepath.Join(d, "values.yaml") || open == filepath.Join(d, ValuesFileName) {
				return true
			}
		}
		return false
	}
}
