package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	chartvalues "github.com/kubedra/kubedra/inventory/chart/values"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rules"
)

// ChartValues is what the chart strategy needs of a rendered chart
// (inventory/chart.Source has it): its values as the templates see them,
// and renders with a values file of kubedra's.
type ChartValues interface {
	// Coalesced is the chart's values with the user's, as the templates
	// see them.
	Coalesced() (map[string]any, error)
	// MergeValues applies a values file after the user's values files and
	// before their --set flags, as helm template does.
	MergeValues(file []byte) (map[string]any, error)
	// RenderValues renders the chart with merged values.
	RenderValues(ctx context.Context, merged map[string]any) ([]*inventory.Document, error)
}

// ChartInput is one rendered chart to choose a strategy for.
type ChartInput struct {
	// Path is the chart's folder as the user named it, Name the chart's.
	Path, Name string
	Chart      ChartValues
	// Docs are the render; Rendered its findings, Traced the same findings
	// traced to the chart (template lines, values keys).
	Docs     []*inventory.Document
	Rendered []inventory.Finding
	Traced   []inventory.Finding
	// Flags are the user's values flags as helm template takes them.
	Flags []string
}

// ChartMigrated is what migrating a chart's render in memory gives.
type ChartMigrated struct {
	Workloads []WorkloadChoice
	Migrated  int
	Documents []*yaml.RNode
}

// ChartMigrate is the migrate step, passed in: it migrates a render in
// memory with a strategy.
type ChartMigrate func(ctx context.Context, docs []*inventory.Document, s Strategy) (*ChartMigrated, error)

// ChartOptions are migrate's options that the strategy depends on.
type ChartOptions struct {
	Target   rules.Version
	Strategy Strategy // --strategy; "" (scan, check): auto
	Force    bool
	// Classes are the device families of the DeviceClasses the cluster
	// will have (the driver catalogue's), for the values file's proof.
	Classes proof.Classes
}

// ChooseChart picks a chart's strategy and, for the values-file
// strategy, makes the values file (its header says how to render with
// it). choice holds what the caller knows (chart, name, findings,
// renderedWith); ProbeRenders counts on from its value.
func ChooseChart(ctx context.Context, in ChartInput, choice ChartChoice, opts ChartOptions, migrate ChartMigrate) (ChartChoice, []byte) {
	c := &chartChooser{in: in, opts: opts, migrate: migrate, choice: choice}
	c.choose(ctx)
	return c.choice, c.values
}

// chartChooser is one ChooseChart.
type chartChooser struct {
	in      ChartInput
	opts    ChartOptions
	migrate ChartMigrate
	choice  ChartChoice
	values  []byte
}

// choose picks the chart's strategy: (c) the extended-resource strategy
// when the target serves every request unchanged, else (a) a values file
// when the chart's values can move the requests to claims (proved by
// rendering with it): the chart's own DRA switch when it has one that
// fits, else claims and extra objects of kubedra's; else (b) the
// post-renderer.
func (c *chartChooser) choose(ctx context.Context) {
	ch := &c.choice
	if len(c.in.Traced) == 0 {
		ch.Strategy, ch.Why = ChartNone, "the chart renders no device request"
		return
	}
	var why []string
	if c.opts.Strategy != Claims {
		ok, reason := c.extendedResourceFits(ctx)
		if ok {
			ch.Strategy = ChartExtendedResource
			ch.Why = "no chart change: " + reason
			return
		}
		why = append(why, "extended-resource: "+reason)
	} else {
		why = append(why, "extended-resource: not considered with --strategy claims (auto considers it)")
	}
	values, reason := c.ownDRA(ctx)
	if values == nil {
		if reason != "" {
			why = append(why, reason)
		}
		values, reason = c.valuesFile(ctx)
	}
	if values != nil {
		ch.Strategy, ch.ValuesFile = ChartValuesFile, filepath.Join(c.in.Path, chartvalues.FileName)
		ch.Why = reason
		ch.Command = strings.Join(slices.Concat([]string{"helm template", chartvalues.ReleaseName, chartvalues.ShellQuote(c.in.Path)},
			c.in.Flags, []string{"--values " + chartvalues.ShellQuote(ch.ValuesFile)}), " ")
		header := fmt.Sprintf("# Written by kubedra migrate: moves the device requests of chart %s to DRA claims.\n# Render with: %s\n",
			c.in.Name, ch.Command)
		c.values = append([]byte(header), values...)
		return
	}
	why = append(why, "values file: "+reason)
	ch.Strategy = ChartPostRenderer
	ch.Why = "migrate every render with kubedra as Helm's post-renderer (" + strings.Join(why, "; ") + "); the command is Helm 3's, Helm 4 takes a post-renderer plugin (docs/helm.md)"
	args := []string{"helm template", chartvalues.ReleaseName, chartvalues.ShellQuote(c.in.Path)}
	args = append(args, c.in.Flags...)
	args = append(args, "--post-renderer kubedra", "--post-renderer-args migrate", "--post-renderer-args -")
	if c.opts.Target != (rules.Version{}) {
		args = append(args, "--post-renderer-args --target-version="+c.opts.Target.String())
	}
	ch.Command = strings.Join(args, " ")
}

// extendedResourceFits tells whether every workload of the render keeps
// its request under KEP-5004 on the target, and why (not).
func (c *chartChooser) extendedResourceFits(ctx context.Context) (bool, string) {
	target := c.opts.Target
	if target == (rules.Version{}) {
		target = rules.DefaultTarget
	}
	if err := CheckStrategy(ExtendedResource, target, c.opts.Force); err != nil {
		return false, fmt.Sprintf("DRAExtendedResource is not on by default on Kubernetes %s (from %s)", target, ExtendedResourceGA)
	}
	res, err := c.migrate(ctx, c.in.Docs, Auto)
	if err != nil {
		return false, err.Error()
	}
	if len(res.Workloads) == 0 {
		return false, "no workload of the render can be migrated"
	}
	for _, w := range res.Workloads {
		if w.Strategy != ExtendedResource {
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
func (c *chartChooser) valuesFile(ctx context.Context) ([]byte, string) {
	coalesced, err := c.in.Chart.Coalesced()
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
	for _, f := range c.in.Traced {
		if f.Chart == nil || f.Chart.Key == "" {
			return nil, fmt.Sprintf("%s of %s is written in the template (%s:%d), not fed by a values key", f.Resource, f.Object(), f.Chart.Template, f.Line)
		}
	}
	res, err := c.migrate(ctx, c.in.Docs, Claims)
	if err != nil {
		return nil, err.Error()
	}
	if res.Migrated == 0 {
		return nil, "migrate changes nothing in the render"
	}
	// What the migrated render holds: the workloads' pod claims and
	// container claims, and the new objects.
	original := map[string]bool{}
	for _, d := range c.in.Docs {
		original[objectID(d.Node)] = true
	}
	vals := map[string]any{}
	var podClaims any
	var extra []any
	for i, f := range c.in.Rendered {
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
			return nil, "workloads need different pod claims but the chart has one " + chartvalues.KeyString(claimsKey) + " value"
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
		leaf := chartvalues.SplitKey(c.in.Traced[i].Chart.Key)
		if len(leaf) < 3 || leaf[len(leaf)-2] != "limits" && leaf[len(leaf)-2] != "requests" {
			return nil, fmt.Sprintf("the values key %s is not a resources map's limits or requests", c.in.Traced[i].Chart.Key)
		}
		res := leaf[:len(leaf)-2]
		for _, field := range []string{"limits", "requests"} {
			if chartvalues.HasValue(coalesced, append(slices.Clone(res), field, f.Resource)) {
				chartvalues.SetValue(vals, append(slices.Clone(res), field, f.Resource), nil)
			}
		}
		chartvalues.SetValue(vals, append(slices.Clone(res), "claims"), cc)
		// Scheduling fields migrate changed (a GPU-model nodeSelector that
		// became the claim's selector) follow when the values hold them
		// verbatim.
		if before := findObject(docNodes(c.in.Docs), f); before != nil {
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
	chartvalues.SetValue(vals, claimsKey, podClaims)
	if prev, ok := chartvalues.ValueAt(coalesced, extraKey).([]any); ok {
		extra = append(slices.Clone(prev), extra...)
	}
	chartvalues.SetValue(vals, extraKey, extra)
	text, err := sigsyaml.Marshal(vals)
	if err != nil {
		return nil, err.Error()
	}
	// The proof: render as `helm template --values <user's> --values
	// this --set <user's>` does (the --set flags apply last).
	merged, err := c.in.Chart.MergeValues(text)
	if err != nil {
		return nil, "the user's --set flags do not apply over the values file (helm would fail too): " + err.Error()
	}
	c.choice.ProbeRenders++
	after, err := c.in.Chart.RenderValues(ctx, merged)
	if err != nil {
		return nil, "the chart does not render with the values file: " + err.Error()
	}
	if diff := sameObjects(res.Documents, after); diff != "" {
		return nil, "rendering with the values file differs from migrating the render: " + diff
	}
	// And independently of the migration it matches: every pod of the
	// render gets the devices it had (package proof).
	rendered := nodes(after)
	if probs := proof.Compare(proof.Pods(nodes(c.in.Docs)), proof.Pods(rendered), c.opts.Classes.With(rendered)); len(probs) > 0 {
		return nil, "rendered with the values file, a pod would not get the devices it has: " + probs[0].String()
	}
	return text, fmt.Sprintf("the chart's values take pod claims (%s) and extra objects (%s): %s moves the requests to claims, and rendering with it gives what migrating the render gives",
		chartvalues.KeyString(claimsKey), chartvalues.KeyString(extraKey), chartvalues.FileName)
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
			chartvalues.SetValue(vals, path, a)
			continue
		}
		// Keys migrate removed are null: Helm drops those the chart's
		// defaults hold (a key only an earlier -f file sets stays, and
		// the proof render says so).
		for k, v := range bm {
			if av, ok := am[k]; !ok {
				chartvalues.SetValue(vals, append(slices.Clone(path), k), nil)
			} else if !equalJSON(av, v) {
				chartvalues.SetValue(vals, append(slices.Clone(path), k), av)
			}
		}
		for k, av := range am {
			if _, ok := bm[k]; !ok {
				chartvalues.SetValue(vals, append(slices.Clone(path), k), av)
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

// RuleChartStrategy is the rule id of the diagnostic that tells a chart's
// strategy in migrate.
const RuleChartStrategy = "chart/strategy"

// Diagnostic tells the chart's strategy and what to do about it, at its
// Chart.yaml (chartFile); nil when it has none (no requests, not rendered).
func (ch ChartChoice) Diagnostic(chartFile string) *inventory.Diagnostic {
	if ch.Strategy == ChartNone || ch.Strategy == ChartNotRendered {
		return nil
	}
	fix := ""
	switch ch.Strategy {
	case ChartValuesFile:
		fix = "render with: " + ch.Command
	case ChartPostRenderer:
		fix = "run: " + ch.Command
	case ChartExtendedResource:
		fix = "install the driver's DeviceClass that declares the extendedResourceName (kubedra bundle), and keep the chart as it is"
	}
	return &inventory.Diagnostic{Severity: inventory.Info, Rule: RuleChartStrategy, File: chartFile,
		Message: fmt.Sprintf("chart %s: %s: %s", ch.Name, ch.Strategy, ch.Why), Fix: fix}
}

// nodes are the documents' nodes.
func nodes(docs []*inventory.Document) []*yaml.RNode {
	out := make([]*yaml.RNode, len(docs))
	for i, d := range docs {
		out[i] = d.Node
	}
	return out
}
