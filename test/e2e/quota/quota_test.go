package quota_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

// The quota and claim tests need the resourcequota controller: quota
// admission uses the status.hard it writes, and status.used is its count.
func TestMain(m *testing.M) {
	opts := harness.Options{Controllers: append(append([]string{}, harness.DefaultControllers...), "resourcequota-controller")}
	os.Exit(harness.Main(m, opts, &cluster))
}

// manifests is a team's namespace as a GitOps repo holds it: a GPU quota of
// 8 and one GPU pod (created nine times, under nine names).
const manifests = `apiVersion: v1
kind: ResourceQuota
metadata:
  name: gpu-budget
spec:
  hard:
    # the team's GPU budget
    requests.nvidia.com/gpu: "8"
---
apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04
    resources:
      limits:
        nvidia.com/gpu: 1
`

// migrate runs the real binary as a stream (`kubedra migrate -`) for target
// and returns the objects it wrote.
func migrate(t *testing.T, target, in string) []*unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := harness.RunKubedra(ctx, nil, []byte(in), "migrate", "--target-version", target, "-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubedra migrate --target-version %s -: exit %d\n%s", target, res.ExitCode, res.Stderr)
	if res.ExitCode != 0 {
		t.Fatalf("migrate exited %d", res.ExitCode)
	}
	objs, err := harness.DecodeYAML(res.Stdout)
	if err != nil {
		t.Fatalf("migrate output: %v\n%s", err, res.Stdout)
	}
	return objs
}

func byKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// createQuota creates the quota and waits until the resourcequota
// controller has written its status (admission needs status.hard).
func createQuota(t *testing.T, ns string, q *unstructured.Unstructured) {
	t.Helper()
	ctx := context.Background()
	if _, err := cluster.Create(ctx, q, harness.CreateOptions{Namespace: ns}); err != nil {
		t.Fatalf("creating quota: %v", err)
	}
	err := harness.Poll(ctx, harness.DefaultWait, "quota status.hard", func(ctx context.Context) (bool, string, error) {
		got, err := cluster.Clientset.CoreV1().ResourceQuotas(ns).Get(ctx, q.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, "", err
		}
		return len(got.Status.Hard) == len(got.Spec.Hard), fmt.Sprint(got.Status.Hard), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// createPods creates the pod nine times (train-1 ... train-9) and returns
// the errors of the creations, nil for those admitted.
func createPods(t *testing.T, ns string, pod *unstructured.Unstructured) []error {
	t.Helper()
	var errs []error
	for i := 1; i <= 9; i++ {
		p := pod.DeepCopy()
		p.SetName(fmt.Sprintf("train-%d", i))
		_, err := cluster.Create(context.Background(), p, harness.CreateOptions{Namespace: ns})
		errs = append(errs, err)
	}
	return errs
}

func used(t *testing.T, ns, name, key string) int64 {
	t.Helper()
	q, err := cluster.Clientset.CoreV1().ResourceQuotas(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u := q.Status.Used[corev1.ResourceName(key)]
	return u.Value()
}

func TestQuotaDevicePlugin(t *testing.T) {
	ns := cluster.NewNamespace(t)
	objs, err := harness.DecodeYAML([]byte(manifests))
	if err != nil {
		t.Fatal(err)
	}
	createQuota(t, ns, byKind(objs, "ResourceQuota")[0])
	errs := createPods(t, ns, byKind(objs, "Pod")[0])
	for i, err := range errs[:8] {
		if err != nil {
			t.Errorf("device-plugin pod %d rejected under a quota of 8: %v", i+1, err)
		}
	}
	if err := errs[8]; err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota") {
		t.Errorf("the ninth device-plugin pod: want a rejection for exceeded quota, got %v", err)
	} else {
		t.Logf("ninth device-plugin pod rejected: %v", err)
	}
}

// claimsRun creates the migrated objects (template, quotas) and nine pods,
// waits until the resourceclaim controller has made the claims it can, and
// returns the number of claims, and the FailedResourceClaimCreation events.
func claimsRun(t *testing.T, ns string, objs []*unstructured.Unstructured) (int, []string) {
	t.Helper()
	ctx := context.Background()
	cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
	for _, q := range byKind(objs, "ResourceQuota") {
		createQuota(t, ns, q)
	}
	tmpls := byKind(objs, "ResourceClaimTemplate")
	if len(tmpls) != 1 {
		t.Fatalf("migrate wrote %d ResourceClaimTemplates, want 1", len(tmpls))
	}
	if _, err := cluster.Create(ctx, tmpls[0], harness.CreateOptions{Namespace: ns}); err != nil {
		t.Fatalf("creating the template: %v", err)
	}
	pods := byKind(objs, "Pod")
	if len(pods) != 1 {
		t.Fatalf("migrate wrote %d pods, want 1", len(pods))
	}
	for i, err := range createPods(t, ns, pods[0]) {
		if err != nil {
			t.Fatalf("migrated pod %d rejected (it requests no extended resource): %v", i+1, err)
		}
	}
	var events []string
	claims := 0
	err := harness.Poll(ctx, harness.DefaultWait, "8 claims and a rejected ninth", func(ctx context.Context) (bool, string, error) {
		cl, err := cluster.Clientset.ResourceV1().ResourceClaims(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, "", err
		}
		claims = len(cl.Items)
		ev, err := cluster.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=FailedResourceClaimCreation"})
		if err != nil {
			return false, "", err
		}
		events = events[:0]
		for _, e := range ev.Items {
			events = append(events, e.InvolvedObject.Name+": "+e.Message)
		}
		seen := fmt.Sprintf("%d claims, %d failed creations", claims, len(events))
		return claims >= 9 || claims == 8 && len(events) > 0, seen, nil
	})
	if err != nil && claims < 9 {
		t.Fatal(err)
	}
	return claims, events
}

func TestQuotaMigrated(t *testing.T) {
	objs := migrate(t, "1.35", manifests)
	q := byKind(objs, "ResourceQuota")
	if len(q) != 1 {
		t.Fatalf("migrate wrote %d quotas", len(q))
	}
	hard, _, _ := unstructured.NestedStringMap(q[0].Object, "spec", "hard")
	const key = "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"
	if hard[key] != "8" || hard["requests.nvidia.com/gpu"] != "8" {
		t.Fatalf("migrated quota: want %s: 8 beside requests.nvidia.com/gpu: 8, got %v", key, hard)
	}

	t.Run("original quota does not count claims", func(t *testing.T) {
		// The cluster's class declares nvidia.com/gpu, so give the claims a
		// class that does not: the original quota alone then lets all
		// nine claims through, which is what target 1.35 means.
		ns := cluster.NewNamespace(t)
		cluster.EnsureDeviceClasses(t, harness.DeviceClasses()...)
		noExt := harness.DeviceClasses()[0].DeepCopy()
		noExt.Name = "gpu-noext.nvidia.com"
		noExt.Spec.ExtendedResourceName = nil
		cluster.EnsureDeviceClasses(t, noExt)
		orig, _ := harness.DecodeYAML([]byte(manifests))
		withClass := retarget(t, objs, noExt.Name)
		claims, events := claimsRun(t, ns, append(byKind(orig, "ResourceQuota"), append(byKind(withClass, "ResourceClaimTemplate"), byKind(withClass, "Pod")...)...))
		if claims != 9 || len(events) != 0 {
			t.Fatalf("the device-plugin quota alone: want 9 claims and no rejection, got %d claims, rejections %v", claims, events)
		}
	})

	t.Run("migrated quota", func(t *testing.T) {
		ns := cluster.NewNamespace(t)
		claims, events := claimsRun(t, ns, objs)
		if claims != 8 {
			t.Fatalf("want 8 claims under the migrated quota, got %d (rejections %v)", claims, events)
		}
		if len(events) == 0 || !strings.Contains(strings.Join(events, "\n"), "exceeded quota") {
			t.Fatalf("want the ninth claim rejected for exceeded quota, got events %v", events)
		}
		t.Logf("ninth claim rejected: %s", events[0])
		if n := used(t, ns, "gpu-budget", key); n != 8 {
			t.Errorf("status.used[%s] = %d, want 8", key, n)
		}
	})
}

// retarget returns a copy of objs whose claim templates ask for class.
func retarget(t *testing.T, objs []*unstructured.Unstructured, class string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, o := range objs {
		o = o.DeepCopy()
		if o.GetKind() == "ResourceClaimTemplate" {
			reqs, _, _ := unstructured.NestedSlice(o.Object, "spec", "spec", "devices", "requests")
			for _, r := range reqs {
				r.(map[string]any)["exactly"].(map[string]any)["deviceClassName"] = class
			}
			if err := unstructured.SetNestedSlice(o.Object, reqs, "spec", "spec", "devices", "requests"); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, o)
	}
	return out
}

func TestQuotaKept(t *testing.T) {
	objs := migrate(t, "1.37", manifests)
	q := byKind(objs, "ResourceQuota")
	hard, _, _ := unstructured.NestedStringMap(q[0].Object, "spec", "hard")
	if len(hard) != 1 || hard["requests.nvidia.com/gpu"] != "8" {
		t.Fatalf("target 1.37: want the quota kept as requests.nvidia.com/gpu: 8, got %v", hard)
	}
	ns := cluster.NewNamespace(t)
	claims, events := claimsRun(t, ns, objs)
	if claims != 8 || !strings.Contains(strings.Join(events, "\n"), "exceeded quota") {
		t.Fatalf("want 8 claims and the ninth rejected under requests.nvidia.com/gpu, got %d claims, events %v", claims, events)
	}
	if n := used(t, ns, "gpu-budget", "requests.nvidia.com/gpu"); n != 8 {
		t.Errorf("status.used[requests.nvidia.com/gpu] = %d, want 8 (the claims of class gpu.nvidia.com)", n)
	}
	t.Logf("claims counted under the kept key: status.used[requests.nvidia.com/gpu] = 8; ninth: %s", events[0])
}

const limitRanges = `apiVersion: v1
kind: LimitRange
metadata:
  name: gpu-defaults
spec:
  limits:
  - type: Container
    default:
      cpu: "2"
      nvidia.com/gpu: "1"
---
apiVersion: v1
kind: LimitRange
metadata:
  name: gpu-max
spec:
  limits:
  - type: Container
    max:
      nvidia.com/gpu: "4"
---
apiVersion: v1
kind: LimitRange
metadata:
  name: gpu-pod-max
spec:
  limits:
  - type: Pod
    max:
      nvidia.com/gpu: "8"
---
apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.0-base-ubuntu22.04
    resources:
      limits:
        nvidia.com/gpu: 1
`

func TestLimitRange(t *testing.T) {
	ctx := context.Background()
	orig, err := harness.DecodeYAML([]byte(limitRanges))
	if err != nil {
		t.Fatal(err)
	}
	objs := migrate(t, "1.37", limitRanges)
	pod := byKind(objs, "Pod")[0]
	tmpl := byKind(objs, "ResourceClaimTemplate")[0]
	gpu := corev1.ResourceName("nvidia.com/gpu")

	// create makes the template and the pod under the LimitRange lr.
	create := func(t *testing.T, lr *unstructured.Unstructured) (*corev1.Pod, error) {
		ns := cluster.NewNamespace(t)
		if _, err := cluster.Create(ctx, lr, harness.CreateOptions{Namespace: ns}); err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.Create(ctx, tmpl, harness.CreateOptions{Namespace: ns}); err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.Create(ctx, pod, harness.CreateOptions{Namespace: ns}); err != nil {
			return nil, err
		}
		return cluster.Clientset.CoreV1().Pods(ns).Get(ctx, pod.GetName(), metav1.GetOptions{})
	}
	find := func(objs []*unstructured.Unstructured, name string) *unstructured.Unstructured {
		for _, o := range byKind(objs, "LimitRange") {
			if o.GetName() == name {
				return o
			}
		}
		t.Fatalf("no LimitRange %s", name)
		return nil
	}
	t.Run("default injects the device-plugin request", func(t *testing.T) {
		p, err := create(t, find(orig, "gpu-defaults"))
		if err != nil {
			t.Fatal(err)
		}
		q, ok := p.Spec.Containers[0].Resources.Limits[gpu]
		if !ok || !q.Equal(resource.MustParse("1")) {
			t.Fatalf("want LimitRanger to set nvidia.com/gpu: 1 on the migrated container, got limits %v", p.Spec.Containers[0].Resources.Limits)
		}
		t.Logf("LimitRanger injected nvidia.com/gpu into the migrated container: limits %v, requests %v, claims %v",
			p.Spec.Containers[0].Resources.Limits, p.Spec.Containers[0].Resources.Requests, p.Spec.Containers[0].Resources.Claims)
	})
	t.Run("container max is defaulted into the migrated container", func(t *testing.T) {
		// The API server defaults a Container item's default to its max.
		p, err := create(t, find(orig, "gpu-max"))
		if err != nil {
			t.Fatal(err)
		}
		q, ok := p.Spec.Containers[0].Resources.Limits[gpu]
		if !ok || !q.Equal(resource.MustParse("4")) {
			t.Fatalf("want nvidia.com/gpu: 4 (the max, defaulted) on the migrated container, got limits %v", p.Spec.Containers[0].Resources.Limits)
		}
		t.Logf("a Container max of 4 put nvidia.com/gpu: %s on the migrated container", q.String())
	})
	t.Run("pod max rejects the migrated pod", func(t *testing.T) {
		_, err := create(t, find(orig, "gpu-pod-max"))
		if err == nil || !strings.Contains(err.Error(), "nvidia.com/gpu") {
			t.Fatalf("want the migrated pod rejected by the Pod max on nvidia.com/gpu, got %v", err)
		}
		t.Logf("rejected: %v", err)
	})
	t.Run("migrated LimitRanges", func(t *testing.T) {
		for _, name := range []string{"gpu-defaults", "gpu-max", "gpu-pod-max"} {
			p, err := create(t, find(objs, name))
			if err != nil {
				t.Fatalf("%s as migrated: %v", name, err)
			}
			if _, ok := p.Spec.Containers[0].Resources.Limits[gpu]; ok {
				t.Errorf("%s as migrated still injects nvidia.com/gpu: %v", name, p.Spec.Containers[0].Resources.Limits)
			}
			if _, ok := p.Spec.Containers[0].Resources.Requests[gpu]; ok {
				t.Errorf("%s as migrated still injects a nvidia.com/gpu request", name)
			}
		}
		hard, _, _ := unstructured.NestedMap(find(objs, "gpu-defaults").Object, "spec")
		t.Logf("gpu-defaults as migrated: %v", hard)
	})
}
