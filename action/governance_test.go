package action_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// governed is one governance finding as a user reads it in scan: object,
// key and whether the default gate fails on it.
type governed struct {
	object, key string
	breaks      bool
	done        bool
}

func governanceOf(t *testing.T, r *action.CheckResult) []governed {
	t.Helper()
	var out []governed
	for i, it := range r.Report.Findings {
		g := it.Mapping.Govern
		if it.Status != rules.Governance || g == nil {
			continue
		}
		if r.Failing[i] != g.Breaks {
			t.Errorf("%s %s: fails the gate %v, breaks %v", it.Workload(), g.Key, r.Failing[i], g.Breaks)
		}
		out = append(out, governed{object: it.Kind + "/" + it.Name, key: g.Key, breaks: g.Breaks, done: g.Done})
	}
	return out
}

func checkDir(t *testing.T, dir string, target rules.Version) *action.CheckResult {
	t.Helper()
	r, err := action.Check(context.Background(), action.Input{Paths: []string{"."}, Dir: dir},
		action.CheckOptions{ScanOptions: action.ScanOptions{Target: target}})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGovernanceCheckAndMigrate: objects that count devices are reported
// with status governance; the default gate fails on those that would stop
// counting after migration and on no other; after `kubedra migrate` the
// repo passes check, scan reports the objects as done, and a second
// migrate changes nothing.
func TestGovernanceCheckAndMigrate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		target rules.Version
		before []governed
		after  []governed
	}{
		{"governance-quota", rules.Version{Major: 1, Minor: 35},
			[]governed{
				{"ResourceQuota/gpu-budget", "requests.nvidia.com/gpu", true, false},
				{"ResourceQuota/gpu-budget", "limits.nvidia.com/gpu", false, false},
				{"ResourceQuota/gpu-budget", "requests.aws.amazon.com/neuron", true, false},
				{"ResourceQuota/gpu-high", "requests.nvidia.com/gpu", true, false},
				{"ResourceQuota/claims", "count/resourceclaims.resource.k8s.io", false, true},
				{"ResourceQuota/claims", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices", false, true},
			},
			[]governed{
				{"ResourceQuota/gpu-budget", "requests.nvidia.com/gpu", false, true},
				{"ResourceQuota/gpu-budget", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices", false, true},
				{"ResourceQuota/gpu-budget", "limits.nvidia.com/gpu", false, false},
				{"ResourceQuota/gpu-budget", "requests.aws.amazon.com/neuron", false, true},
				{"ResourceQuota/gpu-budget", "neuron.aws.com.deviceclass.resource.k8s.io/devices", false, true},
				// A scoped quota never counts claims: migrate cannot fix it.
				{"ResourceQuota/gpu-high", "requests.nvidia.com/gpu", true, false},
				{"ResourceQuota/claims", "count/resourceclaims.resource.k8s.io", false, true},
				{"ResourceQuota/claims", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices", false, true},
			}},
		{"governance-quota-kept", rules.Version{Major: 1, Minor: 37},
			[]governed{
				{"ResourceQuota/gpu-budget", "requests.nvidia.com/gpu", false, false},
				{"ResourceQuota/gpu-budget", "limits.nvidia.com/gpu", false, false},
				{"ResourceQuota/gpu-budget", "requests.aws.amazon.com/neuron", true, false},
				{"ResourceQuota/gpu-high", "requests.nvidia.com/gpu", true, false},
				{"ResourceQuota/claims", "count/resourceclaims.resource.k8s.io", false, true},
				{"ResourceQuota/claims", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices", false, true},
			}, nil},
		{"governance-limitrange", rules.Version{},
			[]governed{
				{"LimitRange/gpu-defaults", "nvidia.com/gpu", true, false},
				{"LimitRange/gpu-defaults", "nvidia.com/gpu", true, false},
				{"LimitRange/gpu-defaults", "nvidia.com/gpu", true, false},
			}, []governed{}},
		{"governance-kueue", rules.Version{},
			[]governed{
				{"ResourceFlavor/a100", "nvidia.com/gpu.product,nvidia.com/gpu", false, false},
				{"ClusterQueue/gpus", "nvidia.com/gpu", false, false},
				{"ConfigMap/kueue-manager-config", "", true, false},
			},
			[]governed{
				{"ResourceFlavor/a100", "nvidia.com/gpu.product,nvidia.com/gpu", false, false},
				{"ClusterQueue/gpus", "nvidia.com/gpu", false, false},
				{"ConfigMap/kueue-manager-config", "", false, true},
			}},
		{"governance-kueue-covered", rules.Version{},
			[]governed{
				{"Configuration/", "", false, true},
				{"ClusterQueue/gpus", "nvidia.com/gpu", true, false},
			},
			[]governed{
				{"Configuration/", "", false, true},
				{"ClusterQueue/gpus", "nvidia.com/gpu", false, true},
			}},
		{"governance-kueue-mig", rules.Version{},
			[]governed{
				{"Configuration/", "", true, false},
				{"ClusterQueue/gpus", "nvidia.com/gpu", false, false},
			},
			[]governed{
				{"Configuration/", "", false, true},
				{"ClusterQueue/gpus", "nvidia.com/gpu", false, false},
			}},
		{"governance-karpenter-volcano", rules.Version{},
			[]governed{
				{"NodePool/gpu", "nvidia.com/gpu", false, false},
				{"Queue/research", "nvidia.com/gpu", true, false},
				{"Queue/research", "nvidia.com/gpu", true, false},
				{"Queue/research", "nvidia.com/gpu", true, false},
			},
			[]governed{
				{"NodePool/gpu", "nvidia.com/gpu", false, false},
				{"Queue/research", "nvidia.com/gpu", false, true},
				{"Queue/research", "nvidia.com/gpu", false, true},
				{"Queue/research", "nvidia.com/gpu", false, true},
			}},
		{"governance-kueue-object", rules.Version{},
			[]governed{
				{"ClusterQueue/gpus", "nvidia.com/gpu", false, false},
				{"Configuration/", "", true, false},
			},
			[]governed{
				{"ClusterQueue/gpus", "nvidia.com/gpu", false, false},
				{"Configuration/", "", false, true},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			data, err := os.ReadFile(filepath.Join("..", "rewrite", "testdata", tc.name, "input.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "repo.yaml"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := governanceOf(t, checkDir(t, dir, tc.target)); !equalGoverned(got, tc.before) {
				t.Fatalf("before migrate:\n got %v\nwant %v", got, tc.before)
			}
			migrate := func() *action.MigrateResult {
				res, err := action.Migrate(context.Background(), action.Input{Paths: []string{"."}, Dir: dir},
					action.MigrateOptions{Plan: plan.Options{Strategy: plan.Claims, Target: target(tc.target)}, Output: emit.Write})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			first := migrate()
			after := checkDir(t, dir, tc.target)
			if tc.after != nil {
				if got := governanceOf(t, after); !equalGoverned(got, tc.after) {
					t.Fatalf("after migrate:\n got %v\nwant %v", got, tc.after)
				}
			}
			for i, it := range after.Report.Findings {
				if after.Failing[i] && !(it.Kind == "ResourceQuota" && it.Name == "gpu-high") {
					t.Errorf("after migrate, %s fails check: %s", it.Workload(), it.Message())
				}
			}
			migrated, _ := os.ReadFile(filepath.Join(dir, "repo.yaml"))
			second := migrate()
			again, _ := os.ReadFile(filepath.Join(dir, "repo.yaml"))
			if string(again) != string(migrated) || second.Governed != 0 {
				t.Errorf("a second migrate changed the repo (governed %d after %d)", second.Governed, first.Governed)
			}
		})
	}
}

func target(v rules.Version) rules.Version {
	if v == (rules.Version{}) {
		return rules.DefaultTarget
	}
	return v
}

func equalGoverned(a, b []governed) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGovernanceNoConfiguration: ClusterQueues without a Kueue
// Configuration in the input get one warning with the exact snippet.
func TestGovernanceNoConfiguration(t *testing.T) {
	t.Parallel()
	in := `apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, aws.amazon.com/neuron]
    flavors: [{name: default, resources: [{name: nvidia.com/gpu, nominalQuota: 8}, {name: aws.amazon.com/neuron, nominalQuota: 4}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: b}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: default, resources: [{name: nvidia.com/gpu, nominalQuota: 2}]}]
`
	res, err := action.Migrate(context.Background(), action.Input{Paths: []string{"-"}, Stdin: strings.NewReader(in)},
		action.MigrateOptions{Plan: plan.Options{Strategy: plan.Claims, Target: rules.DefaultTarget}, Output: emit.Stream, Out: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	var warns []inventory.Diagnostic
	for _, d := range res.Diagnostics {
		if d.Rule == plan.RuleGovKueueConfig {
			warns = append(warns, d)
		}
	}
	if len(warns) != 1 {
		t.Fatalf("want one %s warning, got %v", plan.RuleGovKueueConfig, res.Diagnostics)
	}
	want := "resources:\n  deviceClassMappings:\n  - name: aws.amazon.com/neuron\n    deviceClassNames: [neuron.aws.com]\n  - name: nvidia.com/gpu\n    deviceClassNames: [gpu.nvidia.com]\n"
	if !strings.Contains(warns[0].Fix, want) {
		t.Errorf("the fix does not hold the snippet %q:\n%s", want, warns[0].Fix)
	}
}

// TestGovernanceQueuedWithoutConfiguration: a workload in a Kueue queue
// that moves to claims is inadmissible until Kueue's Configuration maps
// its class ("DeviceClass ... is not mapped in DRA configuration"). The
// Configuration usually lives in the platform's repository, not the
// team's. So by default such a workload is left as it is, each request
// saying why with the snippet; it is migrated when the input's
// Configuration maps the class, when the user states that the cluster's
// Kueue maps the classes (KueueMapsClasses: then the snippet is an info,
// once), and for the extended-resource strategy (Kueue counts KEP-5004
// pods by the class's extendedResourceName).
func TestGovernanceQueuedWithoutConfiguration(t *testing.T) {
	t.Parallel()
	job := func(name string) string {
		return `apiVersion: batch/v1
kind: Job
metadata:
  name: ` + name + `
  labels: {kueue.x-k8s.io/queue-name: team-a}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: t
        image: x
        resources: {limits: {nvidia.com/gpu: 1}}
`
	}
	config := `apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    resources:
      deviceClassMappings:
      - name: nvidia.com/gpu
        deviceClassNames: [gpu.nvidia.com]
`
	snippet := "  - name: nvidia.com/gpu\n    deviceClassNames: [gpu.nvidia.com]\n"
	tests := []struct {
		name       string
		in         string
		strategy   plan.Strategy
		mapsClass  bool
		migrated   int
		held, info int
	}{
		{name: "no configuration", in: job("a") + "---\n" + job("b"), strategy: plan.Claims, held: 2},
		{name: "configuration maps the class", in: config + "---\n" + job("a"), strategy: plan.Claims, migrated: 1},
		{name: "the cluster's Kueue maps the classes", in: job("a") + "---\n" + job("b"), strategy: plan.Claims, mapsClass: true, migrated: 2, info: 1},
		{name: "extended resource (the pods stay as they are: KEP-5004)", in: job("a"), strategy: plan.ExtendedResource},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "jobs.yaml"), []byte(tt.in), 0o644); err != nil {
				t.Fatal(err)
			}
			var diff strings.Builder
			res, err := action.Migrate(context.Background(), action.Input{Paths: []string{"."}, Dir: dir},
				action.MigrateOptions{Plan: plan.Options{Strategy: tt.strategy, Target: rules.Version{Major: 1, Minor: 36}, KueueMapsClasses: tt.mapsClass},
					Output: emit.Diff, Out: &diff})
			if err != nil {
				t.Fatal(err)
			}
			if res.Migrated != tt.migrated {
				t.Errorf("migrated %d, want %d: %v", res.Migrated, tt.migrated, res.Diagnostics)
			}
			if tt.migrated == 0 && diff.Len() > 0 {
				t.Errorf("queued workloads Kueue would not admit were changed:\n%s", diff.String())
			}
			var held, infos []inventory.Diagnostic
			for _, d := range res.Diagnostics {
				switch {
				case d.Rule == plan.RuleKueueUnmapped && d.Severity == inventory.Warning:
					held = append(held, d)
				case d.Rule == plan.RuleGovKueueConfig && d.Severity == inventory.Info:
					infos = append(infos, d)
				case d.Rule == plan.RuleGovKueueConfig:
					t.Errorf("a warning for workloads the run did not migrate, or was told are mapped: %v", d)
				}
			}
			if len(held) != tt.held || len(infos) != tt.info {
				t.Fatalf("%d %s warnings and %d %s infos, want %d and %d: %v", len(held), plan.RuleKueueUnmapped, len(infos), plan.RuleGovKueueConfig, tt.held, tt.info, res.Diagnostics)
			}
			for _, w := range held {
				if w.File != "jobs.yaml" || w.Line != 13 && w.Line != 27 || !strings.Contains(w.Message, "gpu.nvidia.com") || !strings.Contains(w.Fix, snippet) || !strings.Contains(w.Fix, "--kueue-maps-classes") {
					t.Errorf("want each warning at its request, naming the class, with the snippet and the flag; got %s:%d %q %q", w.File, w.Line, w.Message, w.Fix)
				}
			}
			for _, w := range infos {
				if !strings.Contains(w.Fix, snippet) {
					t.Errorf("the info does not hold the snippet: %q", w.Fix)
				}
			}
		})
	}
}

// TestGovernanceDocuments: a KRM function's items (Input.Documents) get
// the same governance edits as files.
func TestGovernanceDocuments(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "rewrite", "testdata", "governance-limitrange", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	f := files.Parse("in.yaml", data)
	res, err := action.Migrate(context.Background(), action.Input{Documents: f.Docs},
		action.MigrateOptions{Plan: plan.Options{Strategy: plan.Claims, Target: rules.DefaultTarget}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Governed != 1 || len(res.Documents) != 1 {
		t.Fatalf("governed %d, %d documents", res.Governed, len(res.Documents))
	}
	out, err := res.Documents[0].String()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "nvidia.com/gpu") || !strings.Contains(out, `cpu: "2"`) {
		t.Errorf("the LimitRange item keeps a device entry or lost its cpu default:\n%s", out)
	}
}
