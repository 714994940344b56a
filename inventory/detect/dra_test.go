package detect_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
)

func draBrief(f inventory.DRAFinding) string {
	s := fmt.Sprintf("%d %s %s %s", f.Line, f.What, f.APIVersion, f.Kind)
	if f.Classic {
		s += " classic=" + f.ClassName
	}
	if p := f.Parameters; p != nil {
		s += fmt.Sprintf(" params=%s/%s/%s/%s", p.APIGroup, p.Kind, p.Namespace, p.Name)
	}
	if f.Claim != "" {
		s += " " + f.PodTemplatePath + " claim=" + f.Claim
	}
	if f.Gate != "" {
		s += fmt.Sprintf(" %s=%s at %s", f.Gate, f.Value, f.Field)
	}
	return s
}

func detectDRA(t *testing.T, src string) []string {
	t.Helper()
	n, err := yaml.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range detect.DRA(&inventory.Document{Node: n, Origin: inventory.Origin{Path: "x.yaml", Line: 1, ListIndex: -1}}, detect.Options{}) {
		out = append(out, draBrief(f))
	}
	return out
}

func TestDRA(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"classic template", `apiVersion: resource.k8s.io/v1alpha2
kind: ResourceClaimTemplate
metadata: {name: t, namespace: ml}
spec:
  spec:
    resourceClassName: gpu.nvidia.com
    parametersRef: {apiGroup: gpu.resource.nvidia.com, kind: GpuClaimParameters, name: p}
`, []string{"1 object resource.k8s.io/v1alpha2 ResourceClaimTemplate classic=gpu.nvidia.com params=gpu.resource.nvidia.com/GpuClaimParameters/ml/p"}},
		{"resource class", `apiVersion: resource.k8s.io/v1alpha1
kind: ResourceClass
metadata: {name: gpu.nvidia.com}
driverName: gpu.resource.nvidia.com
`, []string{"1 object resource.k8s.io/v1alpha1 ResourceClass classic=gpu.resource.nvidia.com"}},
		{"every version is a fact", `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: x}
`, []string{"1 object resource.k8s.io/v1 DeviceClass"}},
		{"v1beta1 claim is not classic", `apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata: {name: c}
spec: {devices: {requests: [{name: gpu, deviceClassName: gpu.nvidia.com}]}}
`, []string{"1 object resource.k8s.io/v1beta1 ResourceClaim"}},
		{"parameters", `apiVersion: gpu.resource.nvidia.com/v1alpha1
kind: MigDeviceClaimParameters
metadata: {name: m}
spec: {profile: 1g.10gb}
`, []string{"1 parameters gpu.resource.nvidia.com/v1alpha1 MigDeviceClaimParameters"}},
		{"intel parameters", `apiVersion: gpu.resource.intel.com/v1alpha2
kind: GpuClaimParameters
metadata: {name: i}
spec: {count: 1}
`, []string{"1 parameters gpu.resource.intel.com/v1alpha2 GpuClaimParameters"}},
		{"pod source in a job", `apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      resourceClaims:
      - name: a
        source:
          resourceClaimName: shared
      - name: b
        resourceClaimTemplateName: new-style
      containers: [{name: c, image: x}]
`, []string{"9 pod-claim-source batch/v1 Job spec.template.spec claim=a"}},
		{"static pod flags", `apiVersion: v1
kind: Pod
metadata: {name: kube-apiserver, namespace: kube-system}
spec:
  containers:
  - name: kube-apiserver
    command:
    - kube-apiserver
    - --feature-gates=DRAAdminAccess=true,DynamicResourceAllocation=true
    - --runtime-config=resource.k8s.io/v1beta1=true
`, []string{"9 feature-gate v1 Pod DynamicResourceAllocation=true at spec.containers[0].command[1]"}},
		{"kubelet config", `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
featureGates:
  DynamicResourceAllocation: true
`, []string{"4 feature-gate kubelet.config.k8s.io/v1beta1 KubeletConfiguration DynamicResourceAllocation=true at featureGates.DynamicResourceAllocation"}},
		{"kind cluster with a kubeadm patch", `kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
featureGates:
  DynamicResourceAllocation: false
nodes:
- role: control-plane
  kubeadmConfigPatches:
  - |
    kind: ClusterConfiguration
    scheduler:
      extraArgs:
        feature-gates: "DRAControlPlaneController=true"
`, []string{
			"4 feature-gate kind.x-k8s.io/v1alpha4 Cluster DynamicResourceAllocation=false at featureGates.DynamicResourceAllocation",
			"12 feature-gate kind.x-k8s.io/v1alpha4 Cluster DRAControlPlaneController=true at nodes[0].kubeadmConfigPatches[0]",
		}},
		{"kubeadm v1beta4 list args", `apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
apiServer:
  extraArgs:
  - name: feature-gates
    value: DynamicResourceAllocation=true
`, []string{"6 feature-gate kubeadm.k8s.io/v1beta4 ClusterConfiguration DynamicResourceAllocation=true at apiServer.extraArgs[0].value"}},
		{"nothing", `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {template: {spec: {containers: [{name: c, image: x, args: ["--gates=DynamicResourceAllocationX"]}]}}}
`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tc.want, detectDRA(t, tc.src)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestDRAParametersSpec: the parameters' spec is decoded for the mapping.
func TestDRAParametersSpec(t *testing.T) {
	t.Parallel()
	n, err := yaml.Parse("apiVersion: gpu.resource.nvidia.com/v1alpha1\nkind: GpuClaimParameters\nmetadata: {name: p}\nspec: {count: 2, sharing: {strategy: MPS}}\n")
	if err != nil {
		t.Fatal(err)
	}
	fs := detect.DRA(&inventory.Document{Node: n}, detect.Options{})
	if len(fs) != 1 || fs[0].Spec["count"] != 2 || fs[0].Spec["sharing"].(map[string]any)["strategy"] != "MPS" {
		t.Fatalf("got %+v", fs)
	}
}

// TestMayDRA: the byte filter of non-strict scans keeps every document
// DRA detection reports.
func TestMayDRA(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]bool{
		"apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\n":               true,
		"apiVersion: gpu.resource.nvidia.com/v1alpha1\nkind: GpuClaimParameters\n": true,
		"spec:\n  resourceClaims:\n  - name: a\n":                                  true,
		"args: [--feature-gates=DynamicResourceAllocation=true]\n":                 true,
		"apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n":                          false,
	} {
		if got := detect.MayDRA([]byte(src)); got != want {
			t.Errorf("MayDRA(%q) = %v, want %v", src, got, want)
		}
	}
}

// TestDRACorpus: the classic examples of the reference corpus are all
// found: every classic claim and template, every parameters object and
// every pod claim under source.
func TestDRACorpus(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "shared", "corpus", "dra-reference", "NVIDIA__k8s-dra-driver-gpu", "demo", "specs")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no corpus at %s", dir)
	}
	count := map[string]int{}
	for _, sub := range []string{"selectors", "mig+mps", "quickstart"} {
		paths, _ := filepath.Glob(filepath.Join(dir, sub, "*.yaml"))
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range detect.DRADocuments(files.Parse(p, data).Docs, detect.Options{}) {
				k := string(f.What)
				if f.Classic {
					k += " classic"
				}
				if f.What == inventory.DRAObject && strings.HasSuffix(f.APIVersion, "/v1beta1") {
					k += " v1beta1"
				}
				count[k]++
			}
		}
	}
	want := map[string]int{"object classic": 6, "parameters": 2, "pod-claim-source": 6, "object v1beta1": 2}
	if diff := cmp.Diff(want, count); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
