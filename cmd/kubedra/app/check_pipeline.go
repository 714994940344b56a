package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// checkResult is what check gates on: the scan report and the number of
// inputs that could not be read or parsed (exit 1).
type checkResult struct {
	Report plan.Report
	Errors int
}

// checkLoadRules returns the built-in rules overlaid with the user's files.
func checkLoadRules(paths []string) (*rules.Set, error) {
	set, err := rules.Load(paths...)
	if err != nil {
		return nil, fmt.Errorf("loading rules: %w", err)
	}
	return set, nil
}

// checkCollect runs the scan pipeline (files -> detect -> plan.Items) over
// paths. Unreadable files and parse errors are counted, listed as skips and
// do not stop the other inputs.
func checkCollect(ctx context.Context, streams IOStreams, paths []string, set *rules.Set, opts rules.Options) (checkResult, error) {
	var (
		findings  []inventory.Finding
		skips     []inventory.Skip
		nFiles    int
		documents int
		errs      int
	)
	dopts := detect.Options{TemplatePaths: set.TemplatePaths()}
	// No detect.MayRequest prefilter: a gate must parse every document so
	// that a broken one fails the run (exit 1) even if it names no device.
	err := files.Read(ctx, paths, streams.In, files.Options{Ordered: true}, func(f *files.File) error {
		if f.Last {
			nFiles++
		}
		documents += f.Documents
		skips = append(skips, f.Skips...)
		errs += f.ParseErrors
		if f.Err != nil {
			errs++
		}
		findings = append(findings, detect.Documents(f.Docs, dopts)...)
		return nil
	})
	if err != nil {
		return checkResult{}, err
	}
	items := plan.Items(findings, set, opts)
	return checkResult{Report: plan.NewReport(items, skips, nFiles, documents), Errors: errs}, nil
}

// checkScanFormats are the scan formats check also renders.
func checkScanFormats() []string { return []string{"table", "wide", "json", "yaml"} }

func checkDefaultFormat() string { return "table" }

// checkRenderScan renders the scan formats.
func checkRenderScan(w io.Writer, format string, r plan.Report, _ bool) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tLINE\tKIND\tNAMESPACE\tNAME\tCONTAINER\tRESOURCE\tSTATUS\tIGNORED")
	for _, it := range r.Findings {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", it.File, it.Line, it.Kind, it.Namespace, it.Name, it.Container, it.Resource, it.Status, it.Ignored)
	}
	return tw.Flush()
}
