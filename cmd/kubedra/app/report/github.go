package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// GitHub writes c as GitHub Actions workflow commands, which the runner
// turns into annotations on the pull request's diff:
//
//	::error file=deploy/train.yaml,line=12,col=15,title=kubedra unmapped/nvidia.com::Deployment ml/train: ...
//
// Findings that fail the gate are errors, other device-plugin requests
// warnings, those with nothing to act on notices (Check.severity). Unread inputs are warnings.
// See https://docs.github.com/actions/reference/workflow-commands-for-github-actions.
func GitHub(w io.Writer, c Check) error {
	var b strings.Builder
	for i, it := range c.Report.Findings {
		cmd := string(c.severity(i))
		if cmd == string(inventory.Info) {
			cmd = "notice"
		}
		msg := it.Message()
		if it.Ignored != "" {
			msg += " (ignored: " + it.Ignored + ")"
		}
		writeCommand(&b, cmd, it.File, it.Line, it.Column, "kubedra "+it.RuleID(), msg)
		if it.IgnoreInvalid {
			writeCommand(&b, "error", it.File, it.Line, it.Column, "kubedra "+plan.IgnoreReasonRuleID, workload(it)+": "+plan.IgnoreReasonMessage)
		}
	}
	for _, sk := range c.Report.Skipped {
		writeCommand(&b, "warning", sk.File, sk.Line, 0, "kubedra: input not read", sk.Reason)
	}
	s := c.Report.Summary
	verdict := "passed"
	if c.Failures() > 0 {
		verdict = "failed"
	}
	// A notice without a file is shown in the run summary.
	writeCommand(&b, "notice", "", 0, 0, "kubedra check "+verdict,
		fmt.Sprintf("%d failing (--fail-on %s), %d findings: %d mappable, %d lossy, %d unmapped, %d dra-backed, %d dra-upgrade, %d governance, %d ignored; %d files, %d unread inputs",
			c.Failures(), c.FailOn, s.Findings, s.Mappable, s.Lossy, s.Unmapped, s.DRABacked, s.DRAUpgrade, s.Governance, s.Ignored, s.Files, s.Skipped))
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCommand(b *strings.Builder, cmd, file string, line, col int, title, msg string) {
	var props []string
	if file != "" && file != "-" {
		props = append(props, "file="+escapeProperty(displayPath(file)))
		if line > 0 {
			props = append(props, fmt.Sprintf("line=%d", line))
			if col > 0 {
				props = append(props, fmt.Sprintf("col=%d", col))
			}
		}
	}
	if title != "" {
		props = append(props, "title="+escapeProperty(title))
	}
	b.WriteString("::" + cmd)
	if len(props) > 0 {
		b.WriteString(" " + strings.Join(props, ","))
	}
	b.WriteString("::" + escapeData(msg) + "\n")
}

// escapeData and escapeProperty follow the runner's toolkit
// (@actions/core command.ts): data escapes %, CR and LF; properties also
// escape : and , which separate them.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
