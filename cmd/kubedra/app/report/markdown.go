package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// MarkdownMarker is an HTML comment at the top of the markdown report, so
// that a CI job can find and update its earlier pull-request comment
// instead of adding a new one.
const MarkdownMarker = "<!-- kubedra-check -->"

// Markdown writes c as a pull-request comment (GitHub-flavoured markdown):
// a verdict line, the failing findings as a table, then the rest, ignored
// findings and unread inputs in collapsed sections.
func Markdown(w io.Writer, c Check) error {
	var b strings.Builder
	s := c.Report.Summary
	fails := c.Failures()
	b.WriteString(MarkdownMarker + "\n")
	b.WriteString("### kubedra check\n\n")
	if fails == 0 {
		fmt.Fprintf(&b, "**Passed** (`--fail-on %s`): no device-plugin request fails the gate.\n\n", c.FailOn)
	} else {
		fmt.Fprintf(&b, "**Failed** (`--fail-on %s`): %d %s %s the gate.\n\n", c.FailOn, fails, Plural(fails, "finding", "findings"), Plural(fails, "fails", "fail"))
	}
	fmt.Fprintf(&b, "| files | documents | findings | mappable | lossy | unmapped | dra-backed | dra-upgrade | governance | ignored | unread inputs |\n")
	fmt.Fprintf(&b, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d |\n\n", s.Files, s.Documents, s.Findings, s.Mappable, s.Lossy, s.Unmapped, s.DRABacked, s.DRAUpgrade, s.Governance, s.Ignored, s.Skipped)

	var failing, passing, ignored []int
	for i, it := range c.Report.Findings {
		switch {
		case it.Ignored != "":
			ignored = append(ignored, i)
		case c.failing(i):
			failing = append(failing, i)
		default:
			passing = append(passing, i)
		}
	}
	if len(failing) > 0 {
		findingTable(&b, c.Report.Findings, failing)
	}
	if invalid := invalidIgnores(c.Report.Findings); len(invalid) > 0 {
		b.WriteString("**kubedra.io/ignore without a reason** (the annotation is not honoured until it says why):\n\n")
		for _, it := range invalid {
			fmt.Fprintf(&b, "- `%s` %s\n", cell(location(it)), cell(workload(it)))
		}
		b.WriteString("\n")
	}
	if len(passing) > 0 {
		fmt.Fprintf(&b, "<details><summary>%d more %s that %s not fail the gate</summary>\n\n", len(passing), Plural(len(passing), "finding", "findings"), Plural(len(passing), "does", "do"))
		findingTable(&b, c.Report.Findings, passing)
		b.WriteString("</details>\n\n")
	}
	if len(ignored) > 0 {
		fmt.Fprintf(&b, "<details><summary>%d ignored</summary>\n\n", len(ignored))
		b.WriteString("| location | workload | container | resource | reason |\n|---|---|---|---|---|\n")
		for _, i := range ignored {
			it := c.Report.Findings[i]
			fmt.Fprintf(&b, "| `%s` | %s | %s | `%s` | %s |\n", cell(location(it)), cell(workload(it)), cell(it.Container), cell(it.Resource), cell(it.Ignored))
		}
		b.WriteString("\n</details>\n\n")
	}
	if len(c.Report.Skipped) > 0 {
		fmt.Fprintf(&b, "<details><summary>%d %s not read</summary>\n\n", len(c.Report.Skipped), Plural(len(c.Report.Skipped), "input", "inputs"))
		for _, sk := range c.Report.Skipped {
			loc := displayPath(sk.File)
			if sk.Line > 0 {
				loc = fmt.Sprintf("%s:%d", loc, sk.Line)
			}
			fmt.Fprintf(&b, "- `%s`: %s\n", cell(loc), cell(sk.Reason))
		}
		b.WriteString("\n</details>\n\n")
	}
	if len(failing) > 0 {
		b.WriteString("Run `kubedra migrate` to rewrite mappable workloads, add rules for unmapped resources, or opt a workload out with a `kubedra.io/ignore: \"<reason>\"` annotation.\n")
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}

func findingTable(b *strings.Builder, items []plan.Item, idx []int) {
	b.WriteString("| location | workload | container | resource | status | details |\n|---|---|---|---|---|---|\n")
	for _, i := range idx {
		it := items[i]
		res := it.Resource
		if q := it.Quantity(); q != "" {
			res += ": " + q
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | `%s` | %s | %s |\n", cell(location(it)), cell(workload(it)), cell(Container(it)), cell(res), it.Status, cell(details(it)))
	}
	b.WriteString("\n")
}

// details is the table cell that says why a finding has its status.
func details(it plan.Item) string {
	m := it.Mapping
	var parts []string
	switch it.Status {
	case rules.Mappable:
		if m.DeviceClass != "" {
			parts = append(parts, "DeviceClass "+m.DeviceClass)
		}
		if m.Rule != nil {
			parts = append(parts, "rule "+m.Rule.ID)
		}
	case rules.Lossy:
		parts = append(parts, m.Loss)
	case rules.DRAUpgrade:
		parts = append(parts, m.Reason)
		if u := m.Upgrade; u != nil && u.To != "" {
			parts = append(parts, "migrate writes "+u.To)
		}
	default:
		parts = append(parts, m.Reason)
	}
	if m.Fix != "" && it.Status != rules.DRABacked {
		parts = append(parts, "fix: "+m.Fix)
	}
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

func invalidIgnores(items []plan.Item) []plan.Item {
	var out []plan.Item
	for _, it := range items {
		if it.IgnoreInvalid {
			out = append(out, it)
		}
	}
	return out
}

// cell makes text safe inside a markdown table cell: no pipes, no line
// breaks, no HTML.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", "", "<", "&lt;", ">", "&gt;", "`", "'").Replace(s)
}
