package action_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

const classicClaims = `apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaimTemplate
metadata: {namespace: ml, name: big-gpu}
spec:
  spec:
    resourceClassName: gpu.nvidia.com
    parametersRef: {apiGroup: gpu.resource.nvidia.com, kind: GpuClaimParameters, name: big}
---
apiVersion: v1
kind: Pod
metadata: {namespace: ml, name: app}
spec:
  resourceClaims:
  - name: gpu
    source: {resourceClaimTemplateName: big-gpu}
  containers:
  - name: c
    image: x
    resources: {claims: [{name: gpu}]}
`

// The parameters come in a file read after the claims.
const classicParams = `apiVersion: gpu.resource.nvidia.com/v1alpha1
kind: GpuClaimParameters
metadata: {namespace: ml, name: big}
spec:
  count: 2
  selector: {memory: {value: 40Gi, operator: GreaterThanOrEqualTo}}
`

const betaClaim = `apiVersion: resource.k8s.io/v1beta2
kind: ResourceClaimTemplate
metadata: {namespace: ml, name: beta}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
`

// TestCheckDRAUpgrade: a repository of classic DRA no longer passes check,
// under any gate; a version the target still serves with --runtime-config
// fails only --fail-on any.
func TestCheckDRAUpgrade(t *testing.T) {
	t.Parallel()
	dir := testfs.Tree(t, map[string]string{"a-claims.yaml": classicClaims, "b-params.yaml": classicParams, "c-beta.yaml": betaClaim})
	for _, tc := range []struct {
		gate   plan.Gate
		target rules.Version
		want   int
	}{
		{plan.FailOnAny, rules.Version{Major: 1, Minor: 38}, 4},
		{plan.FailOnUnmapped, rules.Version{Major: 1, Minor: 38}, 3},
		{plan.FailOnLossy, rules.Version{Major: 1, Minor: 38}, 3},
		{plan.FailOnAny, rules.Version{Major: 1, Minor: 33}, 3}, // v1beta2 is 1.33's own version
	} {
		res, err := action.Check(context.Background(), action.Input{Paths: []string{"."}, Dir: dir},
			action.CheckOptions{ScanOptions: action.ScanOptions{Target: tc.target}, FailOn: tc.gate})
		if err != nil {
			t.Fatal(err)
		}
		if res.Failures != tc.want {
			var got []string
			for i, it := range res.Report.Findings {
				got = append(got, it.RuleID()+" "+it.Workload()+" fails="+map[bool]string{true: "yes", false: "no"}[res.Failing[i]])
			}
			t.Errorf("--fail-on %s, target %s: %d failures, want %d:\n%s", tc.gate, tc.target, res.Failures, tc.want, strings.Join(got, "\n"))
		}
		if s := res.Report.Summary; s.DRAUpgrade == 0 || s.Findings != s.DRAUpgrade {
			t.Errorf("summary %+v", s)
		}
	}
}

// TestMigrateDRAUpgrade: migrate finds a claim's parameters in a file read
// later, folds them into the claim, removes them, and moves the pod's claim
// reference up; a second run changes nothing.
func TestMigrateDRAUpgrade(t *testing.T) {
	t.Parallel()
	dir := testfs.Tree(t, map[string]string{"a-claims.yaml": classicClaims, "b-params.yaml": classicParams})
	opts := action.MigrateOptions{Output: emit.Write, Plan: plan.Options{Target: rules.Version{Major: 1, Minor: 38}}}
	res, err := action.Migrate(context.Background(), action.Input{Paths: []string{"."}, Dir: dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Upgraded != 3 || res.Changed != 2 || res.Failed != 0 {
		t.Fatalf("upgraded %d, changed %d, failed %d; diagnostics %+v", res.Upgraded, res.Changed, res.Failed, res.Diagnostics)
	}
	claims, _ := os.ReadFile(filepath.Join(dir, "a-claims.yaml"))
	for _, want := range []string{"apiVersion: resource.k8s.io/v1\n", "deviceClassName: gpu.nvidia.com", "count: 2",
		`memory.compareTo(quantity("40Gi")) >= 0`, "    resourceClaimTemplateName: big-gpu\n"} {
		if !strings.Contains(string(claims), want) {
			t.Errorf("claims file has no %q:\n%s", want, claims)
		}
	}
	if strings.Contains(string(claims), "source:") || strings.Contains(string(claims), "parametersRef") {
		t.Errorf("classic fields left:\n%s", claims)
	}
	params, _ := os.ReadFile(filepath.Join(dir, "b-params.yaml"))
	if strings.Contains(string(params), "kind:") || !strings.HasPrefix(string(params), "# GpuClaimParameters/ml/big") {
		t.Errorf("parameters not removed:\n%s", params)
	}
	again, err := action.Migrate(context.Background(), action.Input{Paths: []string{"."}, Dir: dir}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed != 0 || again.Upgraded != 0 {
		t.Errorf("second run: changed %d, upgraded %d", again.Changed, again.Upgraded)
	}
}

// TestMigrateDRAUpgradeDocuments: the KRM function path upgrades its items
// the same way and drops the folded parameters.
func TestMigrateDRAUpgradeDocuments(t *testing.T) {
	t.Parallel()
	var docs []*inventory.Document
	for _, src := range strings.Split(classicParams+"---\n"+classicClaims, "---\n") {
		n, err := yaml.Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, &inventory.Document{Node: n})
	}
	res, err := action.Migrate(context.Background(), action.Input{Documents: docs},
		action.MigrateOptions{Plan: plan.Options{Target: rules.Version{Major: 1, Minor: 38}}})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, d := range res.Documents {
		kinds = append(kinds, d.GetApiVersion()+" "+d.GetKind())
	}
	if diff := cmp.Diff([]string{"resource.k8s.io/v1 ResourceClaimTemplate", "v1 Pod"}, kinds); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s := res.Documents[0].MustString(); !strings.Contains(s, "count: 2") {
		t.Errorf("parameters not folded:\n%s", s)
	}
}

// TestCheckDRAGateAt137 (issue 28): a DynamicResourceAllocation setting is
// reported on 1.37, where the gate is locked on and one release from
// removal, in each place a cluster's configuration sets it: a static
// kube-apiserver Pod's command and args, a KubeletConfiguration, kind's
// Cluster. It fails --fail-on any (as a version served until a planned
// removal does), not the narrow gates, and migrate removes the setting.
func TestCheckDRAGateAt137(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"apiserver.yaml": `apiVersion: v1
kind: Pod
metadata: {name: kube-apiserver, namespace: kube-system}
spec:
  containers:
  - name: kube-apiserver
    image: registry.k8s.io/kube-apiserver:v1.36.0
    command:
    - kube-apiserver
    - --feature-gates=DynamicResourceAllocation=true
`,
		"scheduler.yaml": `apiVersion: v1
kind: Pod
metadata: {name: kube-scheduler, namespace: kube-system}
spec:
  containers:
  - name: kube-scheduler
    image: registry.k8s.io/kube-scheduler:v1.36.0
    command: [kube-scheduler]
    args: ["--v=2", "--feature-gates=DRAAdminAccess=true,DynamicResourceAllocation=true"]
`,
		"kubelet.yaml": "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  DynamicResourceAllocation: true\n",
		"kind.yaml":    "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nfeatureGates:\n  DynamicResourceAllocation: true\n",
	}
	dir := testfs.Tree(t, files)
	target := rules.Version{Major: 1, Minor: 37}
	for gate, want := range map[plan.Gate]int{plan.FailOnAny: 4, plan.FailOnLossy: 0, plan.FailOnUnmapped: 0} {
		res, err := action.Check(context.Background(), action.Input{Paths: []string{"."}, Dir: dir},
			action.CheckOptions{ScanOptions: action.ScanOptions{Target: target}, FailOn: gate})
		if err != nil {
			t.Fatal(err)
		}
		if res.Report.Summary.DRAUpgrade != 4 || res.Failures != want {
			t.Errorf("--fail-on %s: %d dra-upgrade findings, %d failures; want 4 and %d", gate, res.Report.Summary.DRAUpgrade, res.Failures, want)
		}
		for _, it := range res.Report.Findings {
			if m := it.Message(); !strings.Contains(m, "removed in 1.38") {
				t.Errorf("%s: %s", it.File, m)
			}
		}
	}
	res, err := action.Migrate(context.Background(), action.Input{Paths: []string{"."}, Dir: dir},
		action.MigrateOptions{Plan: plan.Options{Target: target}, Output: emit.Write})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed != 4 {
		t.Errorf("%d files changed, want 4", res.Changed)
	}
	for name := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "DynamicResourceAllocation") || !strings.Contains(string(b), "apiVersion") {
			t.Errorf("%s after migrate:\n%s", name, b)
		}
	}
}
