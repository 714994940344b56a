package audit_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestAuditScale seeds the control plane with KUBEDRA_SCALE_NODES nodes
// (default 2,000; one in ten advertises nvidia.com/gpu, one in twenty
// publishes a ResourceSlice) and KUBEDRA_SCALE_PODS pods (default 50,000,
// bound by nodeName, one in ten requesting nvidia.com/gpu), then times
// `kubedra audit -o json` against `kubectl get nodes,pods -A -o json` in the
// same run, alternating, three rounds each, and reports the ratio of the
// medians and both peak RSS. It fails when the ratio exceeds 1.5.
//
// Run with `make bench-e2e` (KUBEDRA_SCALE=1); skipped otherwise.
func TestAuditScale(t *testing.T) {
	if os.Getenv("KUBEDRA_SCALE") == "" {
		t.Skip("set KUBEDRA_SCALE=1 (make bench-e2e) to run the 2,000-node / 50,000-pod benchmark")
	}
	nNodes, nPods := envInt("KUBEDRA_SCALE_NODES", 2000), envInt("KUBEDRA_SCALE_PODS", 50000)
	ctx := context.Background()
	cfg := *cl.RESTConfig
	cfg.QPS, cfg.Burst = 2000, 4000
	client, err := kubernetes.NewForConfig(&cfg)
	if err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	parallel(t, nNodes, 32, func(i int) error {
		spec := harness.NodeSpec{Name: fmt.Sprintf("scale-%04d", i),
			Labels: map[string]string{"eks.amazonaws.com/nodegroup": fmt.Sprintf("pool-%02d", i%20)}}
		if i%10 == 0 {
			spec.Resources = map[string]string{"nvidia.com/gpu": "8"}
		}
		_, err := client.CoreV1().Nodes().Create(ctx, harness.NodeObject(spec), metav1.CreateOptions{})
		return err
	})
	parallel(t, nNodes/20, 16, func(i int) error {
		node := fmt.Sprintf("scale-%04d", i*20+5)
		s := harness.Slice("gpu.nvidia.com", node, harness.NvidiaGPU{Minor: 0, ProductName: "NVIDIA H100 80GB HBM3"}.Device())
		s.Name = node + "-gpu"
		_, err := client.ResourceV1().ResourceSlices().Create(ctx, s, metav1.CreateOptions{})
		return err
	})
	const namespaces = 50
	parallel(t, namespaces, 8, func(i int) error {
		_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-ns-%02d", i)}}, metav1.CreateOptions{})
		return err
	})
	t.Logf("seeded %d nodes in %s", nNodes, time.Since(start).Round(time.Second))
	start = time.Now()
	parallel(t, nPods, 48, func(i int) error {
		c := corev1.Container{Name: "app", Image: "registry.example.com/app:1.0",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}}}
		node := fmt.Sprintf("scale-%04d", i%nNodes)
		if i%10 == 0 {
			node = fmt.Sprintf("scale-%04d", (i/10%(nNodes/10))*10)
			c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%06d", i), Namespace: fmt.Sprintf("scale-ns-%02d", i%namespaces),
				Labels: map[string]string{"app": fmt.Sprintf("app-%d", i%500), "tier": "batch"}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{c}},
		}
		_, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		return err
	})
	t.Logf("seeded %d pods in %s", nPods, time.Since(start).Round(time.Second))

	bin, err := harness.KubedraBin()
	if err != nil {
		t.Fatal(err)
	}
	var auditTimes, kubectlTimes []time.Duration
	var auditRSS, kubectlRSS int64
	for round := range 3 {
		d, rss, out := timed(t, exec.Command(bin, "audit", "-o", "json"), 2)
		auditTimes, auditRSS = append(auditTimes, d), max(auditRSS, rss)
		if round == 0 && !bytes.Contains(out, []byte(`"nodes": `+strconv.Itoa(nNodes+countSeeded(t, client)))) {
			t.Errorf("the audit did not see every node:\n%.2000s", out)
		}
		d, rss, _ = timed(t, exec.Command(cl.Kubectl, "get", "nodes,pods", "-A", "-o", "json"), 0)
		kubectlTimes, kubectlRSS = append(kubectlTimes, d), max(kubectlRSS, rss)
	}
	a, k := median(auditTimes), median(kubectlTimes)
	ratio := a.Seconds() / k.Seconds()
	t.Logf("SCALE %d nodes, %d pods: kubedra audit %s (runs %v), kubectl get nodes,pods -A -o json %s (runs %v): ratio %.2f; peak RSS audit %d MiB, kubectl %d MiB",
		nNodes, nPods, a.Round(time.Millisecond), auditTimes, k.Round(time.Millisecond), kubectlTimes, ratio, auditRSS>>10, kubectlRSS>>10)
	if ratio > 1.5 {
		t.Errorf("audit takes %.2f× kubectl's time, target ≤ 1.5×", ratio)
	}
}

// countSeeded is the number of nodes that exist besides the scale nodes.
func countSeeded(t *testing.T, c kubernetes.Interface) int {
	l, err := c.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range l.Items {
		if len(x.Name) < 6 || x.Name[:6] != "scale-" {
			n++
		}
	}
	return n
}

// timed runs cmd against the cluster, output discarded after capture, and
// returns its wall time and peak RSS (KiB). wantExit is the expected exit code.
func timed(t *testing.T, cmd *exec.Cmd, wantExit int) (time.Duration, int64, []byte) {
	t.Helper()
	cmd.Env = append(cl.Env(), "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.Discard
	start := time.Now()
	err := cmd.Run()
	d := time.Since(start)
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", cmd.Path, err)
	}
	if code != wantExit && !(wantExit == 2 && code == 0) {
		t.Fatalf("%s exited %d:\n%.2000s", cmd.Path, code, out.Bytes())
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss
	}
	return d, rss, out.Bytes()
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// parallel runs f(0..n-1) on workers goroutines and fails on the first error.
func parallel(t *testing.T, n, workers int, f func(i int) error) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = fmt.Errorf("item %d: %w", i, err) })
					return
				}
			}
		})
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}
