package action

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/chart"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// ChartValues are the values the Helm charts among the inputs render
// with, as helm template takes them: --values, --set, --set-string,
// --set-file and --set-json. Every chart gets the same values.
type ChartValues struct {
	Values, Set, SetString, SetFile, SetJSON []string
}

// flags are the values as helm template's flags.
func (v ChartValues) flags() []string {
	var out []string
	add := func(name string, vals []string) {
		for _, s := range vals {
			out = append(out, name+" "+shellQuote(s))
		}
	}
	add("--values", v.Values)
	add("--set", v.Set)
	add("--set-string", v.SetString)
	add("--set-file", v.SetFile)
	add("--set-json", v.SetJSON)
	return out
}

// ValuesFileName is the values file of the values-file strategy, written
// beside Chart.yaml.
const ValuesFileName = "values-kubedra.yaml"

// chartRun is one chart among the inputs, rendered and traced.
type chartRun struct {
	path     string // the chart folder as named
	open     string // as opened
	c        *chart.Chart
	r        *chart.Rendered
	findings []inventory.Finding // traced: they name template lines
	diags    inventory.Diagnostics
	choice   plan.ChartChoice
	values   []byte // the values file of the values-file strategy
}

// chartOptions steer how charts are read and what strategy they get.
type chartOptions struct {
	target   rules.Version
	strategy plan.Strategy // migrate's --strategy; "" (scan, check): auto
	force    bool
	set      *rules.Set
	dopts    detect.Options
	// render only renders: no tracing, no strategy (simulate).
	render bool
	// installed renders a chart as it is installed once migrated: with the
	// values file migrate wrote beside Chart.yaml, after the user's values
	// (scan, check). migrate plans from the chart's own values.
	installed bool
}

// charts finds the charts among the inputs (a folder holding Chart.yaml,
// an input or below one), renders each, traces its requests to the chart
// and chooses its strategy. A chart that does not render is reported (and
// its templates are then read as files, and skipped as templates).
func (in Input) charts(ctx context.Context, opts chartOptions) []*chartRun {
	var out []*chartRun
	seen := map[string]bool{}      // charts by real path
	chartDirs := map[string]bool{} // charts as walked
	for _, p := range in.Paths {
		if p == "-" || !in.isDir(p) {
			continue
		}
		root := in.open(p)
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
			if !chart.IsChart(q) {
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
			out = append(out, in.chart(ctx, name, q, opts))
			// Its templates and dependencies are the chart's; other
			// folders below it are walked on.
			return nil
		})
	}
	return out
}

// chart renders and traces one chart, and chooses its strategy.
func (in Input) chart(ctx context.Context, name, open string, opts chartOptions) *chartRun {
	cr := &chartRun{path: name, open: open, choice: plan.ChartChoice{Chart: name}}
	fail := func(err error) *chartRun {
		e, ok := err.(*chart.Error)
		if !ok {
			e = &chart.Error{File: filepath.Join(name, chart.FileName), Err: err}
		}
		cr.c, cr.r = nil, nil
		cr.diags = append(cr.diags, e.Diagnostic())
		cr.choice.Strategy, cr.choice.Why = plan.ChartNotRendered, e.Error()
		return cr
	}
	// The target is the cluster the chart renders for (.Capabilities).
	kube := rules.DefaultTarget.String()
	if opts.target != (rules.Version{}) {
		kube = opts.target.String()
	}
	values := in.Charts.Values
	if opts.installed {
		if fi, err := os.Stat(filepath.Join(open, ValuesFileName)); err == nil && fi.Mode().IsRegular() {
			cr.choice.RenderedWith = filepath.Join(name, ValuesFileName)
			values = append(slices.Clone(values), cr.choice.RenderedWith)
		}
	}
	c, err := chart.Load(name, chart.Options{Values: values, Set: in.Charts.Set, SetString: in.Charts.SetString,
		SetFile: in.Charts.SetFile, SetJSON: in.Charts.SetJSON, KubeVersion: kube, Dir: in.Dir})
	if err != nil {
		return fail(err)
	}
	cr.c, cr.choice.Name = c, c.Name
	r, err := c.Read(ctx, nil, opts.dopts)
	if err != nil {
		return fail(err)
	}
	cr.r = r
	cr.diags = append(cr.diags, r.Diagnostics...)
	if opts.render {
		return cr
	}
	// The findings as rendered stay with the render (migrating it needs
	// them); the traced copies name the templates.
	traced := &chart.Rendered{Files: r.Files, Docs: r.Docs, Findings: slices.Clone(r.Findings)}
	st, err := c.Trace(ctx, traced, opts.dopts)
	if err != nil {
		return fail(err)
	}
	cr.findings = traced.Findings
	cr.choice.Findings = len(cr.findings)
	cr.choice.ProbeRenders = st.Renders
	in.choose(ctx, cr, opts)
	return cr
}

// owned reports whether a walked file (as opened) is read by rendering a
// chart: the templates, dependencies and values.yaml of a chart that
// rendered.
func owned(runs []*chartRun) func(open string) bool {
	var dirs []string
	for _, cr := range runs {
		if cr.r != nil {
			dirs = append(dirs, cr.open)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	return func(open string) bool {
		for _, d := range dirs {
			if chart.Owned(d, open) || open == filepath.Join(d, "values.yaml") || open == filepath.Join(d, ValuesFileName) {
				return true
			}
		}
		return false
	}
}

// choose picks the chart's strategy: (c) the extended-resource strategy
// when the target serves every request unchanged, else (a) a values file
// when the chart's values can move the requests to claims (proved by
// rendering with it), else (b) the post-renderer.
func (in Input) choose(ctx context.Context, cr *chartRun, opts chartOptions) {
	ch := &cr.choice
	if len(cr.findings) == 0 {
		ch.Strategy, ch.Why = plan.ChartNone, "the chart renders no device request"
		return
	}
	var why []string
	if opts.strategy != plan.Claims {
		ok, reason := in.extendedResourceFits(ctx, cr, opts)
		if ok {
			ch.Strategy = plan.ChartExtendedResource
			ch.Why = "no chart change: " + reason
			return
		}
		why = append(why, "extended-resource: "+reason)
	} else {
		why = append(why, "extended-resource: not considered with --strategy claims (auto considers it)")
	}
	values, reason := in.valuesFile(ctx, cr, opts)
	if values != nil {
		ch.Strategy, ch.ValuesFile = plan.ChartValuesFile, filepath.Join(cr.path, ValuesFileName)
		ch.Why = reason
		ch.Command = strings.Join(slices.Concat([]string{"helm template", chart.ReleaseName, shellQuote(cr.path)},
			in.Charts.flags(), []string{"--values " + shellQuote(ch.ValuesFile)}), " ")
		header := fmt.Sprintf("# Written by kubedra migrate: moves the device requests of chart %s to DRA claims.\n# Render with: %s\n",
			cr.c.Name, ch.Command)
		cr.values = append([]byte(header), values...)
		return
	}
	why = append(why, "values file: "+reason)
	ch.Strategy = plan.ChartPostRenderer
	ch.Why = "migrate every render with kubedra as Helm's post-renderer (" + strings.Join(why, "; ") + "); the command is Helm 3's, Helm 4 takes a post-renderer plugin (docs/helm.md)"
	args := []string{"helm template", chart.ReleaseName, shellQuote(cr.path)}
	args = append(args, in.Charts.flags()...)
	args = append(args, "--post-renderer kubedra", "--post-renderer-args migrate", "--post-renderer-args -")
	if opts.target != (rules.Version{}) {
		args = append(args, "--post-renderer-args --target-version="+opts.target.String())
	}
	ch.Command = strings.Join(args, " ")
}

// migrateRender migrates the chart's render in memory.
func migrateRender(ctx context.Context, docs []*inventory.Document, opts chartOptions, strategy plan.Strategy) (*MigrateResult, error) {
	return Migrate(ctx, Input{Documents: docs}, MigrateOptions{Rules: opts.set,
		Plan: plan.Options{Strategy: strategy, Target: opts.target, Force: opts.force}})
}

// extendedResourceFits tells whether every workload of the render keeps
// its request under KEP-5004 on the target, and why (not).
func (in Input) extendedResourceFits(ctx context.Context, cr *chartRun, opts chartOptions) (bool, string) {
	target := opts.target
	if target == (rules.Version{}) {
		target = rules.DefaultTarget
	}
	if err := plan.CheckStrategy(plan.ExtendedResource, target, opts.force); err != nil {
		return false, fmt.Sprintf("DRAExtendedResource is not on by default on Kubernetes %s (from %s)", target, plan.ExtendedResourceGA)
	}
	res, err := migrateRender(ctx, cr.r.Docs, opts, plan.Auto)
	if err != nil {
		return false, err.Error()
	}
	if len(res.Workloads) == 0 {
		return false, "no workload of the render can be migrated"
	}
	for _, w := range res.Workloads {
		if w.Strategy != plan.ExtendedResource {
			return false, fmt.Sprintf("%s needs claims: %s", w.Object, w.Why)
		}
	}
	return true, fmt.Sprintf("on Kubernetes %s a DeviceClass with extendedResourceName serves the requests unchanged (%s)", target, res.Workloads[0].Why)
}

// Keys of chart values that take pod-level claims and extra objects, as
// charts name them.
var (
	claimKeys = []string{"resourceClaims", "podResourceClaims"}
	extraKeys = []string{"extraObjects", "extraDeploy", "extraManifests", "extraResources", "extraTemplates"}
)

// valuesFile builds the values file that moves the chart's requests to
// claims, and proves it: the chart rendered with it must give the objects
// that migrating the render gives. It returns nil and the reason when the
// chart's values cannot do it.
func (in Input) valuesFile(ctx context.Context, cr *chartRun, opts chartOptions) ([]byte, string) {
	coalesced, err := cr.c.Coalesced()
	if err != nil {
		return nil, err.Error()
	}
	claimsKey := findKey(coalesced, claimKeys)
	extraKey := findKey(coalesced, extraKeys)
	switch {
	case claimsKey == nil:
		return nil, "the chart's values expose no pod-level " + strings.Join(claimKeys, " or ")
	case extraKey == nil:
		return nil, "the chart's values expose no extra objects (" + strings.Join(extraKeys, ", ") + ") to hold the ResourceClaimTemplates"
	}
	for _, f := range cr.findings {
		if f.Chart == nil || f.Chart.Key == "" {
			return nil, fmt.Sprintf("%s of %s is written in the template (%s:%d), not fed by a values key", f.Resource, f.Object(), f.Chart.Template, f.Line)
		}
	}
	res, err := migrateRender(ctx, cr.r.Docs, opts, plan.Claims)
	if err != nil {
		return nil, err.Error()
	}
	if res.Migrated == 0 {
		return nil, "migrate changes nothing in the render"
	}
	// What the migrated render holds: the workloads' pod claims and
	// container claims, and the new objects.
	original := map[string]bool{}
	for _, d := range cr.r.Docs {
		original[objectID(d.Node)] = true
	}
	vals := map[string]any{}
	var podClaims any
	var extra []any
	for i, f := range cr.r.Findings {
		migrated := findObject(res.Documents, f)
		if migrated == nil {
			return nil, fmt.Sprintf("%s was not migrated", f.Object())
		}
		spec, err := migrated.Pipe(yaml.Lookup(strings.Split(f.PodTemplatePath, ".")...))
		if err != nil || spec == nil {
			return nil, fmt.Sprintf("%s: no pod spec at %s after migration", f.Object(), f.PodTemplatePath)
		}
		pc, err := toValue(spec.Field("resourceClaims"))
		if err != nil {
			return nil, err.Error()
		}
		if podClaims != nil && !equalJSON(podClaims, pc) {
			return nil, "workloads need different pod claims but the chart has one " + chart.KeyString(claimsKey) + " value"
		}
		podClaims = pc
		ctr, err := spec.Pipe(yaml.Lookup(f.ContainerType.ListField(), "[name="+f.Container+"]", "resources", "claims"))
		if err != nil || ctr == nil {
			return nil, fmt.Sprintf("%s: container %s has no resources.claims after migration", f.Object(), f.Container)
		}
		cc, err := toValue(&yaml.MapNode{Value: ctr})
		if err != nil {
			return nil, err.Error()
		}
		leaf := chart.SplitKey(cr.findings[i].Chart.Key)
		if len(leaf) < 3 || leaf[len(leaf)-2] != "limits" && leaf[len(leaf)-2] != "requests" {
			return nil, fmt.Sprintf("the values key %s is not a resources map's limits or requests", cr.findings[i].Chart.Key)
		}
		res := leaf[:len(leaf)-2]
		for _, field := range []string{"limits", "requests"} {
			if chart.HasValue(coalesced, append(slices.Clone(res), field, f.Resource)) {
				chart.SetValue(vals, append(slices.Clone(res), field, f.Resource), nil)
			}
		}
		chart.SetValue(vals, append(slices.Clone(res), "claims"), cc)
		// Scheduling fields migrate changed (a GPU-model nodeSelector that
		// became the claim's selector) follow when the values hold them
		// verbatim.
		if before := findObject(docNodes(cr.r.Docs), f); before != nil {
			if bspec, _ := before.Pipe(yaml.Lookup(strings.Split(f.PodTemplatePath, ".")...)); bspec != nil {
				carrySchedulingFields(vals, coalesced, bspec, spec)
			}
		}
	}
	for _, d := range res.Documents {
		if !original[objectID(d)] {
			v, err := toValue(&yaml.MapNode{Value: d})
			if err != nil {
				return nil, err.Error()
			}
			extra = append(extra, v)
		}
	}
	chart.SetValue(vals, claimsKey, podClaims)
	if prev, ok := chart.ValueAt(coalesced, extraKey).([]any); ok {
		extra = append(slices.Clone(prev), extra...)
	}
	chart.SetValue(vals, extraKey, extra)
	text, err := sigsyaml.Marshal(vals)
	if err != nil {
		return nil, err.Error()
	}
	// The proof: render as `helm template --values <user's> --values
	// this --set <user's>` does (the --set flags apply last).
	merged, err := cr.c.ValuesWith(text)
	if err != nil {
		return nil, "the user's --set flags do not apply over the values file (helm would fail too): " + err.Error()
	}
	cr.choice.ProbeRenders++
	after, err := cr.c.Read(ctx, merged, opts.dopts)
	if err != nil {
		return nil, "the chart does not render with the values file: " + err.Error()
	}
	if diff := sameObjects(res.Documents, after.Docs); diff != "" {
		return nil, "rendering with the values file differs from migrating the render: " + diff
	}
	return text, fmt.Sprintf("the chart's values take pod claims (%s) and extra objects (%s): %s moves the requests to claims, and rendering with it gives what migrating the render gives",
		chart.KeyString(claimsKey), chart.KeyString(extraKey), ValuesFileName)
}

// schedulingFields are the pod-spec fields migrate may change besides
// claims: device selectors taken from node labels, device tolerations.
var schedulingFields = []string{"nodeSelector", "affinity", "tolerations"}

// carrySchedulingFields writes into vals what migrate changed in the pod
// spec's scheduling fields, for each field the chart's values hold
// verbatim (a values key of the same name whose value is the rendered
// field): a removed field or map key becomes null (Helm drops it), a
// changed one its migrated value. Fields not found in the values are left:
// the proof render then tells.
func carrySchedulingFields(vals, coalesced map[string]any, before, after *yaml.RNode) {
	for _, field := range schedulingFields {
		b, _ := toValue(before.Field(field))
		a, _ := toValue(after.Field(field))
		if equalJSON(a, b) || b == nil {
			continue
		}
		path := findValue(coalesced, field, b)
		if path == nil {
			continue
		}
		bm, bok := b.(map[string]any)
		am, aok := a.(map[string]any)
		if !bok || a != nil && !aok || len(am) == 0 {
			// A list or scalar is replaced whole; a field migrate removed
			// is null (Helm then drops the key, whichever file set it).
			chart.SetValue(vals, path, a)
			continue
		}
		// Keys migrate removed are null: Helm drops those the chart's
		// defaults hold (a key only an earlier -f file sets stays, and
		// the proof render says so).
		for k, v := range bm {
			if av, ok := am[k]; !ok {
				chart.SetValue(vals, append(slices.Clone(path), k), nil)
			} else if !equalJSON(av, v) {
				chart.SetValue(vals, append(slices.Clone(path), k), av)
			}
		}
		for k, av := range am {
			if _, ok := bm[k]; !ok {
				chart.SetValue(vals, append(slices.Clone(path), k), av)
			}
		}
	}
}

// findValue is the path of a values key named name whose value is v (at
// the top first, then anywhere, in key order), nil when there is none.
func findValue(vals map[string]any, name string, v any) []string {
	if x, ok := vals[name]; ok && equalJSON(x, v) {
		return []string{name}
	}
	ks := make([]string, 0, len(vals))
	for k := range vals {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		if m, ok := vals[k].(map[string]any); ok {
			if p := findValue(m, name, v); p != nil {
				return append([]string{k}, p...)
			}
		}
	}
	return nil
}

func docNodes(docs []*inventory.Document) []*yaml.RNode {
	out := make([]*yaml.RNode, len(docs))
	for i, d := range docs {
		out[i] = d.Node
	}
	return out
}

// findKey is the path of the first values key named one of names (at the
// top, else anywhere, in key order).
func findKey(vals map[string]any, names []string) []string {
	for _, n := range names {
		if _, ok := vals[n]; ok {
			return []string{n}
		}
	}
	ks := make([]string, 0, len(vals))
	for k := range vals {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	for _, k := range ks {
		if m, ok := vals[k].(map[string]any); ok {
			if p := findKey(m, names); p != nil {
				return append([]string{k}, p...)
			}
		}
	}
	return nil
}

func toValue(n *yaml.MapNode) (any, error) {
	if n == nil || n.Value == nil {
		return nil, nil
	}
	s, err := n.Value.String()
	if err != nil {
		return nil, err
	}
	var v any
	return v, sigsyaml.Unmarshal([]byte(s), &v)
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func objectID(n *yaml.RNode) string {
	return n.GetApiVersion() + "/" + n.GetKind() + "/" + n.GetNamespace() + "/" + n.GetName()
}

// findObject is the migrated document of a finding's object.
func findObject(docs []*yaml.RNode, f inventory.Finding) *yaml.RNode {
	for _, d := range docs {
		if d.GetKind() == f.Kind && d.GetName() == f.Name && d.GetNamespace() == f.Namespace && d.GetApiVersion() == f.APIVersion {
			return d
		}
	}
	return nil
}

// sameObjects compares two sets of objects by content (comments and
// order aside), and names the first object that differs.
func sameObjects(want []*yaml.RNode, got []*inventory.Document) string {
	canon := func(n *yaml.RNode) (string, string) {
		s, _ := n.String()
		var v any
		_ = sigsyaml.Unmarshal([]byte(s), &v)
		b, _ := json.Marshal(v)
		return objectID(n), string(b)
	}
	w := map[string]string{}
	for _, n := range want {
		id, c := canon(n)
		w[id] = c
	}
	g := map[string]string{}
	for _, d := range got {
		id, c := canon(d.Node)
		g[id] = c
	}
	ids := make([]string, 0, len(w))
	for id := range w {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c, ok := g[id]
		switch {
		case !ok:
			return id + " is missing"
		case c != w[id]:
			return id + " differs"
		}
	}
	for id := range g {
		if _, ok := w[id]; !ok {
			return id + " is extra"
		}
	}
	return ""
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// chartFindings are what detection found in the charts' renders (device
// requests traced to their templates, DRA objects, objects that count
// devices) and their diagnostics.
func chartFindings(runs []*chartRun) (detect.Result, inventory.Diagnostics, []plan.ChartChoice) {
	var found detect.Result
	var ds inventory.Diagnostics
	choices := []plan.ChartChoice{}
	for _, cr := range runs {
		found.Findings = append(found.Findings, cr.findings...)
		if cr.r != nil {
			found.DRA = append(found.DRA, cr.r.DRA...)
			found.Gov = append(found.Gov, cr.r.Gov...)
		}
		ds = append(ds, cr.diags...)
		choices = append(choices, cr.choice)
	}
	return found, ds, choices
}

// RuleChartStrategy is the rule id of the diagnostic that tells a chart's
// strategy in migrate.
const RuleChartStrategy = "chart/strategy"

// chartResults reports the charts among migrate's inputs and writes the
// values files of the values-file strategy (through emit, like every
// other file: a diff, in place or under --out). Templates are never
// edited.
func (m *migration) chartResults() {
	m.res.Charts = []plan.ChartChoice{}
	for _, cr := range m.charts {
		m.res.Charts = append(m.res.Charts, cr.choice)
		for _, d := range cr.diags {
			m.res.Diagnostics = append(m.res.Diagnostics, d)
			if d.Severity == inventory.Error {
				m.res.Failed++
			}
		}
		ch := cr.choice
		if ch.Strategy == plan.ChartNone || ch.Strategy == plan.ChartNotRendered {
			continue
		}
		msg := fmt.Sprintf("chart %s: %s: %s", ch.Name, ch.Strategy, ch.Why)
		fix := ""
		switch ch.Strategy {
		case plan.ChartValuesFile:
			fix = "render with: " + ch.Command
		case plan.ChartPostRenderer:
			fix = "run: " + ch.Command
		case plan.ChartExtendedResource:
			fix = "install the driver's DeviceClass that declares the extendedResourceName (kubedra bundle), and keep the chart as it is"
		}
		m.res.Diagnostics = append(m.res.Diagnostics, inventory.Diagnostic{Severity: inventory.Info, Rule: RuleChartStrategy,
			File: filepath.Join(cr.path, chart.FileName), Message: msg, Fix: fix})
		if ch.Strategy == plan.ChartValuesFile && m.emit != nil {
			values := cr.values
			m.side(ch.ValuesFile, func([]byte) ([]byte, error) { return values, nil })
		}
	}
}
