package bundle

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// daemonTolerations are the tolerations the DaemonSet controller adds to every
// daemon pod (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations), so
// cordoned, not-ready and pressured nodes still run daemons.
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// CanRun reports whether the DaemonSet controller would run a pod with spec
// on node, and if not, why. It follows the controller's predicates: node
// name, required node affinity (which includes nodeSelector) and taints with
// NoSchedule or NoExecute effect not tolerated by the pod plus the daemon
// tolerations.
func CanRun(spec *corev1.PodSpec, node *corev1.Node) (bool, string) {
	if spec.NodeName != "" && spec.NodeName != node.Name {
		return false, "spec.nodeName names another node"
	}
	pod := &corev1.Pod{Spec: *spec}
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	if err != nil {
		return false, fmt.Sprintf("invalid node affinity: %v", err)
	}
	if !ok {
		return false, "node selector or required node affinity does not match"
	}
	tol := append(append([]corev1.Toleration{}, spec.Tolerations...), daemonTolerations...)
	if spec.HostNetwork {
		tol = append(tol, corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), node.Spec.Taints, tol, func(t *corev1.Taint) bool {
		return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
	}, false)
	if untolerated {
		return false, fmt.Sprintf("taint %s=%s:%s is not tolerated", taint.Key, taint.Value, taint.Effect)
	}
	return true, ""
}
