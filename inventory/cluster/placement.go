package cluster

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// CanSchedule reports whether a pod with placement p may be placed on node
// n by nodeName, nodeSelector, required node affinity and NoSchedule/NoExecute
// taints (the checks the DaemonSet controller makes, pkg/controller/daemon
// NodeShouldRunDaemonPod). When it may not, reason says why.
func CanSchedule(p Placement, n *corev1.Node) (ok bool, reason string) {
	if p.NodeName != "" && p.NodeName != n.Name {
		return false, "spec.nodeName names another node"
	}
	match, err := nodeaffinity.NewRequiredNodeAffinity(p.NodeSelector, p.Affinity).Match(n)
	if err != nil {
		return false, fmt.Sprintf("invalid node affinity: %v", err)
	}
	if !match {
		return false, "nodeSelector or node affinity does not match"
	}
	taint, untolerated := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, p.Tolerations,
		func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false)
	if untolerated {
		return false, fmt.Sprintf("taint %s=%s:%s not tolerated", taint.Key, taint.Value, taint.Effect)
	}
	return true, ""
}

// daemonTolerations are the tolerations the DaemonSet controller adds to
// every daemon pod (pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations).
var daemonTolerations = []corev1.Toleration{
	{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
	{Key: corev1.TaintNodeDiskPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeMemoryPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodePIDPressure, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
	{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
}

// DaemonSetCanSchedule is CanSchedule for a DaemonSet's pod template: it
// adds the tolerations the DaemonSet controller gives every daemon pod, so a
// cordoned or not-ready node still counts (and, for host-network pods, a
// node whose network is not ready yet).
func DaemonSetCanSchedule(p Placement, n *corev1.Node) (bool, string) {
	p.Tolerations = append(append([]corev1.Toleration(nil), p.Tolerations...), daemonTolerations...)
	if p.HostNetwork {
		p.Tolerations = append(p.Tolerations, corev1.Toleration{Key: corev1.TaintNodeNetworkUnavailable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	}
	return CanSchedule(p, n)
}

// NodesFor returns the names of the nodes a DaemonSet would schedule onto.
func NodesFor(ds DaemonSet, nodes []Node) []string {
	var out []string
	for _, n := range nodes {
		if ok, _ := DaemonSetCanSchedule(ds.Placement, n.Object()); ok {
			out = append(out, n.Name)
		}
	}
	return out
}
