package report

import (
	"fmt"
	"io"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/proof"
)

// MigrateSummary writes what migrate did, for people (stderr): each
// diagnostic with its fix, the strategy chosen per workload (--strategy
// auto), and one line of counts.
func MigrateSummary(w io.Writer, r *action.MigrateResult) {
	for _, d := range r.Diagnostics {
		fmt.Fprintln(w, DiagnosticLine(d))
		if d.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", d.Fix)
		}
	}
	for _, c := range r.Workloads {
		fmt.Fprintf(w, "%s:%d: %s: %s (%s)\n", c.File, c.Line, c.Object, c.Strategy, c.Why)
	}
	fmt.Fprintf(w, "migrate: %d %s migrated, %d %s added, %d %s changed",
		r.Migrated, Plural(r.Migrated, "workload", "workloads"), r.Added, Plural(r.Added, "object", "objects"),
		r.Changed, Plural(r.Changed, "file", "files"))
	if r.Upgraded > 0 {
		fmt.Fprintf(w, ", %d earlier-DRA %s upgraded", r.Upgraded, Plural(r.Upgraded, "document", "documents"))
	}
	if r.Governed > 0 {
		fmt.Fprintf(w, ", %d %s edited (quota, LimitRange, Kueue)", r.Governed, Plural(r.Governed, "governance object", "governance objects"))
	}
	if len(r.Charts) > 0 {
		fmt.Fprintf(w, ", %d %s (strategy per chart above)", len(r.Charts), Plural(len(r.Charts), "chart", "charts"))
	}
	if n := len(r.Units); n > 0 {
		failed := 0
		for _, u := range r.Units {
			if u.Status == proof.Failed {
				failed++
			}
		}
		fmt.Fprintf(w, ", %d kustomize %s proved", n-failed, Plural(n-failed, "unit", "units"))
		if failed > 0 {
			fmt.Fprintf(w, " (%d failed its proof)", failed)
		}
	}
	if r.Failed > 0 {
		fmt.Fprintf(w, ", %d %s failed", r.Failed, Plural(r.Failed, "file", "files"))
	}
	fmt.Fprintln(w)
}

// DiagnosticLine is one diagnostic as a compiler would print it:
// "file:line: severity: Kind/namespace/name container c resource: message".
func DiagnosticLine(d inventory.Diagnostic) string {
	what := ""
	if o := d.Object; o != nil && (o.Kind != "" || o.Name != "") {
		what = " " + o.String()
		if d.Container != "" {
			what += " container " + d.Container
		}
	}
	if d.Resource != "" {
		what += " " + d.Resource
	}
	if what != "" {
		what += ":"
	}
	return fmt.Sprintf("%s: %s:%s %s", d.Location(), d.Severity, what, d.Message)
}
