package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/bundle"
)

// AuditFormats are the formats Audit renders; the first is the default,
// and "md" is markdown.
var AuditFormats = Formats{Names: []Format{"table", "json", "yaml", "markdown", "html"}, Aliases: map[string]Format{"md": "markdown"}}

var (
	severityStyle = map[string]lipgloss.Style{
		string(audit.Error):   lipgloss.NewStyle().Foreground(lipgloss.Red).Bold(true),
		string(audit.Warning): lipgloss.NewStyle().Foreground(lipgloss.Yellow),
		string(audit.Info):    lipgloss.NewStyle().Faint(true),
	}
	verdictStyle = map[string]lipgloss.Style{
		string(audit.Ready):       lipgloss.NewStyle().Foreground(lipgloss.Green),
		string(audit.Blocked):     lipgloss.NewStyle().Foreground(lipgloss.Yellow).Bold(true),
		string(audit.Conflicting): lipgloss.NewStyle().Foreground(lipgloss.Red).Bold(true),
		string(audit.Pass):        lipgloss.NewStyle().Foreground(lipgloss.Green),
		string(audit.Warn):        lipgloss.NewStyle().Foreground(lipgloss.Yellow),
		string(audit.Fail):        lipgloss.NewStyle().Foreground(lipgloss.Red).Bold(true),
		string(audit.Skipped):     lipgloss.NewStyle().Faint(true),
	}
)

// Audit writes r to w in format (one of AuditFormats); the html page
// shows the phases of man, a bundle, when it is not nil.
func Audit(w io.Writer, r *audit.Report, man *bundle.Manifest, format Format, s Style) error {
	switch format {
	case "json":
		return JSON(w, r)
	case "yaml":
		return YAML(w, r)
	case "markdown":
		return auditMarkdown(w, r)
	case "html":
		return AuditHTML(w, r, man)
	case "", "table":
		return auditTable(w, r, s)
	}
	return fmt.Errorf("unknown output format %q: use %s", format, AuditFormats)
}

// StartReadProgress starts a Progress line that says which resource a live
// read is listing and how many of its objects it has read; update is the
// reader's progress callback.
func StartReadProgress(w io.Writer) (p *Progress, update func(resource string, n int)) {
	var line atomic.Value
	line.Store("")
	p = StartProgress(w, 500*time.Millisecond, func() string { return line.Load().(string) })
	return p, func(resource string, n int) { line.Store(fmt.Sprintf("reading %s: %d", resource, n)) }
}

func styled(m map[string]lipgloss.Style, col int) func(row, c int, cell string) string {
	return func(row, c int, cell string) string {
		switch {
		case row == 0:
			return headerStyle.Render(cell)
		case c == col:
			if st, ok := m[cell]; ok {
				return st.Render(cell)
			}
		}
		return cell
	}
}

func joinDash(ss []string) string { return dash(strings.Join(ss, ",")) }

func auditTable(out io.Writer, r *audit.Report, s Style) error {
	w := Writer(out, s.Profile)
	var b strings.Builder
	b.WriteString(dimStyle.Render(clusterLine(r)))
	b.WriteString("\n\n")

	rows := [][]string{{"POOL", "NODES", "PLUGINS", "DRA DRIVERS", "VERDICT", "BECAUSE OF"}}
	for _, p := range r.Pools {
		rows = append(rows, []string{p.Name, strconv.Itoa(p.Nodes), joinDash(p.Plugins), joinDash(p.Drivers),
			string(p.Verdict), joinDash(p.Checks)})
	}
	writeRows(&b, rows, styled(verdictStyle, 4))
	b.WriteString("\n")

	rows = [][]string{{"CHECK", "SEVERITY", "RESULT", "FINDINGS", "NOTE"}}
	for _, c := range r.Checks {
		note := c.Title
		if c.Reason != "" {
			note = c.Reason
		}
		rows = append(rows, []string{c.ID, string(c.Severity), string(c.Result), strconv.Itoa(c.Findings), note})
	}
	writeRows(&b, rows, styled(verdictStyle, 2))

	if len(r.Items) > 0 {
		b.WriteString("\n")
		rows = [][]string{{"SEVERITY", "CHECK", "FINDING"}}
		for _, it := range r.Items {
			rows = append(rows, []string{string(it.Severity), it.Check, it.Message})
			if it.Fix != "" {
				rows = append(rows, []string{"", "", "  fix: " + it.Fix})
			}
		}
		writeRows(&b, rows, styled(severityStyle, 0))
	}
	if len(r.Workloads) > 0 {
		b.WriteString("\n")
		rows = [][]string{{"NAMESPACE", "RESOURCE", "STATUS", "WORKLOADS", "PODS", "EXAMPLE"}}
		for _, g := range r.Workloads {
			rows = append(rows, []string{g.Namespace, g.Resource, dash(string(g.Status)), strconv.Itoa(g.Workloads),
				strconv.Itoa(g.Pods), example(g)})
		}
		writeRows(&b, rows, styled(statusStyle, 2))
	}
	if len(r.Problems) > 0 {
		b.WriteString("\n")
		b.WriteString(headerStyle.Render("Partial report"))
		b.WriteString("\n")
		for _, p := range r.Problems {
			b.WriteString("  " + p.Message + "\n")
		}
	}
	b.WriteString("\n")
	b.WriteString(dimStyle.Render(auditSummary(r)))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func example(g audit.WorkloadGroup) string {
	if len(g.Objects) == 0 {
		return "-"
	}
	s := g.Objects[0].String()
	if len(g.Objects) > 1 {
		s += fmt.Sprintf(" (+%d)", len(g.Objects)-1)
	}
	return s
}

func clusterLine(r *audit.Report) string {
	c := r.Cluster
	v := c.ServerVersion
	if v == "" {
		v = "version unknown"
	}
	api := "resource.k8s.io not served"
	if len(c.ResourceAPIVersions) > 0 {
		api = "resource.k8s.io " + strings.Join(c.ResourceAPIVersions, ",")
	}
	ns := "all namespaces"
	if c.Namespace != "" {
		ns = "namespace " + c.Namespace
	}
	return fmt.Sprintf("Cluster %s, %s, %d node%s, %d DeviceClass%s, %d ResourceSlice%s, %d ResourceClaim%s (%d for extended resources), %d ResourceClaimTemplate%s, %s",
		v, api, c.Nodes, Plural(c.Nodes, "", "s"), c.DeviceClasses, Plural(c.DeviceClasses, "", "es"), c.ResourceSlices, Plural(c.ResourceSlices, "", "s"),
		c.ResourceClaims, Plural(c.ResourceClaims, "", "s"), c.ExtendedClaims, c.ResourceClaimTemplates, Plural(c.ResourceClaimTemplates, "", "s"), ns)
}

func auditSummary(r *audit.Report) string {
	count := map[audit.Severity]int{}
	for _, it := range r.Items {
		count[it.Severity]++
	}
	verdicts := map[audit.Verdict]int{}
	for _, p := range r.Pools {
		verdicts[p.Verdict]++
	}
	line := fmt.Sprintf("%d error%s, %d warning%s, %d info; pools: %d ready, %d blocked, %d conflicting.",
		count[audit.Error], Plural(count[audit.Error], "", "s"), count[audit.Warning], Plural(count[audit.Warning], "", "s"), count[audit.Info],
		verdicts[audit.Ready], verdicts[audit.Blocked], verdicts[audit.Conflicting])
	if len(r.Problems) > 0 {
		line += fmt.Sprintf(" Partial: %d resource type%s could not be read.", len(r.Problems), Plural(len(r.Problems), "", "s"))
	}
	return line
}

func mdCell(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ") }

func mdTable(b *strings.Builder, rows [][]string) {
	for i, row := range rows {
		cells := make([]string, len(row))
		for j, c := range row {
			cells[j] = mdCell(c)
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat(" --- |", len(row)) + "\n")
		}
	}
}

func auditMarkdown(w io.Writer, r *audit.Report) error {
	var b strings.Builder
	b.WriteString("# kubedra audit\n\n" + clusterLine(r) + "\n\n## Node pools\n\n")
	rows := [][]string{{"Pool", "Nodes", "Plugins", "DRA drivers", "Verdict", "Because of"}}
	for _, p := range r.Pools {
		rows = append(rows, []string{p.Name, strconv.Itoa(p.Nodes), joinDash(p.Plugins), joinDash(p.Drivers),
			"**" + string(p.Verdict) + "**", joinDash(p.Checks)})
	}
	mdTable(&b, rows)
	b.WriteString("\n## Checks\n\n")
	rows = [][]string{{"Check", "Severity", "Result", "Findings", "Note"}}
	for _, c := range r.Checks {
		note := c.Title
		if c.Reason != "" {
			note = c.Reason
		}
		rows = append(rows, []string{"`" + c.ID + "`", string(c.Severity), string(c.Result), strconv.Itoa(c.Findings), note})
	}
	mdTable(&b, rows)
	if len(r.Items) > 0 {
		b.WriteString("\n## Findings\n\n")
		rows = [][]string{{"Severity", "Check", "Finding", "Fix"}}
		for _, it := range r.Items {
			rows = append(rows, []string{string(it.Severity), "`" + it.Check + "`", it.Message, dash(it.Fix)})
		}
		mdTable(&b, rows)
	}
	if len(r.Workloads) > 0 {
		b.WriteString("\n## Workloads on device plugins\n\n")
		rows = [][]string{{"Namespace", "Resource", "Status", "Workloads", "Pods", "Example"}}
		for _, g := range r.Workloads {
			rows = append(rows, []string{g.Namespace, "`" + g.Resource + "`", dash(string(g.Status)),
				strconv.Itoa(g.Workloads), strconv.Itoa(g.Pods), example(g)})
		}
		mdTable(&b, rows)
	}
	if len(r.Problems) > 0 {
		b.WriteString("\n## Partial report\n\n")
		for _, p := range r.Problems {
			b.WriteString("- " + mdCell(p.Message) + "\n")
		}
	}
	b.WriteString("\n" + auditSummary(r) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}
