package report_test

import (
	"bytes"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/internal/golden"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

func TestColorProfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mode string
		tty  bool
		env  map[string]string
		want colorprofile.Profile
	}{
		{name: "tty", tty: true, env: map[string]string{"TERM": "xterm"}, want: colorprofile.ANSI},
		{name: "tty 256", tty: true, env: map[string]string{"TERM": "xterm-256color"}, want: colorprofile.ANSI256},
		{name: "tty truecolor", tty: true, env: map[string]string{"TERM": "xterm", "COLORTERM": "truecolor"}, want: colorprofile.TrueColor},
		{name: "dumb tty", tty: true, env: map[string]string{"TERM": "dumb"}, want: colorprofile.NoTTY},
		{name: "pipe", env: map[string]string{"TERM": "xterm"}, want: colorprofile.NoTTY},
		{name: "NO_COLOR=yes on a tty", tty: true, env: map[string]string{"TERM": "xterm", "NO_COLOR": "yes"}, want: colorprofile.NoTTY},
		{name: "CLICOLOR_FORCE on a pipe", env: map[string]string{"CLICOLOR_FORCE": "1"}, want: colorprofile.ANSI},
		{name: "CLICOLOR_FORCE=0 is not forcing", env: map[string]string{"CLICOLOR_FORCE": "0"}, want: colorprofile.NoTTY},
		{name: "NO_COLOR beats CLICOLOR_FORCE", env: map[string]string{"CLICOLOR_FORCE": "1", "NO_COLOR": "1"}, want: colorprofile.NoTTY},
		{name: "always beats NO_COLOR", mode: "always", env: map[string]string{"NO_COLOR": "1"}, want: colorprofile.ANSI},
		{name: "never beats a tty", mode: "never", tty: true, env: map[string]string{"TERM": "xterm"}, want: colorprofile.NoTTY},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := report.ColorProfile(tt.mode, tt.tty, func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ColorProfile = %v, want %v", got, tt.want)
			}
		})
	}
	if _, err := report.ColorProfile("sometimes", true, nil); err == nil {
		t.Error("unknown mode: want an error")
	}
}

func scanFixture() plan.Report {
	items := []plan.Item{
		{File: "deploy.yaml", Finding: inventory.Finding{Line: 12, Column: 13, APIVersion: "apps/v1", Kind: "Deployment",
			Namespace: "ml", Name: "infer", PodTemplatePath: "spec.template.spec", Container: "vllm", ContainerType: inventory.Container,
			Resource: "nvidia.com/gpu", Limit: "1", Hints: []inventory.Hint{{Kind: inventory.HintNodeSelector, Key: "nvidia.com/gpu.product"}}},
			Mapping: rules.Decision{Status: rules.Mappable, Rule: &rules.RuleRef{ID: "nvidia-gpu"}, DeviceClass: "gpu.nvidia.com", Count: 1,
				Selectors: []string{"true"}}, Status: rules.Mappable},
		{File: "job.yaml", Index: 1, Finding: inventory.Finding{Line: 30, Kind: "Job", Name: "prep", PodTemplatePath: "spec.template.spec",
			Container: "init", ContainerType: inventory.InitContainer, Resource: "example.com/fpga", Request: "2"},
			Mapping: rules.Decision{Status: rules.Unmapped, Reason: "no rule maps example.com/fpga"}, Status: rules.Unmapped},
		{File: "ds.yaml", Finding: inventory.Finding{Line: 5, Kind: "DaemonSet", Name: "burn", Container: "b", ContainerType: inventory.Container,
			Resource: "nvidia.com/gpu.shared", Limit: "1", Request: "1"},
			Mapping: rules.Decision{Status: rules.Lossy, DeviceClass: "gpu.nvidia.com", Count: 1, Loss: "time-slicing becomes exclusive"},
			Status:  rules.Lossy, Ignored: "burn-in only"},
	}
	return plan.NewReport(items, inventory.Diagnostics{{Severity: inventory.Warning, File: "chart/t.yaml", Line: 4, Message: "Go template syntax"}}, 4, 7)
}

// TestScanGolden renders every scan format; the coloured table is kept
// with its escapes so a change of style shows in review.
func TestScanGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file    string
		format  report.Format
		profile colorprofile.Profile
		report  plan.Report
	}{
		{"table.golden", "table", colorprofile.NoTTY, scanFixture()},
		{"table-color.golden", "table", colorprofile.ANSI, scanFixture()},
		{"wide.golden", "wide", colorprofile.NoTTY, scanFixture()},
		{"scan.json.golden", "json", colorprofile.ANSI, scanFixture()},
		{"scan.yaml.golden", "yaml", colorprofile.NoTTY, scanFixture()},
		{"empty-table.golden", "table", colorprofile.NoTTY, plan.NewReport(nil, nil, 3, 5)},
		{"empty.json.golden", "json", colorprofile.NoTTY, plan.NewReport(nil, nil, 0, 0)},
	} {
		var b bytes.Buffer
		if err := report.Scan(&b, tc.report, tc.format, report.Style{Profile: tc.profile}); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, "testdata/TestScanGolden/"+tc.file, b.Bytes())
	}
}
