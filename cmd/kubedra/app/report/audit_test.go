package report

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/internal/golden"
	"github.com/kubedra/kubedra/inventory"
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
			if err := Audit(&b, r, nil, tc.format, Style{Profile: tc.profile}); err != nil {
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
	if err := Audit(&b, r, nil, "csv", Style{}); err == nil {
		t.Error("csv: want an error")
	}
}

// TestAuditPartial renders what a read could not see: a type forbidden
// (cluster/unreadable) and types a kubectl dump does not hold
// (cluster/not-in-dump), each a diagnostic with its resource.
func TestAuditPartial(t *testing.T) {
	facts, err := cluster.ReadDump(strings.NewReader(`{"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}]}`),
		cluster.Scope{Resources: []string{"nodes", "pods", "resourcequotas"}})
	if err != nil {
		t.Fatal(err)
	}
	facts.Problems = append(inventory.Diagnostics{cluster.Problem("daemonsets.apps", "forbidden: daemonsets.apps is forbidden")}, facts.Problems...)
	r := audit.Run(facts, audit.Options{Resolver: rules.Default()})
	for _, format := range []Format{"table", "json", "markdown"} {
		t.Run(string(format), func(t *testing.T) {
			var b bytes.Buffer
			if err := Audit(&b, r, nil, format, Style{Profile: colorprofile.NoTTY}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/TestAuditPartial/"+string(format)+".golden", b.Bytes())
		})
	}
}
