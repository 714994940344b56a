package action

import (
	"context"
	"path/filepath"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/chart"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// ChartValues are the values the Helm charts among the inputs render
// with, as helm template takes them: --values, --set, --set-string,
// --set-file and --set-json. Every chart gets the same values.
type ChartValues = chart.Flags

// chartRun is one chart among the inputs (inventory/chart finds, renders
// and traces it) with the strategy plan chose for it.
type chartRun struct {
	*chart.Source
	choice plan.ChartChoice
	values []byte // the values file of the values-file strategy
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

// charts reads the charts among the inputs and chooses each one's
// strategy. A chart that does not render is reported (its templates are
// then read as files, and skipped as templates).
func (in Input) charts(ctx context.Context, opts chartOptions) []*chartRun {
	// The target is the cluster the chart renders for (.Capabilities).
	kube := rules.DefaultTarget.String()
	if opts.target != (rules.Version{}) {
		kube = opts.target.String()
	}
	srcs := chart.Find(ctx, in.Paths, chart.FindOptions{Options: chart.Options{Flags: in.Charts, KubeVersion: kube, Dir: in.Dir},
		Detect: opts.dopts, RenderOnly: opts.render, Installed: opts.installed})
	runs := make([]*chartRun, len(srcs))
	for i, s := range srcs {
		cr := &chartRun{Source: s, choice: plan.ChartChoice{Chart: s.Path, Name: s.Name, RenderedWith: s.RenderedWith}}
		runs[i] = cr
		switch {
		case s.Err != nil:
			cr.choice.Strategy, cr.choice.Why = plan.ChartNotRendered, s.Err.Error()
		case !opts.render:
			cr.choice.Findings, cr.choice.ProbeRenders = len(s.Findings), s.Renders
			in := plan.ChartInput{Path: s.Path, Name: s.Name, Chart: s, Docs: s.Rendered.Docs, Rendered: s.Rendered.Findings, Traced: s.Findings,
				Flags: in.Charts.Args()}
			cr.choice, cr.values = plan.ChooseChart(ctx, in, cr.choice,
				plan.ChartOptions{Target: opts.target, Strategy: opts.strategy, Force: opts.force, Classes: families()}, migrateStep(opts))
		}
	}
	return runs
}

// owned reports whether a walked file (as opened) is read by rendering a
// chart.
func owned(runs []*chartRun) func(open string) bool {
	srcs := make([]*chart.Source, len(runs))
	for i, cr := range runs {
		srcs[i] = cr.Source
	}
	return chart.OwnedBy(srcs)
}

// migrateStep is the migrate step the chart strategy is given: a render
// migrated in memory, as a KRM function's items are.
func migrateStep(opts chartOptions) plan.ChartMigrate {
	return func(ctx context.Context, docs []*inventory.Document, s plan.Strategy) (*plan.ChartMigrated, error) {
		res, err := migrateDocuments(Input{Documents: docs}, MigrateOptions{Rules: opts.set,
			Plan: plan.Options{Strategy: s, Target: opts.target, Force: opts.force}})
		if err != nil {
			return nil, err
		}
		return &plan.ChartMigrated{Workloads: res.Workloads, Migrated: res.Migrated, Documents: res.Documents}, nil
	}
}

// chartFindings are what detection found in the charts' renders (device
// requests traced to their templates, DRA objects, objects that count
// devices) and their diagnostics.
func chartFindings(runs []*chartRun) (detect.Result, inventory.Diagnostics, []plan.ChartChoice) {
	var found detect.Result
	var ds inventory.Diagnostics
	choices := []plan.ChartChoice{}
	for _, cr := range runs {
		found.Findings = append(found.Findings, cr.Findings...)
		found.Findings = append(found.Findings, cr.ValueMaps...)
		if cr.Rendered != nil {
			found.DRA = append(found.DRA, cr.Rendered.DRA...)
			found.Gov = append(found.Gov, cr.Rendered.Gov...)
		}
		ds = append(ds, cr.Diagnostics...)
		choices = append(choices, cr.choice)
	}
	return found, ds, choices
}

// chartResults reports the charts among migrate's inputs and writes the
// values files of the values-file strategy (through emit, like every
// other file: a diff, in place or under --out). Templates are never
// edited.
func (m *migration) chartResults() {
	m.res.Charts = []plan.ChartChoice{}
	for _, cr := range m.charts {
		m.res.Charts = append(m.res.Charts, cr.choice)
		for _, d := range cr.Diagnostics {
			m.res.Diagnostics = append(m.res.Diagnostics, d)
			if d.Severity == inventory.Error {
				m.res.Failed++
			}
		}
		for _, f := range cr.ValueMaps {
			m.res.Diagnostics = append(m.res.Diagnostics, plan.ValuesDiagnostic(f))
		}
		ch := cr.choice
		if d := ch.Diagnostic(filepath.Join(cr.Path, chart.FileName)); d != nil {
			m.res.Diagnostics = append(m.res.Diagnostics, *d)
		}
		if ch.Strategy == plan.ChartValuesFile && m.emit != nil {
			values := cr.values
			m.side(ch.ValuesFile, func([]byte) ([]byte, error) { return values, nil })
		}
	}
}
