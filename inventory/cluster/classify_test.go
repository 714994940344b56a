package cluster_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// Node allocatable and container requests keep extended resources only,
// with detect's test; quota keys keep the device keys.
func TestDeviceResourceNames(t *testing.T) {
	c := cluster.NewCollector()
	n := &corev1.Node{}
	n.Name = "n1"
	n.Status.Allocatable = corev1.ResourceList{}
	for _, name := range []string{"cpu", "memory", "hugepages-2Mi", "pods", "kubernetes.io/batteries", "nvidia.com/gpu",
		"deviceclass.resource.kubernetes.io/gpu", "example.com/gpu"} {
		n.Status.Allocatable[corev1.ResourceName(name)] = resource.MustParse("1")
	}
	c.AddNode(n)
	got := slices.Sorted(maps.Keys(c.Facts().Nodes[0].Allocatable))
	want := []string{"deviceclass.resource.kubernetes.io/gpu", "example.com/gpu", "nvidia.com/gpu"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("allocatable extended resources (-want +got):\n%s", d)
	}

	keys := map[string]bool{
		"requests.nvidia.com/gpu":                       true,
		"requests.deviceclass.resource.kubernetes.io/g": true,
		"gpu.deviceclass.resource.k8s.io/devices":       true,
		"count/resourceclaims.resource.k8s.io":          true,
		"resourceclaims":                                true,
		"requests.cpu":                                  false,
		"requests.memory":                               false,
		"requests.hugepages-2Mi":                        false,
		"hugepages-2Mi":                                 false,
		"nvidia.com/gpu":                                false, // only requests.<name> is a quota key
		"requests.requests.nvidia.com/gpu":              false,
		"requests.kubernetes.io/batteries":              false,
		"requests.example.com/a/b":                      false,
	}
	for k, want := range keys {
		if got := cluster.IsDeviceQuotaKey(k); got != want {
			t.Errorf("IsDeviceQuotaKey(%q) = %v, want %v", k, got, want)
		}
	}
}

// Pools are named by the first of PoolLabels a node carries, else by its
// instance type.
func TestPoolOfNode(t *testing.T) {
	tests := []struct {
		labels    map[string]string
		pool, key string
	}{
		{map[string]string{"eks.amazonaws.com/nodegroup": "ng", "karpenter.sh/nodepool": "kp"}, "ng", "eks.amazonaws.com/nodegroup"},
		{map[string]string{"kubernetes.azure.com/agentpool": "ap", "karpenter.sh/nodepool": "kp"}, "kp", "karpenter.sh/nodepool"},
		{map[string]string{"cloud.google.com/gke-nodepool": "gp", cluster.InstanceTypeLabel: "n2"}, "gp", "cloud.google.com/gke-nodepool"},
		{map[string]string{cluster.InstanceTypeLabel: "m7i.2xlarge"}, "m7i.2xlarge", cluster.InstanceTypeLabel},
		{map[string]string{"eks.amazonaws.com/nodegroup": ""}, "", ""},
	}
	for _, tt := range tests {
		c := cluster.NewCollector()
		n := &corev1.Node{}
		n.Name, n.Labels = "n", tt.labels
		c.AddNode(n)
		got := c.Facts().Nodes[0]
		if got.Pool != tt.pool || got.PoolLabel != tt.key {
			t.Errorf("%v: pool %q from %q, want %q from %q", tt.labels, got.Pool, got.PoolLabel, tt.pool, tt.key)
		}
	}
}
