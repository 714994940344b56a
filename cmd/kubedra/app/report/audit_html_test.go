package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/bundle"
)

// The page is self-contained (nothing to fetch, no script), puts each pool
// in its device-mode column, marks the conflicting one, lists owners and
// the bundle's pools in order.
func TestAuditHTML(t *testing.T) {
	r := &audit.Report{Cluster: audit.Cluster{ServerVersion: "v1.37.2", ResourceAPIVersions: []string{"v1"}},
		Pools: []audit.Pool{
			{Name: "a", Nodes: 2, Plugins: []string{"nvidia"}, Drivers: []string{"nvidia"}, Verdict: audit.Conflicting, Checks: []string{"node-conflict"}},
			{Name: "b", Nodes: 1, Plugins: []string{"nvidia"}, Drivers: []string{}, Verdict: audit.Ready},
			{Name: "c", Nodes: 1, Plugins: []string{}, Drivers: []string{}, Verdict: audit.Ready},
		},
		Items: []audit.Finding{{Check: "node-conflict", Severity: audit.Error, Pool: "a", Message: "pool a: <both>"}},
		Workloads: []audit.WorkloadGroup{{Namespace: "ml", Resource: "nvidia.com/gpu", Status: "mappable",
			Objects: []audit.Ref{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ml", Name: "trainer"}}}},
	}
	man := &bundle.Manifest{Driver: "nvidia", Pools: []bundle.Pool{{Name: "b", Selector: "pool=b"}, {Name: "a", Selector: "pool=a"}}}
	var b bytes.Buffer
	if err := AuditHTML(&b, r, man); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script", "<link", "http://", "https://", "<both>"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, want := range []string{
		`data-mode="both">`, `<div class="pool conflict" data-pool="a" data-verdict="conflicting">`,
		`data-pool="b" data-verdict="ready">`, "Deployment/trainer", "bundle pool 2", "<td>pool 1</td><td>b:", "&lt;both&gt;",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	col := func(pool string) string {
		i := strings.Index(page, `data-pool="`+pool+`"`)
		j := strings.LastIndex(page[:i], "data-mode=")
		return page[j : j+18]
	}
	if !strings.HasPrefix(col("a"), `data-mode="both"`) || !strings.HasPrefix(col("b"), `data-mode="plugin"`) || !strings.HasPrefix(col("c"), `data-mode="none"`) {
		t.Errorf("columns: a %s, b %s, c %s", col("a"), col("b"), col("c"))
	}
}
