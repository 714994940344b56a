package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/internal/golden"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/rules"
)

func auditFixture(t *testing.T) *audit.Report {
	t.Helper()
	f, err := os.Open("../../../../testdata/cluster/mixed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	facts, err := cluster.ReadDump(f, cluster.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	return audit.Run(facts, audit.Options{Resolver: rules.Default()})
}

// TestAuditGolden renders every format of the mixed cluster's report;
// the ANSI table shows its escape sequences quoted.
func TestAuditGolden(t *testing.T) {
	r := auditFixture(t)
	for _, tc := range []struct {
		name    string
		format  Format
		profile colorprofile.Profile
	}{
		{"table", "table", colorprofile.NoTTY},
		{"table-ansi", "table", colorprofile.ANSI},
		{"json", "json", colorprofile.NoTTY},
		{"markdown", "markdown", colorprofile.NoTTY},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Audit(&b, r, tc.format, Style{Profile: tc.profile}); err != nil {
				t.Fatal(err)
			}
			got := b.String()
			if tc.profile == colorprofile.NoTTY && strings.Contains(got, "\x1b[") {
				t.Error("plain output contains escape sequences")
			}
			if tc.profile == colorprofile.ANSI {
				if !strings.Contains(got, "\x1b[") {
					t.Error("ANSI output has no escape sequences")
				}
				got = strings.ReplaceAll(got, "\x1b", `\x1b`)
			}
			golden.Check(t, "testdata/TestAuditGolden/"+tc.name+".golden", []byte(got))
		})
	}
	var b bytes.Buffer
	if err := Audit(&b, r, "csv", Style{}); err == nil {
		t.Error("csv: want an error")
	}
}
