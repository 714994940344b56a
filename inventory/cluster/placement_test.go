package cluster_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// TestDaemonSetCanSchedule: the DaemonSet controller's predicates, which
// both audit (daemonset-overlap) and bundle (exclusion, verify) rely on.
func TestDaemonSetCanSchedule(t *testing.T) {
	node := func(taints ...corev1.Taint) *corev1.Node {
		n := &corev1.Node{}
		n.Name, n.Spec.Taints = "n1", taints
		return n
	}
	gpuTaint := corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	netDown := corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name string
		spec corev1.PodSpec
		node *corev1.Node
		want bool
	}{
		{name: "no constraints", node: node(), want: true},
		{name: "untolerated taint", node: node(gpuTaint)},
		{name: "tolerated taint", spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}}, node: node(gpuTaint), want: true},
		{name: "PreferNoSchedule ignored", node: node(corev1.Taint{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}), want: true},
		{name: "cordoned node runs daemons", node: node(corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}), want: true},
		{name: "not-ready node runs daemons", node: node(corev1.Taint{Key: corev1.TaintNodeNotReady, Effect: corev1.TaintEffectNoExecute}), want: true},
		{name: "network-unavailable needs hostNetwork", node: node(netDown)},
		{name: "hostNetwork tolerates network-unavailable", spec: corev1.PodSpec{HostNetwork: true}, node: node(netDown), want: true},
		{name: "nodeName of this node", spec: corev1.PodSpec{NodeName: "n1"}, node: node(), want: true},
		{name: "nodeName of another node", spec: corev1.PodSpec{NodeName: "n2"}, node: node()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, why := cluster.DaemonSetCanSchedule(cluster.PlacementOf(&tt.spec), tt.node); got != tt.want {
				t.Errorf("DaemonSetCanSchedule = %v (%s), want %v", got, why, tt.want)
			}
		})
	}
}
