package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/simulate"
)

// SimulateFormats are the formats Simulate renders; "md" is markdown.
var SimulateFormats = Formats{Names: []Format{"table", "json", "markdown"}, Aliases: map[string]Format{"md": "markdown"}}

var simVerdictStyle = map[string]lipgloss.Style{
	simulate.Same:     lipgloss.NewStyle().Foreground(lipgloss.Green),
	simulate.Better:   lipgloss.NewStyle().Foreground(lipgloss.Green).Bold(true),
	simulate.Worse:    lipgloss.NewStyle().Foreground(lipgloss.Red).Bold(true),
	simulate.NeverFit: lipgloss.NewStyle().Foreground(lipgloss.Yellow),
}

// simulateDoc is simulate's JSON: the shape in kubedra's envelope.
type simulateDoc struct {
	APIVersion  string                 `json:"apiVersion"`
	Kind        string                 `json:"kind"`
	Workloads   []simulate.Workload    `json:"workloads"`
	Skipped     []simulate.Skip        `json:"skipped"`
	Pools       []simulate.PoolResult  `json:"pools"`
	Summary     simulate.Summary       `json:"summary"`
	Diagnostics []inventory.Diagnostic `json:"diagnostics"`
}

// Simulate writes a simulation in format (one of SimulateFormats); r may
// be nil when nothing could be simulated.
func Simulate(w io.Writer, r *simulate.Result, diags inventory.Diagnostics, format Format, s Style) error {
	if r == nil {
		r = &simulate.Result{}
	}
	if r.Workloads == nil {
		r.Workloads = []simulate.Workload{}
	}
	if r.Pools == nil {
		r.Pools = []simulate.PoolResult{}
	}
	if r.Skipped == nil {
		r.Skipped = []simulate.Skip{}
	}
	if diags == nil {
		diags = inventory.Diagnostics{}
	}
	switch format {
	case "json":
		return JSON(w, simulateDoc{APIVersion: "kubedra.dev/v1alpha1", Kind: "SimulateReport", Workloads: r.Workloads, Skipped: r.Skipped, Pools: r.Pools, Summary: r.Summary, Diagnostics: diags})
	case "markdown":
		return simulateMarkdown(w, r)
	case "", "table":
		return simulateTable(w, r, s)
	}
	return fmt.Errorf("unknown output format %q: use %s", format, SimulateFormats)
}

func pools(l []simulate.PoolCount) string {
	var parts []string
	for _, p := range l {
		parts = append(parts, p.Pool+":"+strconv.Itoa(p.Pods))
	}
	return dash(strings.Join(parts, ","))
}

// verdictReasons are the reasons a worse or never-fit verdict is given
// with: why not every pod fits after the move.
func verdictReasons(wl simulate.Workload) []string {
	if wl.Verdict == simulate.Worse || wl.Verdict == simulate.NeverFit {
		return wl.After.Reasons
	}
	return nil
}

func workloadName(w simulate.Workload) string {
	return inventory.ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}.String()
}

func summaryLine(r *simulate.Result) string {
	s := r.Summary
	line := fmt.Sprintf("%s: %d same, %d worse, %d better, %d never fit; pods placed %d before, %d after (of %d)",
		strconv.Itoa(s.Workloads)+" "+Plural(s.Workloads, "workload template", "workload templates"), s.Same, s.Worse, s.Better, s.NeverFit, s.PodsBefore, s.PodsAfter, s.Pods)
	if s.Skipped > 0 {
		line += fmt.Sprintf("; %d skipped", s.Skipped)
	}
	return line
}

func usage(p simulate.PoolSide) string {
	var fams []string
	for _, f := range p.Devices {
		fams = append(fams, fmt.Sprintf("%s %d/%d", f.Family, f.Used, f.Total))
	}
	if len(fams) == 0 {
		fams = []string{"-"}
	}
	return string(p.Mode) + " " + strings.Join(fams, ", ")
}

func simulateTable(out io.Writer, r *simulate.Result, s Style) error {
	w := Writer(out, s.Profile)
	var b strings.Builder
	rows := [][]string{{"WORKLOAD", "TEMPLATE", "PODS", "BEFORE", "AFTER", "VERDICT", "LOCATION"}}
	var reasons [][]string
	for _, wl := range r.Workloads {
		rows = append(rows, []string{workloadName(wl), wl.PodTemplatePath, strconv.Itoa(wl.Pods),
			strconv.Itoa(wl.Before.Pods) + " " + pools(wl.Before.Pools), strconv.Itoa(wl.After.Pods) + " " + pools(wl.After.Pools),
			wl.Verdict, fmt.Sprintf("%s:%d", wl.File, wl.Line)})
		for _, why := range verdictReasons(wl) {
			reasons = append(reasons, []string{workloadName(wl), wl.Verdict, why})
		}
	}
	if len(r.Workloads) == 0 && len(r.Skipped) == 0 {
		b.WriteString("no workload asks for devices\n")
	} else if len(r.Workloads) == 0 {
		b.WriteString("no workload could be simulated\n")
	} else {
		writeRows(&b, rows, styled(simVerdictStyle, 5))
	}
	if len(reasons) > 0 {
		b.WriteString("\n")
		writeRows(&b, append([][]string{{"WORKLOAD", "VERDICT", "BECAUSE (AFTER)"}}, reasons...), styled(simVerdictStyle, 1))
	}
	if len(r.Skipped) > 0 {
		b.WriteString("\n")
		writeRows(&b, skippedRows("SKIPPED", r.Skipped), styled(nil, -1))
	}
	if len(r.Pools) > 0 {
		b.WriteString("\n")
		rows = [][]string{{"POOL", "SHAPE", "NODES", "BEFORE (USED/TOTAL)", "AFTER (USED/TOTAL)"}}
		for _, p := range r.Pools {
			rows = append(rows, []string{p.Name, dash(p.Shape), strconv.Itoa(p.Nodes), usage(p.Before), usage(p.After)})
		}
		writeRows(&b, rows, styled(nil, -1))
	}
	b.WriteString("\n" + summaryLine(r) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func simulateMarkdown(w io.Writer, r *simulate.Result) error {
	var b strings.Builder
	b.WriteString("# kubedra simulate\n\n" + summaryLine(r) + "\n\n## Workloads\n\n")
	rows := [][]string{{"Workload", "Template", "Pods", "Before", "After", "Verdict", "Why not all fit (after)"}}
	for _, wl := range r.Workloads {
		verdict := wl.Verdict
		if verdict == simulate.Worse {
			verdict = "**" + verdict + "**"
		}
		rows = append(rows, []string{"`" + workloadName(wl) + "` (" + fmt.Sprintf("%s:%d", wl.File, wl.Line) + ")", "`" + wl.PodTemplatePath + "`",
			strconv.Itoa(wl.Pods), strconv.Itoa(wl.Before.Pods) + " " + pools(wl.Before.Pools), strconv.Itoa(wl.After.Pods) + " " + pools(wl.After.Pools),
			verdict, dash(strings.Join(verdictReasons(wl), "; "))})
	}
	mdTable(&b, rows)
	if len(r.Skipped) > 0 {
		b.WriteString("\n## Skipped\n\n")
		mdTable(&b, skippedRows("Skipped", r.Skipped))
	}
	b.WriteString("\n## Node pools\n\n")
	rows = [][]string{{"Pool", "Shape", "Nodes", "Before (used/total)", "After (used/total)"}}
	for _, p := range r.Pools {
		rows = append(rows, []string{p.Name, dash(p.Shape), strconv.Itoa(p.Nodes), usage(p.Before), usage(p.After)})
	}
	mdTable(&b, rows)
	_, err := io.WriteString(w, b.String())
	return err
}

// skippedRows are the templates simulate could not judge, under a header.
func skippedRows(head string, l []simulate.Skip) [][]string {
	rows := [][]string{{head, "TEMPLATE", "BECAUSE", "LOCATION"}}
	if head != "SKIPPED" {
		rows[0] = []string{head, "Template", "Because", "Location"}
	}
	for _, s := range l {
		n := s.Kind + "/" + s.Name
		if s.Namespace != "" {
			n = s.Namespace + "/" + n
		}
		rows = append(rows, []string{n, s.PodTemplatePath, s.Reason, fmt.Sprintf("%s:%d", s.File, s.Line)})
	}
	return rows
}

// SimulateLog writes simulate's stderr: each input that could not be read,
// as file:line: severity: message.
func SimulateLog(w io.Writer, diags inventory.Diagnostics) {
	for _, d := range diags {
		fmt.Fprintf(w, "%s: %s: %s\n", d.Location(), d.Severity, d.Message)
	}
}

// Shapes lists the built-in shapes (simulate --list-shapes).
func Shapes(w io.Writer, shapes []*simulate.Shape, format Format) error {
	if format == "json" {
		type row struct {
			Name, Provider, Devices, Source string
			MIG                             []string `json:"mig"`
		}
		out := []row{}
		for _, s := range shapes {
			out = append(out, row{Name: s.Name, Provider: s.Provider, Devices: s.Summary(), Source: s.Source, MIG: append([]string{}, s.MIGProfiles()...)})
		}
		return JSON(w, map[string]any{"apiVersion": "kubedra.dev/v1alpha1", "kind": "ShapeList", "items": out})
	}
	var b strings.Builder
	rows := [][]string{{"SHAPE", "PROVIDER", "DEVICES", "MIG PROFILES"}}
	for _, s := range shapes {
		rows = append(rows, []string{s.Name, s.Provider, s.Summary(), dash(strings.Join(s.MIGProfiles(), ","))})
	}
	writeRows(&b, rows, nil)
	b.WriteString("\nThe source of each figure: docs/simulate.md.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WorldObjects writes nodes and slices as a multi-document YAML stream.
func WorldObjects(w io.Writer, nodes []*corev1.Node, slices []*resourceapi.ResourceSlice) error {
	var objs []any
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, s := range slices {
		objs = append(objs, s)
	}
	for _, o := range objs {
		b, err := sigsyaml.Marshal(o)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "---\n%s", b); err != nil {
			return err
		}
	}
	return nil
}
