package audit_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

// TestAuditHostServiceAndKarpenter adds, next to the seeded cluster, a
// Bottlerocket node whose NVIDIA device plugin and DRA driver are host
// services (nvidia.com/gpu in allocatable and a ResourceSlice of
// gpu.nvidia.com from the same node, no pod for either), and a Karpenter
// GPU pool with Karpenter's controller pod (IGNORE_DRA_REQUESTS unset). The
// audit reads the conflict from the node and says per pool that claim-only
// pods do not make Karpenter provision.
func TestAuditHostServiceAndKarpenter(t *testing.T) {
	seed(t)
	ctx := context.Background()
	br := harness.NodeObject(harness.NodeSpec{Name: "br-gpu-1",
		Labels:    map[string]string{"eks.amazonaws.com/nodegroup": "br-gpu"},
		Resources: map[string]string{"nvidia.com/gpu": "4"}})
	br.Status.NodeInfo.OSImage = "Bottlerocket OS 1.50.0 (aws-k8s-1.37-nvidia)"
	if _, err := cl.Clientset.CoreV1().Nodes().Create(ctx, br, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cl.Clientset.CoreV1().Nodes().Delete(context.Background(), br.Name, metav1.DeleteOptions{})
	})
	node := "br-gpu-1"
	cl.CreateResourceSlice(t, &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "br-gpu-1-gpu.nvidia.com"},
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.nvidia.com", NodeName: &node,
			Pool:    resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1.Device{{Name: "gpu-0", Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"type": {StringValue: ptr("gpu")}}}}}})

	cl.CreateNode(t, harness.NodeSpec{Name: "kp-gpu-1", Labels: map[string]string{"karpenter.sh/nodepool": "gpu-kp"},
		Resources: map[string]string{"nvidia.com/gpu": "8"}})
	if err := cl.EnsureNamespace(ctx, "karpenter"); err != nil {
		t.Fatal(err)
	}
	// Karpenter's controller, as its chart names it; it never schedules
	// here (nothing matches its node selector), which the audit does not
	// need: it reads the pod spec.
	ctrl := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "karpenter-5d9c7", Namespace: "karpenter",
		Labels: map[string]string{"app.kubernetes.io/name": "karpenter"}},
		Spec: corev1.PodSpec{NodeSelector: map[string]string{"e2e.kubedra.io/nowhere": "true"},
			Containers: []corev1.Container{{Name: "controller", Image: "public.ecr.aws/karpenter/controller:1.14.1",
				Env: []corev1.EnvVar{{Name: "CLUSTER_NAME", Value: "e2e"}}}}}}
	if _, err := cl.Clientset.CoreV1().Pods("karpenter").Create(ctx, ctrl, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		_ = cl.Clientset.CoreV1().Pods("karpenter").Delete(context.Background(), ctrl.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	})

	// -n ml: plugins and Karpenter are cluster-wide facts all the same.
	for _, args := range [][]string{{"-o", "json"}, {"-o", "json", "-n", "ml"}} {
		r, res := audit(t, cl.Env(), nil, args...)
		if res.ExitCode != 2 {
			t.Errorf("audit %v: exit %d, want 2", args, res.ExitCode)
		}
		var conflict, karpenter, hostInfo string
		for _, it := range r.Items {
			switch {
			case it.Check == "node-conflict" && strings.Contains(it.Message, "br-gpu-1"):
				conflict = it.Message
			case it.Check == "node-support" && strings.HasPrefix(it.Message, "pool gpu-kp "):
				karpenter = it.Severity + " " + it.Message
			case it.Check == "node-support" && strings.HasPrefix(it.Message, "pool br-gpu ") && strings.Contains(it.Message, "host service"):
				hostInfo = it.Message
			}
		}
		if !strings.Contains(conflict, "allocatable nvidia.com/gpu: 4 and ResourceSlices of gpu.nvidia.com") || !strings.Contains(conflict, "both are host services") {
			t.Errorf("audit %v: node-conflict on br-gpu-1: %q", args, conflict)
		}
		if !strings.HasPrefix(karpenter, "warning ") || !strings.Contains(karpenter, "Karpenter 1.14.1 (pod karpenter/karpenter-5d9c7) ignores DRA requests (IGNORE_DRA_REQUESTS unset, default true)") {
			t.Errorf("audit %v: Karpenter pool: %q", args, karpenter)
		}
		if hostInfo == "" {
			t.Errorf("audit %v: no host-service note for the Bottlerocket pool", args)
		}
		verdicts := map[string]string{}
		for _, p := range r.Pools {
			verdicts[p.Name] = p.Verdict
		}
		if verdicts["br-gpu"] != "conflicting" {
			t.Errorf("audit %v: br-gpu is %q, want conflicting", args, verdicts["br-gpu"])
		}
	}
}

func ptr[T any](v T) *T { return &v }
