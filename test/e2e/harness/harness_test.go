package harness_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }

func TestPollTimeoutSaysWhatWasAwaited(t *testing.T) {
	err := harness.Poll(context.Background(), 300*time.Millisecond, "the answer", func(context.Context) (bool, string, error) {
		return false, "41", nil
	})
	if err == nil || !strings.Contains(err.Error(), "waiting for the answer") || !strings.Contains(err.Error(), "last seen: 41") {
		t.Fatalf("Poll error = %v, want a timeout naming what was awaited and the last observation", err)
	}
}

func TestCluster(t *testing.T) {
	if !strings.HasPrefix(cluster.APIServerURL, "https://127.0.0.1:") {
		t.Errorf("APIServerURL = %s, want loopback only", cluster.APIServerURL)
	}
	out, err := cluster.RunKubectl(context.Background(), "version", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if want := `"gitVersion": "` + cluster.Version.Kubernetes + `"`; !strings.Contains(string(out), want) {
		t.Errorf("kubectl version: want %s in\n%s", want, out)
	}
}

// TestDevicePluginAndDRA checks the two worlds the scheduling suite compares:
// extended resources in node status, and DRA devices in a ResourceSlice.
func TestDevicePluginAndDRA(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Two sandboxes: on 1.37 the gpu.nvidia.com class maps nvidia.com/gpu
	// (KEP-5004), so a DRA node would also serve the plugin-style pods.
	sb, dra := cluster.NewSandbox(t), cluster.NewSandbox(t)
	sb.Node(harness.NodeSpec{Name: "plugin", Resources: map[string]string{"nvidia.com/gpu": "2"}})
	dra.Node(harness.NodeSpec{Name: "dra"})
	dra.Slice(harness.NvidiaDriver, "dra",
		harness.NvidiaGPU{Minor: 0, ProductName: "NVIDIA A100-SXM4-80GB"}.Device(),
		harness.NvidiaGPU{Minor: 1, ProductName: "NVIDIA H100 80GB HBM3", Architecture: "Hopper"}.Device())
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)

	objs, err := harness.DecodeYAML([]byte(`
apiVersion: v1
kind: Pod
metadata: {name: plugin-1}
spec:
  containers:
  - {name: app, image: registry.invalid/app:1, resources: {limits: {nvidia.com/gpu: 1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: plugin-2}
spec:
  containers:
  - {name: app, image: registry.invalid/app:1, resources: {limits: {nvidia.com/gpu: 2}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: h100}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H100 80GB HBM3"'}
---
apiVersion: v1
kind: Pod
metadata: {name: dra-1}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: h100}]
  containers:
  - {name: app, image: registry.invalid/app:1, resources: {claims: [{name: gpu}]}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range objs {
		box := sb
		if i >= 2 {
			box = dra
		}
		if err := box.Confine(o); err != nil {
			t.Fatal(err)
		}
	}
	if err := cluster.CreateAll(ctx, objs[:1], harness.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := cluster.WaitPodScheduled(ctx, sb.Namespace, "plugin-1", harness.DefaultWait)
	if err != nil {
		t.Fatal(err)
	}
	if got := sb.Logical(p.Spec.NodeName); got != "plugin" {
		t.Errorf("plugin-1 on node %q, want plugin (the only node advertising nvidia.com/gpu)", got)
	}
	if err := cluster.CreateAll(ctx, objs[1:], harness.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.WaitPodUnschedulable(ctx, sb.Namespace, "plugin-2", harness.DefaultWait); err != nil {
		t.Errorf("plugin-2 wants 2 GPUs where 1 is left: %v", err)
	}
	p, err = cluster.WaitPodScheduled(ctx, dra.Namespace, "dra-1", harness.DefaultWait)
	if err != nil {
		t.Fatal(err)
	}
	if got := dra.Logical(p.Spec.NodeName); got != "dra" {
		t.Errorf("dra-1 on node %q, want dra (the only node with a ResourceSlice)", got)
	}
	claims, err := cluster.PodClaims(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	devs, err := cluster.AllocatedDevices(ctx, claims["gpu"])
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 1 || devs[0].Attributes["gpu.nvidia.com/productName"] != "NVIDIA H100 80GB HBM3" || devs[0].Device != "gpu-1" {
		t.Errorf("allocated %+v, want gpu-1 (the H100)", devs)
	}
	for _, ns := range []string{sb.Namespace, dra.Namespace} {
		if err := cluster.ForceDeletePods(ctx, ns); err != nil {
			t.Fatal(err)
		}
	}
}

func TestConfine(t *testing.T) {
	sb := &harness.Sandbox{ID: "sb-x", Namespace: "ns"}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d"},
		"spec":     map[string]any{"template": map[string]any{"spec": map[string]any{"nodeSelector": map[string]any{"a": "b"}}}}}}
	if err := sb.Confine(u); err != nil {
		t.Fatal(err)
	}
	sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "template", "spec", "nodeSelector")
	if sel["a"] != "b" || sel[harness.SandboxKey] != "sb-x" || u.GetNamespace() != "ns" {
		t.Errorf("Confine: nodeSelector %v namespace %q", sel, u.GetNamespace())
	}
	tol, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "tolerations")
	if len(tol) != 1 || tol[0].(map[string]any)["effect"] != string(corev1.TaintEffectNoSchedule) {
		t.Errorf("Confine: tolerations %v", tol)
	}
}

func TestResolveVersion(t *testing.T) {
	for _, tt := range []struct {
		in, wantMinor, wantErr string
	}{
		{in: "1.37", wantMinor: "1.37"},
		{in: "1.37.2", wantMinor: "1.37"},
		{in: "v1.34.x", wantMinor: "1.34"},
		{in: "1.37.1", wantErr: "pins v1.37.2"},
		{in: "1.30", wantErr: "no wrapper module for Kubernetes 1.30"},
		{in: "latest", wantErr: "want a Kubernetes version like"},
	} {
		v, err := harness.ResolveVersion(tt.in)
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ResolveVersion(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
		case err != nil:
			t.Errorf("ResolveVersion(%q): %v", tt.in, err)
		case v.Minor != tt.wantMinor || v.TargetVersion() != tt.wantMinor || !strings.HasPrefix(v.Kubernetes, "v"+tt.wantMinor+"."):
			t.Errorf("ResolveVersion(%q) = %+v, want minor %s", tt.in, v, tt.wantMinor)
		}
	}
}
