package report

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Check is what `kubedra check` renders: the scan report and the gate's
// verdict on each finding. The verdict is computed by the command; formats
// only show it.
type Check struct {
	Report plan.Report
	// FailOn names the gate ("any", "unmapped" or "lossy").
	FailOn string
	// Failing is parallel to Report.Findings: true when the finding fails
	// the gate.
	Failing []bool
	// Tool describes kubedra for formats that name the producer (SARIF).
	Tool Tool
	// Units are the proofs against the baseline (check --baseline), and
	// UnitProblems what the failed ones found, one diagnostic each.
	Units        []proof.Result
	UnitProblems inventory.Diagnostics
}

// UnitFailures counts the units whose proof against the baseline failed.
func (c Check) UnitFailures() int {
	n := 0
	for _, u := range c.Units {
		if u.Status == proof.Failed {
			n++
		}
	}
	return n
}

// Tool names the program that produced a report.
type Tool struct {
	Name           string
	Version        string
	InformationURI string
}

// Failures counts the findings that fail the gate.
func (c Check) Failures() int {
	n := 0
	for _, f := range c.Failing {
		if f {
			n++
		}
	}
	return n
}

// failing reports whether finding i fails the gate.
func (c Check) failing(i int) bool { return i < len(c.Failing) && c.Failing[i] }

// severity is finding i's level, the one every format shows (SARIF's
// note, GitHub's notice and KRM's info for inventory.Info): an error when
// it fails the gate, info when it is ignored, else its status's level
// (statusSeverity).
func (c Check) severity(i int) inventory.Severity {
	switch {
	case c.failing(i):
		return inventory.Error
	case c.Report.Findings[i].Ignored != "":
		return inventory.Info
	}
	return statusSeverity(c.Report.Findings[i])
}

// statusSeverity is the level of a finding that does not fail the gate:
// info when there is nothing to act on (already served by DRA, a request
// of zero, an object that keeps counting the devices), else a warning.
// SARIF shows an ignored finding at this level, with its suppression.
func statusSeverity(it plan.Item) inventory.Severity {
	switch {
	case it.Status == rules.DRABacked, it.Status == rules.NoDevice:
		return inventory.Info
	case it.Status == rules.Governance && (it.Mapping.Govern == nil || !it.Mapping.Govern.Breaks):
		return inventory.Info
	}
	return inventory.Warning
}

// workload names a finding's object: "Deployment ml/train".
func workload(it plan.Item) string { return it.Workload() }

// location is "file:line" (or the file alone), for people.
func location(it plan.Item) string {
	f := it.File
	if f == "-" {
		f = "<stdin>"
	}
	if it.Line > 0 {
		return fmt.Sprintf("%s:%d", f, it.Line)
	}
	return f
}

// statusHelp explains a status in a few sentences: SARIF help text and
// the markdown legend.
func statusHelp(s rules.Status) string {
	switch s {
	case rules.Mappable:
		return "The container requests a device through a device plugin (an extended resource in resources.limits). A kubedra rule maps it to Dynamic Resource Allocation without losing semantics: run `kubedra migrate` to rewrite the workload to a ResourceClaimTemplate."
	case rules.Lossy:
		return "The container requests a device through a device plugin, and the documented DRA mapping changes semantics (sharing, fractions or rounding). Review the loss, then run `kubedra migrate --allow-lossy`, or keep the device plugin and ignore the workload with a kubedra.io/ignore annotation that gives the reason."
	case rules.Unmapped:
		return "The container requests a device through a device plugin and no kubedra rule maps the resource to a DeviceClass. Add a rule (`kubedra rules`, --rules or rules: in .kubedra.yaml), or ignore the workload with a kubedra.io/ignore annotation that gives the reason."
	case rules.DRABacked:
		return "The extended resource name is already served by a DRA DeviceClass (KEP-5004), so the request works on DRA as written. Nothing to do."
	case rules.Governance:
		return "An object that counts, limits or queues devices: a ResourceQuota, a LimitRange, a Kueue ClusterQueue, ResourceFlavor or Configuration, a Karpenter NodePool or a Volcano Queue. The finding says what it counts and what happens to it when the workloads move to DRA; the default gate fails only on one that would stop counting or limiting the devices. Run `kubedra migrate` to add the DRA quota keys and Kueue deviceClassMappings and to remove LimitRange entries that would put the device-plugin request back. See docs/governance.md."
	case rules.HelmValues:
		return "A Helm values file outside a chart that kubedra renders sets a device resource under limits or requests. The chart's templates decide where the value goes, and kubedra edits neither values files nor templates: point kubedra at the chart's folder (it renders the chart and chooses a strategy, docs/charts.md), or render the chart (helm template) and migrate the output, or move the chart to resource claims by hand."
	case rules.CustomResource:
		return "A custom resource sets a device resource under limits or requests outside any pod template kubedra knows (an operator's GPU profiles or flavors, such as llmaz's OpenModel inferenceConfig.flavors). The operator turns it into pods, so kubedra does not edit it: move it to resource claims as the operator documents, or, if the map is a pod template's, add a templatePaths entry for the kind in a rules file."
	case rules.NoDevice:
		return "The container requests zero of a device resource a kubedra rule maps (`nvidia.com/gpu: 0`): it asks for no device, so nothing moves to DRA. `kubedra migrate` removes the entry (and a resources map it leaves empty) and adds no claim. No gate fails on it."
	case rules.DRAUpgrade:
		return "The manifest was written for an earlier DRA: a classic (1.26-1.30) or alpha/beta resource.k8s.io object, a pod's resourceClaims[].source reference, or a DynamicResourceAllocation feature-gate setting. The finding names the version that stops serving it; on the target release it is refused, or served only with --runtime-config. Run `kubedra migrate` to rewrite objects and claim references to resource.k8s.io/v1 and to remove the refused feature-gate settings (comments are kept). See docs/upgrade.md."
	}
	return "A device request found by kubedra."
}

// docsURI is where the statuses are documented.
const docsURI = "https://github.com/kubedra/kubedra/blob/main/docs/ci.md"

// displayPath turns a finding's file into a slash path for reports.
func displayPath(file string) string {
	return path.Clean(strings.ReplaceAll(file, "\\", "/"))
}

// CheckFormats are the formats `kubedra check` renders: the scan formats,
// then the CI formats, and krm (the results `kubedra fn` gives).
var CheckFormats = NewFormats(append(append([]Format(nil), ScanFormats.Names...), "sarif", "junit", "markdown", "github", "krm")...)

// RenderCheck writes c in format to w; style colours the table formats.
func RenderCheck(w io.Writer, format Format, c Check, style Style) error {
	switch format {
	case "sarif":
		return SARIF(w, c)
	case "junit":
		return JUnit(w, c)
	case "markdown":
		return Markdown(w, c)
	case "github":
		return GitHub(w, c)
	case "krm":
		return KRM(w, c)
	}
	return Scan(w, c.Report, format, style)
}

// CheckSummary is the line people read in a CI log.
func CheckSummary(c Check, failedInputs int) string {
	s := c.Report.Summary
	var b strings.Builder
	if n := c.Failures(); n > 0 {
		fmt.Fprintf(&b, "failed: %d of %d %s %s the gate (--fail-on %s)", n, s.Findings, Plural(s.Findings, "finding", "findings"), Plural(n, "fails", "fail"), c.FailOn)
	} else if n := c.UnitFailures(); n > 0 {
		fmt.Fprintf(&b, "failed: %d %s would change what %s pods get against the baseline", n, Plural(n, "unit", "units"), Plural(n, "its", "their"))
	} else {
		fmt.Fprintf(&b, "passed: no finding fails the gate (--fail-on %s)", c.FailOn)
	}
	fmt.Fprintf(&b, "; %d mappable, %d lossy, %d unmapped, %d dra-backed, %d dra-upgrade, %d governance, %d ignored in %d %s",
		s.Mappable, s.Lossy, s.Unmapped, s.DRABacked, s.DRAUpgrade, s.Governance, s.Ignored, s.Files, Plural(s.Files, "file", "files"))
	if s.CustomResource > 0 {
		fmt.Fprintf(&b, "; %d in custom resources (custom-resource)", s.CustomResource)
	}
	if s.HelmValues > 0 {
		fmt.Fprintf(&b, "; %d in Helm values files (helm-values)", s.HelmValues)
	}
	if s.NoDevice > 0 {
		fmt.Fprintf(&b, "; %d asking for no device (no-device)", s.NoDevice)
	}
	if s.Skipped > 0 {
		fmt.Fprintf(&b, "; %d %s not read", s.Skipped, Plural(s.Skipped, "input", "inputs"))
	}
	if len(c.Units) > 0 {
		fmt.Fprintf(&b, "; %d of %d %s proved against the baseline", len(c.Units)-c.UnitFailures(), len(c.Units), Plural(len(c.Units), "unit", "units"))
		if n := c.UnitFailures(); n > 0 {
			fmt.Fprintf(&b, ", %d %s the gate", n, Plural(n, "fails", "fail"))
		}
	}
	if failedInputs > 0 {
		fmt.Fprintf(&b, "; %d could not be checked (exit 1)", failedInputs)
	}
	return b.String()
}

// WriteCheckFile writes c in format to path (--report FORMAT=PATH): never
// coloured, and atomically, so a CI step never reads half a report.
func WriteCheckFile(path string, format Format, c Check) error {
	var buf bytes.Buffer
	if err := RenderCheck(&buf, format, c, Style{}); err != nil {
		return err
	}
	return emit.WriteFileMode(path, buf.Bytes(), 0o644)
}

// CheckLog writes check's stderr: the inputs skipped, then the summary
// line. Quiet, only the skips that make the exit code: the inputs not read
// (errors), and with strict those skipped by design too.
func CheckLog(w io.Writer, name string, c Check, failedInputs int, quiet, strict bool) {
	for _, sk := range c.Report.Skipped {
		if quiet && !strict && sk.Severity != inventory.Error {
			continue
		}
		loc := sk.File
		if sk.Line > 0 {
			loc = fmt.Sprintf("%s:%d", loc, sk.Line)
		}
		fmt.Fprintf(w, "%s: skipped %s: %s\n", name, loc, sk.Reason)
	}
	// A unit that fails its proof fails the gate: said even when quiet.
	for _, d := range c.UnitProblems {
		what := ""
		if d.Object != nil {
			what = d.Object.String() + " "
		}
		if d.Container != "" {
			what += "container " + d.Container + " "
		}
		if what != "" {
			what = strings.TrimSuffix(what, " ") + ": "
		}
		fmt.Fprintf(w, "%s: %s: %s: %s%s\n", name, d.Severity, d.Location(), what, d.Message)
		if d.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", d.Fix)
		}
	}
	if !quiet {
		fmt.Fprintf(w, "%s: %s\n", name, CheckSummary(c, failedInputs))
	}
}
