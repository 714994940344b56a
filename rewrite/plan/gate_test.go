package plan_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// TestFails: what each gate fails on.
func TestFails(t *testing.T) {
	t.Parallel()
	item := func(s rules.Status, ignored string, invalid bool) plan.Item {
		return plan.Item{Status: s, Ignored: ignored, Finding: inventory.Finding{IgnoreInvalid: invalid}}
	}
	govern := func(breaks bool) plan.Item {
		it := item(rules.Governance, "", false)
		it.Mapping.Govern = &rules.Govern{What: "quota", Breaks: breaks}
		return it
	}
	tests := []struct {
		name string
		it   plan.Item
		want map[string]bool // gate -> fails
	}{
		{"mappable", item(rules.Mappable, "", false), map[string]bool{"any": true, "lossy": false, "unmapped": false}},
		{"lossy", item(rules.Lossy, "", false), map[string]bool{"any": true, "lossy": true, "unmapped": false}},
		{"unmapped", item(rules.Unmapped, "", false), map[string]bool{"any": true, "lossy": true, "unmapped": true}},
		{"dra-backed", item(rules.DRABacked, "", false), map[string]bool{"any": false, "lossy": false, "unmapped": false}},
		{"a request of zero", item(rules.NoDevice, "", false), map[string]bool{"any": false, "lossy": false, "unmapped": false}},
		{"ignored", item(rules.Unmapped, "why", false), map[string]bool{"any": false, "lossy": false, "unmapped": false}},
		{"ignore without reason", item(rules.DRABacked, "", true), map[string]bool{"any": true, "lossy": true, "unmapped": true}},
		{"governance that stops counting", govern(true), map[string]bool{"any": true, "lossy": false, "unmapped": false}},
		{"governance that keeps counting", govern(false), map[string]bool{"any": false, "lossy": false, "unmapped": false}},
	}
	for _, tt := range tests {
		got := map[string]bool{}
		for gate := range tt.want {
			got[gate] = plan.Gate(gate).Fails(tt.it)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}
