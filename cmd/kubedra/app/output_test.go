package app_test

import (
	"os"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
)

// TestUnknownOutputFormat: -o bogus fails when flags are parsed, before
// any validation or work, and names the command's formats (issue 11).
func TestUnknownOutputFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		// args get as far as the run without -o bogus; bare is the command
		// alone, when that is not args.
		args, bare []string
		formats    report.Formats
	}{
		{args: []string{"scan", "gpu.yaml"}, bare: []string{"scan"}, formats: report.ScanFormats},
		{args: []string{"check", "gpu.yaml"}, bare: []string{"check"}, formats: report.CheckFormats},
		{args: []string{"audit", "--from-dump", "gpu.yaml"}, bare: []string{"audit"}, formats: report.AuditFormats},
		{args: []string{"bundle", "--driver", "nvidia", "--out", "cutover"}, bare: []string{"bundle"}, formats: report.DriverFormats},
		{args: []string{"bundle", "verify", "."}, bare: []string{"bundle", "verify"}, formats: report.DriverFormats},
		{args: []string{"rules", "list"}, formats: report.RuleFormats},
		{args: []string{"rules", "show", "nvidia.com/gpu"}, bare: []string{"rules", "show"}, formats: report.RuleShowFormats},
		{args: []string{"version"}, formats: report.VersionFormats},
	}
	for _, tt := range tests {
		for _, args := range [][]string{tt.args, tt.bare} {
			if args == nil {
				continue
			}
			cmd := tt.bare
			if cmd == nil {
				cmd = tt.args
			}
			args := append(append([]string(nil), args...), "-o", "bogus")
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				t.Parallel()
				wd := app.WriteFiles(t, t.TempDir(), map[string]string{"gpu.yaml": gpuPod})
				code, stdout, stderr := app.Invoke(t, app.Invocation{Args: args, Env: map[string]string{"KUBEDRA_CONFIG": "none"}, Dir: wd})
				want := `unknown output format "bogus": use ` + tt.formats.String() + "\n"
				usage := "Run 'kubedra " + strings.Join(cmd, " ") + " --help' for usage.\n"
				if code != app.ExitError || stdout != "" || !strings.HasPrefix(stderr, "kubedra: ") ||
					!strings.HasSuffix(stderr, want+usage) || strings.Count(stderr, "\n") != 2 {
					t.Errorf("exit %d, want %d\nstdout: %q\nstderr: %q\nwant stderr ending %q", code, app.ExitError, stdout, stderr, want+usage)
				}
				if entries, _ := os.ReadDir(wd); len(entries) != 1 {
					t.Errorf("the run wrote %v", entries)
				}
			})
		}
	}
}

const gpuPod = `apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
  - name: c
    resources: {limits: {nvidia.com/gpu: 1}}
`
