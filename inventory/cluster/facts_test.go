package cluster_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// Allocatable quantities count as numbers; one that does not parse is
// left out.
func TestAllocatableCounts(t *testing.T) {
	n := cluster.Node{Allocatable: map[string]string{"nvidia.com/gpu": "8", "example.com/mem": "2Ki", "example.com/bad": "x1"}}
	want := map[string]int64{"nvidia.com/gpu": 8, "example.com/mem": 2048}
	if d := cmp.Diff(want, n.AllocatableCounts()); d != "" {
		t.Errorf("counts (-want +got):\n%s", d)
	}
}
