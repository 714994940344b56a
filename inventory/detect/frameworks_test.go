package detect_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
)

// TestWorkloadFacts: each finding carries what the object around its pod
// template says that the frameworks act on: pods per template, the replica
// group and its rayStartParams, queue labels, required node labels.
func TestWorkloadFacts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want map[string]inventory.Workload // pod template path -> facts (maps: only the keys checked)
	}{
		{
			name: "JobSet: replicas times parallelism, instance type",
			src: `apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
spec:
  replicatedJobs:
  - name: workers
    replicas: 2
    template:
      spec:
        parallelism: 4
        template:
          metadata: {labels: {role: worker}}
          spec:
            nodeSelector: {node.kubernetes.io/instance-type: p6e-gb200.36xlarge}
            containers:
            - name: c
              resources: {limits: {nvidia.com/gpu: 4}}`,
			want: map[string]inventory.Workload{"spec.replicatedJobs[name=workers].template.spec.template.spec": {
				Replicas: 8, Group: "spec.replicatedJobs[name=workers]",
				Labels:     map[string]string{"kueue.x-k8s.io/queue-name": "q", "role": "worker"},
				NodeLabels: map[string][]string{"node.kubernetes.io/instance-type": {"p6e-gb200.36xlarge"}}}},
		},
		{
			name: "LeaderWorkerSet: the leader and size-1 workers of each group",
			src: `apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: l}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      spec:
        containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]
    workerTemplate:
      spec:
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions:
                - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-GB200]}
        containers: [{name: c, resources: {limits: {nvidia.com/gpu: 4}}}]`,
			want: map[string]inventory.Workload{
				"spec.leaderWorkerTemplate.leaderTemplate.spec": {Replicas: 2, Group: "spec.leaderWorkerTemplate"},
				"spec.leaderWorkerTemplate.workerTemplate.spec": {Replicas: 6, Group: "spec.leaderWorkerTemplate",
					NodeLabels: map[string][]string{"nvidia.com/gpu.product": {"NVIDIA-GB200"}}},
			},
		},
		{
			name: "MPIJob replica spec, default of one replica",
			src: `apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: m}
spec:
  mpiReplicaSpecs:
    Launcher:
      template:
        spec:
          containers: [{name: l, resources: {limits: {nvidia.com/gpu: 1}}}]
    Worker:
      replicas: 3
      template:
        spec:
          resourceClaims: [{name: channel, resourceClaimTemplateName: cd-channel}]
          containers: [{name: w, resources: {limits: {nvidia.com/gpu: 4}}}]`,
			want: map[string]inventory.Workload{
				"spec.mpiReplicaSpecs.Launcher.template.spec": {Replicas: 1, Group: "spec.mpiReplicaSpecs.Launcher"},
				"spec.mpiReplicaSpecs.Worker.template.spec":   {Replicas: 3, Group: "spec.mpiReplicaSpecs.Worker", PodClaims: []string{"channel"}},
			},
		},
		{
			name: "RayCluster groups and their rayStartParams",
			src: `apiVersion: ray.io/v1
kind: RayCluster
metadata: {name: r}
spec:
  headGroupSpec:
    rayStartParams: {num-gpus: "0"}
    template:
      spec:
        containers: [{name: h, resources: {limits: {nvidia.com/gpu: 1}}}]
  workerGroupSpecs:
  - groupName: gpu
    replicas: 2
    numOfHosts: 2
    template:
      spec:
        containers: [{name: w, resources: {limits: {nvidia.com/gpu: 1}}}]`,
			want: map[string]inventory.Workload{
				"spec.headGroupSpec.template.spec":                   {Replicas: 1, Group: "spec.headGroupSpec", RayStartParams: map[string]string{"num-gpus": "0"}},
				"spec.workerGroupSpecs[groupName=gpu].template.spec": {Replicas: 4, Group: "spec.workerGroupSpecs[groupName=gpu]"},
			},
		},
		{
			name: "Deployment replicas; a Pod has no count",
			src: `apiVersion: apps/v1
kind: Deployment
metadata: {name: d, annotations: {a: b}}
spec:
  replicas: 3
  template:
    spec:
      nodeSelector: {karpenter.sh/nodepool: gpu}
      containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]`,
			want: map[string]inventory.Workload{"spec.template.spec": {Replicas: 3, Annotations: map[string]string{"a": "b"},
				NodeLabels: map[string][]string{"karpenter.sh/nodepool": {"gpu"}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := map[string]inventory.Workload{}
			for _, f := range detectYAML(t, tt.src, detect.Options{}) {
				if f.Workload == nil {
					t.Fatalf("%s: no workload facts", f.PodTemplatePath)
				}
				want, ok := tt.want[f.PodTemplatePath]
				if !ok {
					t.Fatalf("unexpected pod template %s", f.PodTemplatePath)
				}
				w := *f.Workload
				// Compare only the map keys the case names.
				w.Labels = only(w.Labels, want.Labels)
				w.Annotations = only(w.Annotations, want.Annotations)
				if want.NodeLabels == nil {
					w.NodeLabels = nil
				}
				got[f.PodTemplatePath] = w
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("workload facts (-want +got):\n%s", diff)
			}
		})
	}
}

func only[V any](m, keys map[string]V) map[string]V {
	if keys == nil {
		return nil
	}
	out := map[string]V{}
	for k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}
