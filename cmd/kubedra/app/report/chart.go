package report

import (
	"fmt"
	"strings"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// chartSection writes the charts among the inputs: each one's strategy and
// why, the values key that feeds each of its requests, and what to run.
func chartSection(b *strings.Builder, charts []plan.ChartChoice, items []plan.Item) {
	if len(charts) == 0 {
		return
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(headerStyle.Render(fmt.Sprintf("Chart%s:", Plural(len(charts), "", "s"))))
	b.WriteString("\n")
	for _, c := range charts {
		fmt.Fprintf(b, "  %s (%s): %s\n", c.Chart, dash(c.Name), c.Strategy)
		if c.RenderedWith != "" {
			fmt.Fprintf(b, "    rendered with %s, which kubedra migrate wrote: install the chart with it\n", c.RenderedWith)
		}
		fmt.Fprintf(b, "    %s\n", c.Why)
		for _, it := range items {
			if it.Chart == nil || it.Chart.Chart != c.Chart {
				continue
			}
			fmt.Fprintf(b, "    %s %s <- %s\n", Location(it.File, it.Line), it.Resource, ValuesSource(it))
		}
		if c.ValuesFile != "" {
			fmt.Fprintf(b, "    values file: %s\n", c.ValuesFile)
		}
		if c.Command != "" {
			fmt.Fprintf(b, "    run: %s\n", c.Command)
		}
	}
}

// ValuesSource says which values key fed a chart's request: the template's
// reference, the leaf and where it is set; or that the template writes it.
func ValuesSource(it plan.Item) string {
	cs := it.Chart
	if cs == nil {
		return "-"
	}
	if cs.Key == "" {
		return "written in the template"
	}
	s := cs.Key
	if cs.Values != "" {
		s = cs.Values + " (" + cs.Key + ")"
	}
	if cs.ValuesFile != "" {
		s += " set at " + Location(cs.ValuesFile, cs.ValuesLine)
	}
	return s
}
