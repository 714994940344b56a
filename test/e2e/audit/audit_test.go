package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cl *harness.Cluster

// The resource-quota controller fills quota status; without it the quota
// admission plugin refuses pods in namespaces with a quota. The seeded
// cluster has a pod served through a DeviceClass's extendedResourceName
// (KEP-5004): on-by-default from 1.36, an alpha gate to switch on before.
func TestMain(m *testing.M) {
	opts := harness.Options{Controllers: append(slices.Clone(harness.DefaultControllers), "resourcequota-controller")}
	if v, err := harness.ResolveVersion(""); err == nil && (v.Minor == "1.34" || v.Minor == "1.35") {
		opts.FeatureGates = "DRAExtendedResource=true"
	}
	os.Exit(harness.Main(m, opts, &cl))
}

// report mirrors the parts of kubedra's AuditReport the tests read (this
// module does not import kubedra's packages: it tests the binary).
type report struct {
	Kind  string `json:"kind"`
	Pools []struct {
		Name    string   `json:"name"`
		Verdict string   `json:"verdict"`
		Checks  []string `json:"checks"`
	} `json:"pools"`
	Checks []struct {
		ID     string `json:"id"`
		Result string `json:"result"`
		Reason string `json:"reason"`
	} `json:"checks"`
	Items []struct {
		Check    string `json:"check"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
		Objects  []struct {
			Kind, Namespace, Name string
		} `json:"objects"`
	} `json:"items"`
	Workloads []struct {
		Namespace, Resource, Status string
		Workloads, Pods             int
	} `json:"workloads"`
	Problems []struct {
		Severity, Rule, Resource, Message string
	} `json:"problems"`
}

// fired lists, per check, "severity objects" of each finding.
func (r report) fired() map[string][]string {
	out := map[string][]string{}
	for _, it := range r.Items {
		var objs []string
		for _, o := range it.Objects {
			s := o.Kind + "/" + o.Name
			if o.Namespace != "" {
				s = o.Kind + "/" + o.Namespace + "/" + o.Name
			}
			objs = append(objs, s)
		}
		out[it.Check] = append(out[it.Check], it.Severity+" "+strings.Join(objs, ","))
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

var (
	seedOnce sync.Once
	seedErr  error
)

// seed creates the scenario once per test binary and waits until the
// controllers and the scheduler have made what the audit reads.
func seed(t *testing.T) {
	t.Helper()
	seedOnce.Do(func() { seedErr = doSeed(context.Background()) })
	if seedErr != nil {
		t.Fatalf("seeding the cluster: %v", seedErr)
	}
}

func load(name string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		return nil, err
	}
	return harness.DecodeYAML(data)
}

func doSeed(ctx context.Context) error {
	base, err := load("00-base.yaml")
	if err != nil {
		return err
	}
	later, err := load("10-workloads.yaml")
	if err != nil {
		return err
	}
	if err := cl.CreateAll(ctx, base, harness.CreateOptions{}); err != nil {
		return err
	}
	legacy, err := cl.Dynamic.Resource(schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "deviceclasses"}).
		Get(ctx, "gpu-legacy", metav1.GetOptions{})
	if err != nil {
		return err
	}
	// gpu.nvidia.com must be strictly newer than gpu-legacy (timestamps have
	// a one-second resolution), and the CRDs established, and quota status
	// filled in by the controller before pods are admitted.
	created := legacy.GetCreationTimestamp().Time
	if err := harness.Poll(ctx, time.Minute, "CRDs established, quotas counted, a second since gpu-legacy",
		func(ctx context.Context) (bool, string, error) {
			if time.Since(created) < 1100*time.Millisecond {
				return false, "waiting for the clock", nil
			}
			for _, crd := range []string{"clusterpolicies.nvidia.com", "gpuclusters.nvidia.com"} {
				u, err := cl.Dynamic.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).
					Get(ctx, crd, metav1.GetOptions{})
				if err != nil {
					return false, err.Error(), nil
				}
				conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
				ok := false
				for _, c := range conds {
					cm, _ := c.(map[string]any)
					if cm["type"] == "Established" && cm["status"] == "True" {
						ok = true
					}
				}
				if !ok {
					return false, crd + " not established", nil
				}
			}
			for _, ns := range []string{"ml", "neuron"} {
				qs, err := cl.Clientset.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return false, err.Error(), nil
				}
				for _, q := range qs.Items {
					if len(q.Status.Hard) == 0 {
						return false, "quota " + ns + "/" + q.Name + " has no status", nil
					}
				}
			}
			return true, "", nil
		}); err != nil {
		return err
	}
	if err := cl.CreateAll(ctx, later, harness.CreateOptions{}); err != nil {
		return err
	}
	// DaemonSet pods bound (gpu-dra-1's dra-only taint keeps the device
	// plugin and the CSI plugin off it), the Deployment's two pods bound to
	// gpu-plugin-1, the KEP-5004 pod served by DRA, the Job's pod created.
	want := map[string]int{"name=nvidia-device-plugin-ds": 2, "app=kubelet-plugin": 2, "app=ebs-csi-node": 4, "app=trainer": 2}
	return harness.Poll(ctx, 3*time.Minute, "DaemonSet and workload pods bound", func(ctx context.Context) (bool, string, error) {
		for sel, n := range want {
			pods, err := cl.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return false, err.Error(), nil
			}
			bound := 0
			for _, p := range pods.Items {
				if p.Spec.NodeName != "" {
					bound++
				}
			}
			if bound != n {
				return false, fmt.Sprintf("%s: %d of %d pods bound", sel, bound, n), nil
			}
		}
		p, err := cl.Clientset.CoreV1().Pods("ml").Get(ctx, "served-by-dra", metav1.GetOptions{})
		if err != nil || p.Status.ExtendedResourceClaimStatus == nil {
			return false, "served-by-dra not yet served by DRA: " + harness.PodSummary(p), nil
		}
		jobPods, err := cl.Clientset.CoreV1().Pods("neuron").List(ctx, metav1.ListOptions{LabelSelector: "job-name=compile"})
		if err != nil || len(jobPods.Items) != 1 {
			return false, "job pod not created", nil
		}
		return true, "", nil
	})
}

func audit(t *testing.T, env []string, stdin []byte, args ...string) (report, harness.KubedraResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := harness.RunKubedra(ctx, env, stdin, append([]string{"audit"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var r report
	if err := json.Unmarshal(res.Stdout, &r); err != nil || r.Kind != "AuditReport" {
		t.Fatalf("audit %v: exit %d, stdout is not an AuditReport (%v):\n%s\nstderr:\n%s", args, res.ExitCode, err, res.Stdout, res.Stderr)
	}
	return r, res
}

// wantMixed is what every check must find in the seeded cluster, and
// nothing else. Kubernetes is 1.37, so the quota on nvidia.com/gpu keeps
// counting (a class maps it) and only the neuroncore quota is reported.
var wantMixed = map[string][]string{
	"node-conflict": {"error Node/gpu-mixed-1"},
	"daemonset-overlap": {"error DaemonSet/kube-system/nvidia-device-plugin-daemonset," +
		"DaemonSet/dra-driver-nvidia-gpu/dra-driver-nvidia-gpu-kubelet-plugin,Node/gpu-mixed-1"},
	"class-name-clash":        {"warning DeviceClass/gpu-legacy,DeviceClass/gpu.nvidia.com"},
	"plugin-still-advertises": {"warning Node/gpu-mixed-1,Node/gpu-plugin-1"},
	"node-support":            {"error Node/trn-1", "warning Node/trn-1", "warning Node/trn-1"},
	"gpu-operator-mode":       {"error ClusterPolicy/cluster-policy,GPUCluster/default"},
	"quota-stops-counting":    {"warning ResourceQuota/neuron/neuron"},
	"stale-node-labels":       {"info Node/gpu-dra-1", "warning Node/gpu-dra-1"},
	"plugin-workloads":        {"info Deployment/ml/trainer", "warning Job/neuron/compile"},
}

// wantMixedOn adapts wantMixed to the cluster's version: before 1.36
// DRAExtendedResource is off by default (the test switches it on, but audit
// can only go by the version), so api-readiness says extendedResourceName
// serves nothing and the GPU quota is reported as one that stops counting.
func wantMixedOn(minor string) map[string][]string {
	if minor != "1.34" && minor != "1.35" {
		return wantMixed
	}
	want := maps.Clone(wantMixed)
	want["api-readiness"] = []string{"info "}
	want["quota-stops-counting"] = []string{"warning ResourceQuota/ml/gpus", "warning ResourceQuota/neuron/neuron"}
	return want
}

func diff(t *testing.T, what string, want, got any) {
	t.Helper()
	if !reflect.DeepEqual(want, got) {
		w, _ := json.MarshalIndent(want, "", "  ")
		g, _ := json.MarshalIndent(got, "", "  ")
		t.Errorf("%s:\nwant %s\n got %s", what, w, g)
	}
}

// Every check fires exactly on the objects it should, on a real control
// plane, with verdicts per pool; exit status 2 for error findings.
func TestAuditLive(t *testing.T) {
	seed(t)
	r, res := audit(t, cl.Env(), nil, "-o", "json")
	if res.ExitCode != 2 {
		t.Errorf("exit %d, want 2 (error findings); stderr:\n%s", res.ExitCode, res.Stderr)
	}
	diff(t, "findings per check", wantMixedOn(cl.Version.Minor), r.fired())
	verdicts := map[string]string{}
	for _, p := range r.Pools {
		verdicts[p.Name] = p.Verdict
	}
	diff(t, "pool verdicts", map[string]string{"gpu-dra": "blocked", "gpu-mixed": "conflicting", "gpu-plugin": "blocked",
		"m7i.2xlarge": "ready", "trn": "blocked"}, verdicts)
	if len(r.Problems) != 0 {
		t.Errorf("admin read must be complete: %+v", r.Problems)
	}
	// The KEP-5004 pod is served by DRA and is not listed as on a plugin.
	for _, w := range r.Workloads {
		if w.Namespace == "ml" && w.Pods != 2 {
			t.Errorf("ml workloads: %+v (served-by-dra must not count)", w)
		}
	}
	// The table renders too, on stdout, without colour off a terminal.
	_, tab := auditRaw(t, cl.Env(), nil)
	if tab.ExitCode != 2 || !bytes.Contains(tab.Stdout, []byte("gpu-mixed")) || bytes.Contains(tab.Stdout, []byte("\x1b[")) {
		t.Errorf("table: exit %d\n%s", tab.ExitCode, tab.Stdout)
	}
}

func auditRaw(t *testing.T, env []string, stdin []byte, args ...string) ([]byte, harness.KubedraResult) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := harness.RunKubedra(ctx, env, stdin, append([]string{"audit"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	return res.Stdout, res
}

// --dump then --from-dump gives byte-identical JSON, and the same exit status.
func TestAuditDumpAgrees(t *testing.T) {
	seed(t)
	dump := filepath.Join(t.TempDir(), "snapshot.yaml")
	live, lres := auditRaw(t, cl.Env(), nil, "-o", "json", "--dump", dump)
	offline, ores := auditRaw(t, nil, nil, "-o", "json", "--from-dump", dump, "--kubeconfig", "/nonexistent")
	if !bytes.Equal(live, offline) {
		t.Errorf("--from-dump differs from the live audit:\nlive:\n%s\ndump:\n%s", live, offline)
	}
	if lres.ExitCode != ores.ExitCode {
		t.Errorf("exit %d live, %d from dump", lres.ExitCode, ores.ExitCode)
	}
	data, _ := os.ReadFile(dump)
	if bytes.Contains(data, []byte("managedFields")) {
		t.Error("the dump keeps managedFields")
	}
}

// kubectl's own output works as a dump; what it does not hold is named and
// the checks that need it are skipped.
func TestAuditKubectlDump(t *testing.T) {
	seed(t)
	cmd := exec.Command(cl.Kubectl, "get", "nodes,daemonsets,pods,deviceclasses,resourceslices", "-A", "-o", "yaml")
	cmd.Env = cl.Env()
	yml, err := cmd.Output()
	if err != nil {
		t.Fatalf("kubectl: %v", err)
	}
	r, res := audit(t, nil, yml, "-o", "json", "--from-dump", "-")
	if res.ExitCode != 2 {
		t.Errorf("exit %d, want 2; stderr:\n%s", res.ExitCode, res.Stderr)
	}
	got := r.fired()
	for _, id := range []string{"node-conflict", "daemonset-overlap", "class-name-clash", "plugin-still-advertises", "stale-node-labels"} {
		diff(t, id+" from a kubectl dump", wantMixed[id], got[id])
	}
	var skipped []string
	for _, c := range r.Checks {
		if c.Result == "skipped" {
			skipped = append(skipped, c.ID)
		}
	}
	// kubectl's output does not say whether the GPU Operator's resources
	// exist either: gpu-operator-mode is skipped, not passed.
	diff(t, "skipped checks", []string{"api-readiness", "gpu-operator-mode", "quota-stops-counting"}, skipped)
	var missing []string
	for _, p := range r.Problems {
		missing = append(missing, p.Resource)
	}
	sort.Strings(missing)
	diff(t, "problems", []string{"clusterpolicies.nvidia.com", "discovery", "gpuclusters.nvidia.com", "jobs.batch", "replicasets.apps", "resourceclaims.resource.k8s.io",
		"resourceclaimtemplates.resource.k8s.io", "resourcequotas"}, missing)
}

// The ClusterRole in docs/rbac.yaml is enough for a complete audit; a user
// without it gets a partial report that names what it could not read.
func TestAuditRBAC(t *testing.T) {
	seed(t)
	ctx := context.Background()
	data, err := os.ReadFile("../../../docs/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := harness.DecodeYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if _, err := cl.Create(ctx, o, harness.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("applying docs/rbac.yaml: %v", err)
		}
	}
	admin, _ := auditRaw(t, cl.Env(), nil, "-o", "json")

	auditor, err := cl.UserKubeconfig("auditor", "kubedra:auditors")
	if err != nil {
		t.Fatal(err)
	}
	// RBAC caches update within a moment of the binding's creation.
	var restricted []byte
	var res harness.KubedraResult
	err = harness.Poll(ctx, 30*time.Second, "the auditor's audit to match the admin's", func(context.Context) (bool, string, error) {
		restricted, res = auditRaw(t, nil, nil, "-o", "json", "--kubeconfig", auditor)
		return bytes.Equal(admin, restricted), fmt.Sprintf("exit %d, stderr %s", res.ExitCode, res.Stderr), nil
	})
	if err != nil {
		t.Errorf("%v\nadmin:\n%s\nauditor:\n%s", err, admin, restricted)
	}

	nobody, err := cl.UserKubeconfig("nobody")
	if err != nil {
		t.Fatal(err)
	}
	r, res := audit(t, nil, nil, "-o", "json", "--kubeconfig", nobody)
	if res.ExitCode != 1 || !bytes.Contains(res.Stderr, []byte("partial report: could not read")) {
		t.Errorf("unprivileged: exit %d, stderr %s", res.ExitCode, res.Stderr)
	}
	forbidden := 0
	for _, p := range r.Problems {
		if p.Severity == "error" && p.Rule == "cluster/unreadable" && strings.HasPrefix(p.Message, "could not read "+p.Resource+": forbidden") {
			forbidden++
		}
	}
	if forbidden < 8 {
		t.Errorf("unprivileged: want every list forbidden, got %+v", r.Problems)
	}
}

// -n scopes workloads and quotas, not the node-level checks.
func TestAuditNamespace(t *testing.T) {
	seed(t)
	r, _ := audit(t, cl.Env(), nil, "-o", "json", "-n", "neuron")
	got := r.fired()
	diff(t, "workloads in neuron", []string{"warning Job/neuron/compile"}, got["plugin-workloads"])
	diff(t, "node conflict still seen", wantMixed["node-conflict"], got["node-conflict"])
}
