package simulate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

// simulate --kubeconfig judges the fleet as it is (issue 25): a node that
// only publishes ResourceSlices (no instance type, so no built-in shape
// could stand in) runs migrated pods after, read from the cluster itself,
// and a node on the device plugin moves to DRA by its shape. Read-only and
// scoped: the read lists nodes, ResourceSlices and DeviceClasses.
func TestSimulateReadsTheClustersSlices(t *testing.T) {
	if _, err := harness.KubedraBin(); err != nil {
		t.Fatal(err)
	}
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
	const mark = "e2e.kubedra.io/live-simulate"
	cluster.CreateNode(t, harness.NodeSpec{Name: "live-plugin", Labels: map[string]string{mark: "true", "node.kubernetes.io/instance-type": "p5.48xlarge"},
		Resources: map[string]string{"nvidia.com/gpu": "8"}})
	cluster.CreateNode(t, harness.NodeSpec{Name: "live-dra", Labels: map[string]string{mark: "true"}})
	var devices []resourcev1.Device
	for i := range 8 {
		devices = append(devices, resourcev1.Device{Name: fmt.Sprintf("gpu-%d", i),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"type": {StringValue: new("gpu")}}})
	}
	cluster.CreateResourceSlice(t, &resourcev1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "live-dra-gpu"},
		Spec: resourcev1.ResourceSliceSpec{Driver: "gpu.nvidia.com", NodeName: new("live-dra"),
			Pool: resourcev1.ResourcePool{Name: "live-dra", Generation: 1, ResourceSliceCount: 1}, Devices: devices}})

	dir := t.TempDir()
	manifests := filepath.Join(dir, "app.yaml")
	app := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: live, namespace: default}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: live}}\n  template:\n    metadata: {labels: {app: live}}\n    spec:\n      nodeSelector: {" + mark + ": \"true\"}\n      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]\n"
	if err := os.WriteFile(manifests, []byte(app), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := harness.RunKubedra(t.Context(), cluster.Env(), nil, "simulate", "--target-version", cluster.Version.TargetVersion(), "-o", "json", manifests)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("simulate exited %d\n%s", res.ExitCode, res.Stderr)
	}
	var rep report
	if err := json.Unmarshal(res.Stdout, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Workloads) != 1 {
		t.Fatalf("workloads: %+v", rep.Workloads)
	}
	w := rep.Workloads[0]
	// Before: the plugin node, and the DRA node too: the cluster's own
	// DeviceClass gpu.nvidia.com declares extendedResourceName
	// nvidia.com/gpu (KEP-5004), so its slices serve the unmigrated
	// request. After: the plugin node by its shape, the DRA node by its
	// slices. Without the cluster's slices and classes simulate said 1 and
	// 1 (the DRA node had no devices in either world).
	if w.Before.Pods != 2 || w.After.Pods != 2 {
		t.Errorf("before %d pods, after %d (reasons %q), want 2 and 2", w.Before.Pods, w.After.Pods, w.After.Reasons)
	}
}
