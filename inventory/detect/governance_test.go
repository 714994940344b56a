package detect_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
)

func govBrief(f inventory.GovFinding) string {
	s := fmt.Sprintf("%d %s %s/%s %s", f.Line, f.What, f.Kind, f.Name, f.Field)
	if f.Key != "" {
		s += " key=" + f.Key
	}
	if f.Resource != "" {
		s += " resource=" + f.Resource
	}
	if f.Quantity != "" {
		s += " qty=" + f.Quantity
	}
	if f.Class != "" {
		s += " class=" + f.Class
	}
	if f.LimitType != "" {
		s += " type=" + f.LimitType
	}
	if f.Scoped {
		s += " scoped"
	}
	if f.Mappings != nil {
		var ms []string
		for k, v := range f.Mappings {
			ms = append(ms, k+"="+strings.Join(v, ","))
		}
		sort.Strings(ms)
		s += " mappings=[" + strings.Join(ms, " ") + "]"
	}
	if f.ConfigKey != "" {
		s += " in=" + f.ConfigKey
	}
	if f.Ignore != "" {
		s += " ignore=" + f.Ignore
	}
	return s
}

func detectGov(t *testing.T, src string) []string {
	t.Helper()
	f := files.Parse("in.yaml", []byte(src))
	if len(f.Diagnostics) > 0 {
		t.Fatal(f.Diagnostics)
	}
	var out []string
	for _, g := range detect.GovernanceDocuments(f.Docs) {
		out = append(out, govBrief(g))
	}
	return out
}

func TestGovernance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"quota keys", `apiVersion: v1
kind: ResourceQuota
metadata: {name: q, namespace: ml}
spec:
  hard:
    requests.cpu: "4"
    requests.nvidia.com/gpu: "8"
    limits.nvidia.com/gpu: 8
    amd.com/gpu: "2"
    requests.storage: 1Ti
    count/resourceclaims.resource.k8s.io: "10"
    gpu.nvidia.com.deviceclass.resource.k8s.io/devices: "8"
    requests.deviceclass.resource.kubernetes.io/mig.nvidia.com: "4"
`, []string{
			"7 quota ResourceQuota/q spec.hard key=requests.nvidia.com/gpu resource=nvidia.com/gpu qty=8",
			"8 quota ResourceQuota/q spec.hard key=limits.nvidia.com/gpu resource=nvidia.com/gpu qty=8",
			"9 quota ResourceQuota/q spec.hard key=amd.com/gpu resource=amd.com/gpu qty=2",
			"11 quota ResourceQuota/q spec.hard key=count/resourceclaims.resource.k8s.io qty=10",
			"12 quota ResourceQuota/q spec.hard key=gpu.nvidia.com.deviceclass.resource.k8s.io/devices qty=8 class=gpu.nvidia.com",
			"13 quota ResourceQuota/q spec.hard key=requests.deviceclass.resource.kubernetes.io/mig.nvidia.com qty=4 class=mig.nvidia.com",
		}},
		{"scoped quota, ignored", `apiVersion: v1
kind: ResourceQuota
metadata:
  name: q
  annotations: {kubedra.io/ignore: "platform team owns it"}
spec:
  hard: {requests.nvidia.com/gpu: "2"}
  scopes: [BestEffort]
`, []string{"7 quota ResourceQuota/q spec.hard key=requests.nvidia.com/gpu resource=nvidia.com/gpu qty=2 scoped ignore=platform team owns it"}},
		{"quota without devices", "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {pods: \"10\", requests.cpu: \"4\"}\n", nil},
		{"limit range", `apiVersion: v1
kind: LimitRange
metadata: {name: lr}
spec:
  limits:
  - type: Container
    default: {cpu: "1", nvidia.com/gpu: "1"}
    max: {nvidia.com/gpu: "4"}
  - type: Pod
    maxLimitRequestRatio: {nvidia.com/gpu: "1"}
`, []string{
			"7 limit-range LimitRange/lr spec.limits[0].default key=nvidia.com/gpu resource=nvidia.com/gpu qty=1 type=Container",
			"8 limit-range LimitRange/lr spec.limits[0].max key=nvidia.com/gpu resource=nvidia.com/gpu qty=4 type=Container",
			"10 limit-range LimitRange/lr spec.limits[1].maxLimitRequestRatio key=nvidia.com/gpu resource=nvidia.com/gpu qty=1 type=Pod",
		}},
		{"cluster queue and flavor", `apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {nvidia.com/gpu.product: A100, topology.kubernetes.io/zone: a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: cpu}
spec:
  nodeLabels: {node-type: cpu}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: cpu, resources: [{name: cpu, nominalQuota: 9}, {name: memory, nominalQuota: 36Gi}]}]
  - coveredResources: ["nvidia.com/gpu"]
    flavors:
    - name: a100
      resources: [{name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 2}]
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 4}]
`, []string{
			"2 resource-flavor ResourceFlavor/a100 spec key=nvidia.com/gpu.product",
			"20 cluster-queue ClusterQueue/cq spec.resourceGroups[1] key=nvidia.com/gpu resource=nvidia.com/gpu qty=a100=8,h100=4",
		}},
		{"kueue configuration and its ConfigMap", `apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: nvidia.com/gpu
    deviceClassNames: [gpu.nvidia.com, mig.nvidia.com]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kueue-manager-config, namespace: kueue-system}
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta2
    kind: Configuration
    integrations:
      frameworks: [batch/job]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: other}
data:
  controller_manager_config.yaml: "kind: Something"
`, []string{
			"2 kueue-config Configuration/  mappings=[nvidia.com/gpu=gpu.nvidia.com,mig.nvidia.com]",
			"12 kueue-config ConfigMap/kueue-manager-config data mappings=[] in=controller_manager_config.yaml",
		}},
		{"karpenter and volcano", `apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  limits: {cpu: "100", nvidia.com/gpu: "16"}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: q}
spec:
  capability: {nvidia.com/gpu: 8, deviceclass/gpu.nvidia.com: 8, cores.deviceclass/hami.io: 100}
  guarantee:
    resource: {nvidia.com/gpu: 2}
`, []string{
			"5 node-pool NodePool/gpu spec.limits key=nvidia.com/gpu resource=nvidia.com/gpu qty=16",
			"11 volcano-queue Queue/q spec.capability key=nvidia.com/gpu resource=nvidia.com/gpu qty=8",
			"13 volcano-queue Queue/q spec.guarantee.resource key=nvidia.com/gpu resource=nvidia.com/gpu qty=2",
		}},
		{"not governance", "apiVersion: example.com/v1\nkind: ResourceQuota\nmetadata: {name: q}\nspec:\n  hard: {requests.nvidia.com/gpu: \"8\"}\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, detectGov(t, tt.src)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, doc := range strings.Split(tt.src, "\n---\n") {
				if len(tt.want) > 0 && !detect.MayGovern([]byte(doc)) && strings.Contains(doc, "nvidia") {
					t.Errorf("MayGovern is false for a document detection reports:\n%s", doc)
				}
			}
		})
	}
}
