package bundle

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestCanRun(t *testing.T) {
	node := func(labels map[string]string, taints ...corev1.Taint) *corev1.Node {
		n := &corev1.Node{}
		n.Name, n.Labels, n.Spec.Taints = "n1", labels, taints
		return n
	}
	notDRA := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: exclude(nil)}}
	gpuTaint := corev1.Taint{Key: "nvidia.com/gpu", Effect: corev1.TaintEffectNoSchedule}
	tests := []struct {
		name string
		spec corev1.PodSpec
		node *corev1.Node
		want bool
	}{
		{name: "no constraints", node: node(nil), want: true},
		{name: "selector matches", spec: corev1.PodSpec{NodeSelector: map[string]string{ModeLabel: ModeDRA}}, node: node(map[string]string{ModeLabel: ModeDRA}), want: true},
		{name: "selector misses", spec: corev1.PodSpec{NodeSelector: map[string]string{ModeLabel: ModeDRA}}, node: node(nil)},
		{name: "NotIn keeps unlabelled", spec: corev1.PodSpec{Affinity: notDRA}, node: node(nil), want: true},
		{name: "NotIn excludes labelled", spec: corev1.PodSpec{Affinity: notDRA}, node: node(map[string]string{ModeLabel: ModeDRA})},
		{name: "untolerated taint", node: node(nil, gpuTaint)},
		{name: "tolerated taint", spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}}}, node: node(nil, gpuTaint), want: true},
		{name: "PreferNoSchedule ignored", node: node(nil, corev1.Taint{Key: "x", Effect: corev1.TaintEffectPreferNoSchedule}), want: true},
		{name: "cordoned node runs daemons", node: node(nil, corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}), want: true},
		{name: "network-unavailable needs hostNetwork", node: node(nil, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule})},
		{name: "hostNetwork tolerates network-unavailable", spec: corev1.PodSpec{HostNetwork: true}, node: node(nil, corev1.Taint{Key: corev1.TaintNodeNetworkUnavailable, Effect: corev1.TaintEffectNoSchedule}), want: true},
		{name: "other nodeName", spec: corev1.PodSpec{NodeName: "n2"}, node: node(nil)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got, why := CanRun(&tt.spec, tt.node); got != tt.want {
				t.Errorf("CanRun = %v (%s), want %v", got, why, tt.want)
			}
		})
	}
}
