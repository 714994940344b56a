package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kubedra/kubedra/bundle"
)

// DriverFormats are what `bundle --list-drivers` and `bundle verify`
// render; the first is the default.
var DriverFormats = NewFormats("table", "json", "yaml")

// DriverListItem is one driver of `bundle --list-drivers` in machine output.
type DriverListItem struct {
	Name          string   `json:"name"`
	Title         string   `json:"title"`
	Release       string   `json:"release"`
	URL           string   `json:"url"`
	DRADriver     string   `json:"draDriver"`
	Install       string   `json:"install"`
	DeviceClasses []string `json:"deviceClasses"`
	Replaces      []string `json:"replaces"`
}

// DriverCatalogue writes the reference drivers: a table, or a
// DriverCatalogue envelope in json or yaml.
func DriverCatalogue(w io.Writer, drivers []bundle.Driver, format Format) error {
	var items []DriverListItem
	for _, d := range drivers {
		it := DriverListItem{Name: d.Name, Title: d.Title, Release: d.Release.Version, URL: d.Release.URL, DRADriver: d.DRADriver, Replaces: d.Resources}
		if h := d.Install.Helm; h != nil {
			it.Install = strings.TrimSpace("helm " + h.Chart + " " + h.Version)
		} else {
			it.Install = "manifests (embedded)"
		}
		for _, c := range d.DeviceClasses {
			it.DeviceClasses = append(it.DeviceClasses, c.Name)
		}
		items = append(items, it)
	}
	switch format {
	case "json", "yaml":
		return envelope(w, format, map[string]any{"apiVersion": "kubedra.dev/v1alpha1", "kind": "DriverCatalogue", "items": items})
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRELEASE\tDRA DRIVER\tINSTALL\tDEVICECLASSES\tREPLACES")
	for _, it := range items {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.Name, it.Release, it.DRADriver, it.Install, strings.Join(it.DeviceClasses, ","), strings.Join(it.Replaces, ","))
	}
	return tw.Flush()
}

// BundleVerify writes a verify report to out: the conflicts as a table (or
// the line that says there are none), or a BundleVerifyReport envelope in
// json or yaml. With the table, notes and nodes labelled for DRA that no
// driver serves go to errOut, for people.
func BundleVerify(out, errOut io.Writer, r *bundle.Report, format Format) error {
	switch format {
	case "json", "yaml":
		return envelope(out, format, map[string]any{"apiVersion": "kubedra.dev/v1alpha1", "kind": "BundleVerifyReport", "family": r.Family,
			"conflicts": r.Conflicts, "unserved": r.Unserved, "placements": r.Placements, "notes": r.Notes})
	}
	if len(r.Conflicts) > 0 {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tSTATE\tDEVICE PLUGIN\tDRA DRIVER")
		for _, c := range r.Conflicts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Node, c.State, c.Plugin, c.Driver)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	} else if _, err := fmt.Fprintf(out, "no conflict: %d nodes checked for family %s (now, labelled, unlabelled)\n", len(r.Placements), r.Family); err != nil {
		return err
	}
	for _, n := range r.Notes {
		fmt.Fprintf(errOut, "note: %s\n", n)
	}
	for _, n := range r.Unserved {
		fmt.Fprintf(errOut, "warning: node %s is labelled %s=%s but no %s driver DaemonSet can run there\n", n, bundle.ModeLabel, bundle.ModeDRA, r.Family)
	}
	return nil
}

// BundleWritten tells people, on w, what bundle left to them and where the
// bundle went (out, as the user named it).
func BundleWritten(w io.Writer, res *bundle.Result, out string) error {
	for _, d := range res.Warnings {
		fmt.Fprintf(w, "%s: %s\n", d.Severity, d.Message)
	}
	_, err := fmt.Fprintf(w, "wrote %d files to %s; next: %s/PLAN.md\n", len(res.Tree), out, strings.TrimSuffix(out, "/"))
	return err
}

func envelope(w io.Writer, format Format, env map[string]any) error {
	if format == "json" {
		return JSON(w, env)
	}
	return YAML(w, env)
}
