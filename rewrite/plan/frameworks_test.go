package plan_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourcev1 "k8s.io/api/resource/v1"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rewrite/plan/plantest"
	"github.com/kubedra/kubedra/rules"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// fw is a finding of one container with the workload facts detection reads.
func fw(apiVersion, kind, name, path, container, res, qty string, wl *inventory.Workload) inventory.Finding {
	return inventory.Finding{Origin: inventory.Origin{Path: "a.yaml", ListIndex: -1}, Line: 10, APIVersion: apiVersion, Kind: kind,
		Name: name, Namespace: "ml", PodTemplatePath: path, Container: container, ContainerType: inventory.Container,
		Resource: res, Limit: qty, Workload: wl}
}

func realOpts(s plan.Strategy, minor int) plan.Options {
	return plan.Options{Strategy: s, Target: rules.Version{Major: 1, Minor: minor}, Encoder: plantest.Encoder{}}
}

func rulesOf(p *plan.Plan) []string {
	var out []string
	for _, d := range p.Diagnostics {
		out = append(out, d.Rule)
	}
	return out
}

func docPlan(t *testing.T, p *plan.Plan) *plan.DocPlan {
	t.Helper()
	if len(p.Files) != 1 || len(p.Files[0].Docs) != 1 {
		t.Fatalf("want one migrated document, got %d files; diagnostics: %v", len(p.Files), p.Diagnostics)
	}
	return p.Files[0].Docs[0]
}

// TestKnative: Knative rejects resources.claims, so scan calls the request
// lossy and migrate leaves it as it is under the claims strategy; the
// extended-resource path (auto) still serves it unchanged.
func TestKnative(t *testing.T) {
	t.Parallel()
	svc := fw("serving.knative.dev/v1", "Service", "llm", "spec.template.spec", "user-container", "nvidia.com/gpu", "1", &inventory.Workload{})
	serverless := fw("serving.kserve.io/v1beta1", "InferenceService", "isvc", "spec.predictor", "kserve-container", "nvidia.com/gpu", "1",
		&inventory.Workload{Annotations: map[string]string{plan.KServeModeAnnotation: "Serverless"}})
	standard := fw("serving.kserve.io/v1beta1", "InferenceService", "isvc", "spec.predictor", "kserve-container", "nvidia.com/gpu", "1",
		&inventory.Workload{Annotations: map[string]string{plan.KServeModeAnnotation: "Standard"}})

	mxjob := fw("kubeflow.org/v1", "MXJob", "mx", "spec.mxReplicaSpecs.Worker.template.spec", "mxnet", "nvidia.com/gpu", "1", &inventory.Workload{})
	for _, tt := range []struct {
		f    inventory.Finding
		want rules.Status
	}{{svc, rules.Lossy}, {serverless, rules.Lossy}, {standard, rules.Mappable}, {mxjob, rules.Lossy}} {
		items, _ := plan.Items([]inventory.Finding{tt.f}, rules.Default(), plan.ItemOptions{Rules: rules.Options{Target: rules.Version{Major: 1, Minor: 34}}})
		if got := items[0].Status; got != tt.want {
			t.Errorf("%s %s: scan status %s, want %s (%s)", tt.f.Kind, tt.f.Workload.Annotations, got, tt.want, items[0].Message())
		}
		if tt.want == rules.Lossy && (!strings.Contains(items[0].Mapping.Loss, "rejects") || !strings.Contains(items[0].Mapping.Fix, "extended-resource")) {
			t.Errorf("%s: the loss must give the reason and the extended-resource fix: %q / %q", tt.f.Kind, items[0].Mapping.Loss, items[0].Mapping.Fix)
		}
	}

	for _, f := range []inventory.Finding{svc, serverless, mxjob} {
		p, err := plan.Build([]inventory.Finding{f}, rules.Default(), realOpts(plan.Claims, 34))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Files) != 0 || !slices.Equal(rulesOf(p), []string{plan.RuleKnative}) {
			t.Errorf("%s under claims: want it left unchanged with %s, got %d files, %v", f.Kind, plan.RuleKnative, len(p.Files), p.Diagnostics)
		}
		auto, err := plan.Build([]inventory.Finding{f}, rules.Default(), realOpts(plan.Auto, 36))
		if err != nil {
			t.Fatal(err)
		}
		// The extended-resource path: a DeviceClass, or the driver's own one.
		if len(auto.DeviceClasses) == 0 && !slices.Contains(rulesOf(auto), plan.RuleKnative) && !slices.Contains(rulesOf(auto), plan.RuleDriverClass) {
			t.Errorf("%s under auto: neither a DeviceClass nor %s: %v", f.Kind, plan.RuleKnative, auto.Diagnostics)
		}
		if len(auto.Files) != 0 {
			t.Errorf("%s under auto: the Knative pod must not get claims", f.Kind)
		}
	}
	p, err := plan.Build([]inventory.Finding{standard}, rules.Default(), realOpts(plan.Claims, 34))
	if err != nil {
		t.Fatal(err)
	}
	if docPlan(t, p) == nil || slices.Contains(rulesOf(p), plan.RuleKnative) {
		t.Errorf("a Standard-mode InferenceService is a Deployment and is migrated: %v", p.Diagnostics)
	}
}

// TestRayNumGPUs: KubeRay reads num-gpus from the Ray container's GPU
// limit, which migration removes; migrate sets it unless the group does.
func TestRayNumGPUs(t *testing.T) {
	t.Parallel()
	path := "spec.workerGroupSpecs[groupName=gpu].template.spec"
	for _, tt := range []struct {
		name   string
		params map[string]string
		index  int
		want   []plan.FieldSet
	}{
		{name: "derived count", want: []plan.FieldSet{{Map: "spec.workerGroupSpecs[groupName=gpu].rayStartParams", Field: "num-gpus", Value: "4"}}},
		{name: "group sets it", params: map[string]string{"num-gpus": "2"}},
		{name: "not the Ray container", index: 1},
	} {
		f := fw("ray.io/v1", "RayCluster", "rc", path, "ray-worker", "nvidia.com/gpu", "4",
			&inventory.Workload{Group: "spec.workerGroupSpecs[groupName=gpu]", RayStartParams: tt.params})
		f.ContainerIndex = tt.index
		p, err := plan.Build([]inventory.Finding{f}, rules.Default(), realOpts(plan.Claims, 34))
		if err != nil {
			t.Fatal(err)
		}
		dp := docPlan(t, p)
		if !slices.Equal(dp.Sets, tt.want) {
			t.Errorf("%s: sets %v, want %v", tt.name, dp.Sets, tt.want)
		}
		if said := slices.Contains(rulesOf(p), plan.RuleRayNumGPUs); said != (tt.want != nil) {
			t.Errorf("%s: %s reported %v, want %v", tt.name, plan.RuleRayNumGPUs, said, tt.want != nil)
		}
	}
}

// TestRayAccelerators: KubeRay turns a TPU or NeuronCore limit into a Ray
// custom resource; migrate adds it to rayStartParams.resources, keeping
// the resources there, unless one of them is already an accelerator.
func TestRayAccelerators(t *testing.T) {
	t.Parallel()
	path := "spec.workerGroupSpecs[groupName=tpu].template.spec"
	for _, tt := range []struct {
		name   string
		params map[string]string
		want   []plan.FieldSet
	}{
		{name: "no resources", want: []plan.FieldSet{{Map: "spec.workerGroupSpecs[groupName=tpu].rayStartParams", Field: "resources", Value: `'{"TPU":4}'`}}},
		{name: "other resources kept", params: map[string]string{"resources": `'{"custom": 1}'`},
			want: []plan.FieldSet{{Map: "spec.workerGroupSpecs[groupName=tpu].rayStartParams", Field: "resources", Value: `'{"TPU":4,"custom":1}'`, Replace: true}}},
		{name: "TPU set by the group", params: map[string]string{"resources": `'{"TPU": 8}'`}},
		{name: "resources KubeRay cannot read either", params: map[string]string{"resources": `{oops`}},
	} {
		f := fw("ray.io/v1", "RayCluster", "rc", path, "ray-worker", "google.com/tpu", "4",
			&inventory.Workload{Group: "spec.workerGroupSpecs[groupName=tpu]", RayStartParams: tt.params})
		p, err := plan.Build([]inventory.Finding{f}, rules.Default(), realOpts(plan.Claims, 34))
		if err != nil {
			t.Fatal(err)
		}
		if dp := docPlan(t, p); !slices.Equal(dp.Sets, tt.want) {
			t.Errorf("%s: sets %v, want %v", tt.name, dp.Sets, tt.want)
		}
	}
}

// TestKueueUnmappedLeftAlone: with no Kueue Configuration among the
// inputs and nothing saying the cluster's maps the classes, a queued
// workload is left as it is (no plan), each request said why; the same
// workload outside Kueue is migrated.
func TestKueueUnmappedLeftAlone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		wl   *inventory.Workload
		opts func(*plan.Options)
		held bool
	}{
		{name: "queued (label)", wl: &inventory.Workload{Labels: map[string]string{plan.KueueQueueLabel: "q"}}, held: true},
		{name: "queued (annotation)", wl: &inventory.Workload{Annotations: map[string]string{plan.KueueQueueLabel: "q"}}, held: true},
		{name: "queued, the cluster maps the classes", wl: &inventory.Workload{Labels: map[string]string{plan.KueueQueueLabel: "q"}}, opts: func(o *plan.Options) { o.KueueMapsClasses = true }},
		{name: "not queued", wl: &inventory.Workload{}},
	} {
		opts := realOpts(plan.Claims, 34)
		if tt.opts != nil {
			tt.opts(&opts)
		}
		f := fw("batch/v1", "Job", "t", "spec.template.spec", "c", "nvidia.com/gpu", "1", tt.wl)
		p, err := plan.Build([]inventory.Finding{f}, rules.Default(), opts)
		if err != nil {
			t.Fatal(err)
		}
		held := slices.Contains(rulesOf(p), plan.RuleKueueUnmapped)
		if held != tt.held || held != (len(p.Files) == 0) {
			t.Errorf("%s: held %v with %d file plans, want held %v (%v)", tt.name, held, len(p.Files), tt.held, p.Diagnostics)
		}
	}
}

// TestKueueAndKarpenter: claim shapes Kueue cannot admit are flagged in a
// Kueue queue only; pods on Karpenter nodes are told that provisioning
// ignores their claims. (The cluster's Kueue is said to map the classes:
// TestKueueUnmappedLeftAlone is the case where nothing says so.)
func TestKueueAndKarpenter(t *testing.T) {
	t.Parallel()
	queued := &inventory.Workload{Labels: map[string]string{plan.KueueQueueLabel: "team-a"}}
	neuron := func(wl *inventory.Workload) []inventory.Finding {
		a := fw("batch/v1", "Job", "train", "spec.template.spec", "c", "aws.amazon.com/neuron", "4", wl)
		b := a
		b.Resource, b.Line = "vpc.amazonaws.com/efa", 11
		return []inventory.Finding{a, b}
	}
	for _, tt := range []struct {
		name     string
		findings []inventory.Finding
		want     []string
	}{
		{name: "constraint in a queue", findings: neuron(queued), want: []string{plan.RuleKueue}},
		{name: "constraint outside Kueue", findings: neuron(&inventory.Workload{})},
		{name: "a plain count in a queue", findings: []inventory.Finding{fw("batch/v1", "Job", "t", "spec.template.spec", "c", "nvidia.com/gpu", "1", queued)}},
		{name: "Karpenter node pool", findings: []inventory.Finding{fw("apps/v1", "Deployment", "d", "spec.template.spec", "c", "nvidia.com/gpu", "1",
			&inventory.Workload{NodeLabels: map[string][]string{"karpenter.sh/nodepool": {"gpu"}}})}, want: []string{plan.RuleKarpenter}},
		{name: "Karpenter instance label", findings: []inventory.Finding{fw("apps/v1", "Deployment", "d", "spec.template.spec", "c", "nvidia.com/gpu", "1",
			&inventory.Workload{NodeLabels: map[string][]string{"karpenter.k8s.aws/instance-gpu-name": {"l4"}}})}, want: []string{plan.RuleKarpenter}},
	} {
		opts := realOpts(plan.Claims, 34)
		opts.KueueMapsClasses = true
		p, err := plan.Build(tt.findings, rules.Default(), opts)
		if err != nil {
			t.Fatal(err)
		}
		docPlan(t, p)
		var got []string
		for _, r := range rulesOf(p) {
			if r == plan.RuleKueue || r == plan.RuleKarpenter {
				got = append(got, r)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v, want %v (%v)", tt.name, got, tt.want, p.Diagnostics)
		}
	}
}

// TestComputeDomain: a job whose GPU pods span GB200/GB300 NVL72 nodes
// gets a ComputeDomain and its channel claim next to its GPU claim.
func TestComputeDomain(t *testing.T) {
	t.Parallel()
	path := "spec.replicatedJobs[name=w].template.spec.template.spec"
	gb200 := map[string][]string{"node.kubernetes.io/instance-type": {"p6e-gb200.36xlarge"}}
	for _, tt := range []struct {
		name string
		kind string
		wl   inventory.Workload
		want bool
	}{
		{name: "4 pods on p6e-gb200", kind: "JobSet", wl: inventory.Workload{Replicas: 4, NodeLabels: gb200}, want: true},
		{name: "GB300 by product label", kind: "JobSet", wl: inventory.Workload{Replicas: 2, NodeLabels: map[string][]string{"nvidia.com/gpu.product": {"NVIDIA-GB300"}}}, want: true},
		{name: "one pod", kind: "JobSet", wl: inventory.Workload{Replicas: 1, NodeLabels: gb200}},
		{name: "not NVL72", kind: "JobSet", wl: inventory.Workload{Replicas: 4, NodeLabels: map[string][]string{"node.kubernetes.io/instance-type": {"p5.48xlarge"}}}},
		{name: "a Deployment is not a multi-node job", kind: "Deployment", wl: inventory.Workload{Replicas: 4, NodeLabels: gb200}},
		{name: "pods with claims of their own", kind: "JobSet", wl: inventory.Workload{Replicas: 4, NodeLabels: gb200, PodClaims: []string{"channel"}}},
	} {
		api := "jobset.x-k8s.io/v1alpha2"
		if tt.kind == "Deployment" {
			api = "apps/v1"
		}
		wl := tt.wl
		p, err := plan.Build([]inventory.Finding{fw(api, tt.kind, "nccl", path, "c", "nvidia.com/gpu", "4", &wl)}, rules.Default(), realOpts(plan.Claims, 34))
		if err != nil {
			t.Fatal(err)
		}
		dp := docPlan(t, p)
		var cd *plan.Object
		for _, o := range dp.Objects {
			if o.Kind == "ComputeDomain" {
				cd = o
			}
		}
		if (cd != nil) != tt.want || slices.Contains(rulesOf(p), plan.RuleComputeDomain) != tt.want {
			t.Errorf("%s: ComputeDomain %v, want %v (%v)", tt.name, cd != nil, tt.want, p.Diagnostics)
			continue
		}
		if !tt.want {
			continue
		}
		channel, _ := cd.Node.Pipe(yamlLookup("spec", "channel", "resourceClaimTemplate", "name"))
		nodes, _ := cd.Node.Pipe(yamlLookup("spec", "numNodes"))
		if channel == nil || nodes == nil || nodes.YNode().Value != "4" && tt.wl.Replicas == 4 {
			t.Fatalf("%s: ComputeDomain without channel template or numNodes:\n%s", tt.name, cd.Node.MustString())
		}
		pe := dp.Pods[0]
		if !slices.Contains(pe.ResourceClaims, plan.PodClaim{Name: plan.ChannelClaim, ResourceClaimTemplateName: channel.YNode().Value}) {
			t.Errorf("%s: pod claims %v lack the channel claim from %s", tt.name, pe.ResourceClaims, channel.YNode().Value)
		}
		if !slices.Contains(pe.Containers[0].Claims, plan.ContainerClaim{Name: plan.ChannelClaim}) {
			t.Errorf("%s: the GPU container does not use the channel: %v", tt.name, pe.Containers[0].Claims)
		}
	}
}

func yamlLookup(path ...string) yaml.Filter { return yaml.Lookup(path...) }

// threeRequests puts every request of a pod into one claim, one request each.
type threeRequests struct{}

func (threeRequests) Resolve(pod rules.Pod, _ rules.Options) (rules.Resolution, error) {
	c := rules.Claim{Name: "devs"}
	var res rules.Resolution
	for i, r := range pod.Requests {
		name := fmt.Sprintf("r%d", i)
		c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, resourcev1.DeviceRequest{Name: name,
			Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "x.example.com", Count: 1}})
		res.Decisions = append(res.Decisions, rules.Decision{Status: rules.Mappable, Claim: 0, Request: name, DeviceClass: "x.example.com", Count: 1})
		_ = r
	}
	res.Claims = []rules.Claim{c}
	return res, nil
}

// TestOneRefPerClaim: a container names each claim once (a container's
// claims are a list map keyed by name: CRD schemas reject duplicates), and
// one that used only some of a claim's requests is told it sees them all.
func TestOneRefPerClaim(t *testing.T) {
	t.Parallel()
	a := fw("kubeflow.org/v2beta1", "MPIJob", "j", "spec.mpiReplicaSpecs.Worker.template.spec", "main", "example.com/a", "1", &inventory.Workload{})
	b := a
	b.Resource, b.Line = "example.com/b", 11
	side := a
	side.Container, side.ContainerIndex, side.Resource, side.Line = "side", 1, "example.com/c", 12
	for _, tt := range []struct {
		name     string
		findings []inventory.Finding
		want     map[string][]plan.ContainerClaim
		warn     bool
	}{
		{name: "all requests of the claim", findings: []inventory.Finding{a, b},
			want: map[string][]plan.ContainerClaim{"main": {{Name: "devs"}}}},
		{name: "some requests of the claim", findings: []inventory.Finding{a, b, side},
			want: map[string][]plan.ContainerClaim{"main": {{Name: "devs"}}, "side": {{Name: "devs", Request: "r2"}}}, warn: true},
	} {
		p, err := plan.Build(tt.findings, threeRequests{}, realOpts(plan.Claims, 34))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]plan.ContainerClaim{}
		for _, c := range docPlan(t, p).Pods[0].Containers {
			got[c.Name] = c.Claims
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: container claims (-want +got):\n%s", tt.name, diff)
		}
		if warned := slices.Contains(rulesOf(p), plan.RuleClaimRequests); warned != tt.warn {
			t.Errorf("%s: %s reported %v, want %v: %v", tt.name, plan.RuleClaimRequests, warned, tt.warn, p.Diagnostics)
		}
	}
}
