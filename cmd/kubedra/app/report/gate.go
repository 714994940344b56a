package report

import (
	"fmt"
	"path"
	"strings"

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

// Vendor returns the domain of an extended resource name ("nvidia.com" for
// "nvidia.com/gpu"), or the whole name when it has no domain.
func Vendor(resource string) string {
	if d, _, ok := strings.Cut(resource, "/"); ok {
		return d
	}
	return resource
}

// RuleID is the stable identifier of the kind of a finding: its status and
// vendor, e.g. "unmapped/nvidia.com". SARIF uses it as ruleId, so code
// scanning groups alerts by it; "/" makes it hierarchical (SARIF 3.27.5).
func RuleID(it plan.Item) string {
	return string(it.Status) + "/" + Vendor(it.Resource)
}

// IgnoreReasonRuleID identifies the finding that a kubedra.io/ignore
// annotation has no reason.
const IgnoreReasonRuleID = "ignore-without-reason"

// IgnoreReasonMessage is the text of that finding.
const IgnoreReasonMessage = "the kubedra.io/ignore annotation needs a reason, e.g. kubedra.io/ignore: \"migrated by the platform team in Q3\"; the request is checked as if it were not there"

// workload names a finding's object: "Deployment ml/train".
func workload(it plan.Item) string {
	name := it.Name
	if it.Namespace != "" {
		name = it.Namespace + "/" + name
	}
	if it.Kind == "" {
		return name
	}
	return it.Kind + " " + name
}

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

// Message says in one sentence what a finding is and what it means.
func Message(it plan.Item) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: container %s requests %s", workload(it), it.Container, it.Resource)
	if q := it.Quantity(); q != "" {
		fmt.Fprintf(&b, ": %s", q)
	}
	m := it.Mapping
	switch it.Status {
	case rules.Mappable:
		b.WriteString(" (device plugin); it maps to DRA")
		if m.DeviceClass != "" {
			fmt.Fprintf(&b, " DeviceClass %s", m.DeviceClass)
		}
		if m.Rule != nil {
			fmt.Fprintf(&b, " by rule %s", m.Rule.ID)
		}
	case rules.Lossy:
		b.WriteString(" (device plugin); the DRA mapping is lossy")
		if m.Loss != "" {
			fmt.Fprintf(&b, ": %s", m.Loss)
		}
	case rules.Unmapped:
		b.WriteString(" (device plugin) and no rule maps it")
		if m.Reason != "" {
			fmt.Fprintf(&b, ": %s", m.Reason)
		}
	case rules.DRABacked:
		b.WriteString(", which DRA already serves")
		if m.Reason != "" {
			fmt.Fprintf(&b, ": %s", m.Reason)
		}
	default:
		fmt.Fprintf(&b, " (status %s)", it.Status)
	}
	if m.Fix != "" && it.Status != rules.DRABacked {
		fmt.Fprintf(&b, ". Fix: %s", m.Fix)
	}
	return b.String()
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
	}
	return "A device request found by kubedra."
}

// docsURI is where the statuses are documented.
const docsURI = "https://github.com/kubedra/kubedra/blob/main/docs/ci.md"

// displayPath turns a finding's file into a slash path for reports.
func displayPath(file string) string {
	return path.Clean(strings.ReplaceAll(file, "\\", "/"))
}
