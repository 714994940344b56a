package app

import (
	"context"
	"fmt"
	"io"

	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// checkLoadRules returns the built-in rules overlaid with the user's files.
func checkLoadRules(paths []string) (*rules.Set, error) {
	set, err := rules.Load(paths...)
	if err != nil {
		return nil, fmt.Errorf("loading rules: %w", err)
	}
	return set, nil
}

// checkCollect runs scan's pipeline (files -> detect -> plan.Items) over
// paths. It parses every document (no prefilter), because a gate must fail
// on a broken document even when it names no device.
func checkCollect(ctx context.Context, streams IOStreams, paths []string, set *rules.Set, opts rules.Options) (scanResult, error) {
	return scanInputs(ctx, paths, streams.In, scanConfig{
		detect:  detect.Options{TemplatePaths: set.TemplatePaths()},
		strict:  true,
		resolve: set,
		target:  opts.Target,
	})
}

// checkScanFormats are the scan formats check also renders.
func checkScanFormats() []string { return report.ScanFormats }

func checkDefaultFormat() string { return report.ScanFormats[0] }

// checkRenderScan renders the scan formats with scan's renderers.
func checkRenderScan(w io.Writer, format string, r plan.Report, style report.Style) error {
	return report.Scan(w, r, format, style)
}
