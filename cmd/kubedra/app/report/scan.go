package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// ScanFormats are the formats Scan renders; the first is the default.
var ScanFormats = NewFormats("table", "wide", "json", "yaml")

// Style says how to render for people.
type Style struct {
	// Profile is the colour profile from ColorProfile; colorprofile.NoTTY
	// (or the zero value) renders plain text.
	Profile colorprofile.Profile
}

// Scan writes r to w in format (table, wide, json or yaml).
func Scan(w io.Writer, r plan.Report, format Format, s Style) error {
	switch format {
	case "json":
		return JSON(w, r)
	case "yaml":
		return YAML(w, r)
	case "", "table":
		return table(w, r, s, false)
	case "wide":
		return table(w, r, s, true)
	}
	return fmt.Errorf("unknown output format %q: use %s", format, ScanFormats)
}

// ScanProblem is why scan exits 1 after its report: inputs that could not
// be read or parsed, else, with --strict, inputs skipped; "" when there is
// no problem.
func ScanProblem(failed, skipped int, strict bool) string {
	switch {
	case failed > 0:
		return fmt.Sprintf("%d %s could not be read or parsed (listed under skipped)", failed, Plural(failed, "input", "inputs"))
	case strict && skipped > 0:
		return fmt.Sprintf("%d %s skipped (--strict)", skipped, Plural(skipped, "input", "inputs"))
	}
	return ""
}

// JSON writes v as indented JSON with a trailing newline.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// YAML writes v as YAML, with the field names of its JSON encoding.
func YAML(w io.Writer, v any) error {
	b, err := sigsyaml.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

var (
	headerStyle = lipgloss.NewStyle().Bold(true)
	dimStyle    = lipgloss.NewStyle().Faint(true)
	statusStyle = map[string]lipgloss.Style{
		string(rules.Mappable):       lipgloss.NewStyle().Foreground(lipgloss.Green),
		string(rules.Lossy):          lipgloss.NewStyle().Foreground(lipgloss.Yellow),
		string(rules.Unmapped):       lipgloss.NewStyle().Foreground(lipgloss.Red).Bold(true),
		string(rules.DRABacked):      lipgloss.NewStyle().Foreground(lipgloss.Blue),
		string(rules.DRAUpgrade):     lipgloss.NewStyle().Foreground(lipgloss.Magenta).Bold(true),
		string(rules.Governance):     lipgloss.NewStyle().Foreground(lipgloss.Cyan),
		string(rules.HelmValues):     lipgloss.NewStyle().Foreground(lipgloss.Yellow).Bold(true),
		string(rules.CustomResource): lipgloss.NewStyle().Foreground(lipgloss.Yellow).Bold(true),
		string(rules.NoDevice):       lipgloss.NewStyle().Foreground(lipgloss.Blue),
		"ignored":                    lipgloss.NewStyle().Faint(true),
	}
)

// StatusText is the status a person sees: the rules' status, or "ignored"
// for a finding excluded by a kubedra.io/ignore annotation.
func StatusText(it plan.Item) string {
	if it.Ignored != "" {
		return "ignored"
	}
	return string(it.Status)
}

// Location is file:line, or file for line 0.
func Location(file string, line int) string {
	if line <= 0 {
		return file
	}
	return file + ":" + strconv.Itoa(line)
}

// Workload is Kind/namespace/name (namespace omitted when empty).
func Workload(it plan.Item) string {
	if it.Values != "" && it.Kind == "" {
		return "(Helm values)" // the chart's templates decide which workload
	}
	parts := []string{it.Kind}
	if it.Namespace != "" {
		parts = append(parts, it.Namespace)
	}
	name := it.Name
	if name == "" {
		name = "(unnamed)"
	}
	return strings.Join(append(parts, name), "/")
}

// Container is the container name with its type when it is not a regular
// container, e.g. "setup (init)".
func Container(it plan.Item) string {
	if it.Container == "" && it.ContainerIndex < 0 {
		return "-" // not about a container (DRA objects, feature gates)
	}
	name := it.Container
	if name == "" {
		name = "#" + strconv.Itoa(it.ContainerIndex)
	}
	if it.ContainerType != "" && it.ContainerType != "container" {
		name += " (" + string(it.ContainerType) + ")"
	}
	return name
}

// Quantity is limit and request as written, "2" when they agree.
func Quantity(it plan.Item) string {
	switch {
	case it.Limit == "" && it.Request == "":
		return "-"
	case it.Limit == "" || it.Limit == it.Request:
		return firstNonEmpty(it.Limit, it.Request)
	case it.Request == "":
		return it.Limit
	}
	return it.Limit + "/" + it.Request
}

// Mapping summarises the decision: the DeviceClass and count, or why not.
func Mapping(it plan.Item) string {
	m := it.Mapping
	var s string
	switch {
	case m.Upgrade != nil:
		s = upgradeCell(m.Upgrade)
	case m.Govern != nil:
		s = governCell(m)
	case m.DeviceClass != "":
		s = m.DeviceClass
		if m.Count > 0 {
			s += " x" + strconv.FormatInt(m.Count, 10)
		}
		if n := len(m.Selectors); n > 0 {
			s += fmt.Sprintf(" (%d selector%s)", n, Plural(n, "", "s"))
		}
	case m.Reason != "":
		s = m.Reason
	default:
		s = "-"
	}
	if it.Ignored != "" {
		s = "ignored: " + it.Ignored
	}
	return s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// table renders findings as aligned columns, then skips and a summary.
// Cells are never truncated: off a terminal the output must stay greppable,
// and on one a wrapped line beats a lost path.
func table(out io.Writer, r plan.Report, s Style, wide bool) error {
	w := Writer(out, s.Profile)
	var b strings.Builder
	if len(r.Findings) > 0 {
		header := []string{"LOCATION", "WORKLOAD", "CONTAINER", "RESOURCE", "QTY", "STATUS", "DRA"}
		if wide {
			header = []string{"LOCATION", "WORKLOAD", "POD TEMPLATE", "CONTAINER", "RESOURCE", "LIMIT", "REQUEST",
				"STATUS", "DRA", "RULE", "HINTS", "NOTE"}
		}
		rows := [][]string{header}
		statusCol := 5
		if wide {
			statusCol = 7
		}
		for _, it := range r.Findings {
			if !wide {
				rows = append(rows, []string{Location(it.File, it.Line), Workload(it), Container(it), it.Resource,
					Quantity(it), StatusText(it), Mapping(it)})
				continue
			}
			rule := "-"
			note := firstNonEmpty(it.Mapping.Loss, it.Mapping.Fix)
			if it.Mapping.Rule != nil {
				rule = it.Mapping.Rule.ID
			}
			if u := it.Mapping.Upgrade; u != nil {
				rule = u.Rule
				note = it.Mapping.Reason + "; fix: " + it.Mapping.Fix
			}
			var hints []string
			for _, h := range it.Hints {
				hints = append(hints, h.Key)
			}
			rows = append(rows, []string{Location(it.File, it.Line), Workload(it), it.PodTemplatePath, Container(it),
				it.Resource, dash(it.Limit), dash(it.Request), StatusText(it), Mapping(it), rule,
				dash(strings.Join(hints, ",")), dash(note)})
		}
		writeRows(&b, rows, func(row, col int, cell string) string {
			switch {
			case row == 0:
				return headerStyle.Render(cell)
			case col == statusCol:
				if st, ok := statusStyle[cell]; ok {
					return st.Render(cell)
				}
			}
			return cell
		})
	}
	chartSection(&b, r.Charts, r.Findings)
	if len(r.Skipped) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(headerStyle.Render(fmt.Sprintf("Skipped %d input%s:", len(r.Skipped), Plural(len(r.Skipped), "", "s"))))
		b.WriteString("\n")
		rows := make([][]string, 0, len(r.Skipped))
		for _, sk := range r.Skipped {
			rows = append(rows, []string{"  " + Location(sk.File, sk.Line), sk.Reason})
		}
		writeRows(&b, rows, nil)
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(dimStyle.Render(summary(r.Summary)))
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writeRows pads cells to their column's width (measured on the plain
// text) and styles them with style, which may be nil.
func writeRows(b *strings.Builder, rows [][]string, style func(row, col int, cell string) string) {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], lipgloss.Width(c))
		}
	}
	for r, row := range rows {
		for i, c := range row {
			cell := c
			if style != nil {
				cell = style(r, i, c)
			}
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-lipgloss.Width(c)+2))
			}
		}
		b.WriteString("\n")
	}
}

// summary is the last line of the table formats.
func summary(s plan.Summary) string {
	where := fmt.Sprintf("%d file%s, %d document%s", s.Files, Plural(s.Files, "", "s"), s.Documents, Plural(s.Documents, "", "s"))
	if s.Findings == 0 {
		line := "No device-plugin requests found (" + where + ")"
		if s.Skipped > 0 {
			line += fmt.Sprintf("; %d skipped", s.Skipped)
		}
		return line + "."
	}
	var parts []string
	for _, p := range []struct {
		n    int
		name string
	}{{s.Mappable, "mappable"}, {s.Lossy, "lossy"}, {s.Unmapped, "unmapped"}, {s.DRABacked, "dra-backed"}, {s.DRAUpgrade, "dra-upgrade"},
		{s.HelmValues, "helm-values"}, {s.CustomResource, "custom-resource"}, {s.NoDevice, "no-device"}, {s.Governance, "governance"}, {s.Ignored, "ignored"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.name))
		}
	}
	noun := "request"
	if s.DRAUpgrade > 0 || s.Governance > 0 {
		noun = "finding" // not all are device-plugin requests
	}
	line := fmt.Sprintf("%d %s%s (%s) in %s", s.Findings, noun, Plural(s.Findings, "", "s"), strings.Join(parts, ", "), where)
	if s.Skipped > 0 {
		line += fmt.Sprintf("; %d skipped", s.Skipped)
	}
	return line + "."
}

// upgradeCell is the DRA column of a dra-upgrade finding: what migrate
// writes instead, and the release that stops serving what is written.
func upgradeCell(u *rules.Upgrade) string {
	s := u.To
	if s == "" {
		s = "(remove)"
	}
	switch {
	case u.RemovedIn != "" && u.Planned:
		s += " (removal planned " + u.RemovedIn + ")"
	case u.RemovedIn != "":
		s += " (removed in " + u.RemovedIn + ")"
	case u.DeprecatedIn != "":
		s += " (deprecated in " + u.DeprecatedIn + ")"
	}
	return s
}

// governCell is the DRA column of a governance finding: what migration
// does to the object.
func governCell(m rules.Decision) string {
	g := m.Govern
	switch {
	case g.Done:
		return "done"
	case g.Action == "add-key" && m.DeviceClass != "":
		return "stops counting: migrate adds " + m.DeviceClass + ".deviceclass.resource.k8s.io/devices"
	case g.Action == "remove":
		return "migrate removes it (LimitRanger would put it back)"
	case g.Action == "add-mapping":
		return "migrate adds deviceClassMappings"
	case g.Breaks:
		return "stops counting: " + firstNonEmpty(m.Fix, "see the reason")
	case g.Action == "warn":
		return "kubedra cannot act: " + firstNonEmpty(m.Fix, m.Reason)
	case m.DeviceClass != "":
		return "keeps counting (class " + m.DeviceClass + ")"
	}
	return "keeps counting"
}
