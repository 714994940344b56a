package plan

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	resourcev1 "k8s.io/api/resource/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// Rule ids of what migrate knows about the frameworks around a pod.
const (
	// RuleKnative: a Knative Service (or a KServe InferenceService that
	// Knative runs, or an MXJob, whose CRD predates claims) would be
	// rejected with resource claims.
	RuleKnative = "migrate/knative"
	// RuleKServeMode: an InferenceService without a deployment mode, which
	// Knative runs when KServe's default is Serverless.
	RuleKServeMode = "migrate/kserve-deployment-mode"
	// RuleRayNumGPUs: rayStartParams.num-gpus (or resources, for TPUs and
	// NeuronCores) set from the device count.
	RuleRayNumGPUs = "migrate/ray-num-gpus"
	// RuleKueue: a claim shape Kueue cannot admit, in a Kueue queue.
	RuleKueue = "migrate/kueue-inadmissible"
	// RuleKueueUnmapped: a workload in a Kueue queue left as it is, since
	// no Kueue Configuration known maps the classes its claims would use.
	RuleKueueUnmapped = "migrate/kueue-unmapped"
	// RuleKarpenter: a pod on Karpenter-provisioned nodes that no longer
	// triggers provisioning.
	RuleKarpenter = "migrate/karpenter-provisioning"
	// RuleComputeDomain: a ComputeDomain and its IMEX channel claim
	// proposed for a multi-node NVLink workload.
	RuleComputeDomain = "migrate/compute-domain"
)

// Labels and annotations the frameworks read.
const (
	// KueueQueueLabel puts a workload in a Kueue LocalQueue (the annotation
	// of the same name is the older form).
	KueueQueueLabel = "kueue.x-k8s.io/queue-name"
	// KServeModeAnnotation picks how KServe runs an InferenceService.
	KServeModeAnnotation = "serving.kserve.io/deploymentMode"
	// ChannelClaim is the pod claim name of a ComputeDomain's IMEX channel.
	ChannelClaim = "compute-domain-channel"
)

// knativeFix is what a Knative workload can do instead of claims.
const knativeFix = "use --strategy extended-resource (or auto): a DeviceClass with extendedResourceName serves the unchanged request (KEP-5004, on by default from Kubernetes 1.36), and the Service keeps only limits"

// knative says why a pod template cannot take resource claims because
// Knative Serving runs it (or because its kind's CRD predates them), and
// what to do instead; ok is false otherwise. Knative's webhook keeps only
// limits and requests of container resources and has no pod
// resourceClaims (knative/serving pkg/apis/serving/fieldmask.go,
// ResourceRequirementsMask), and its CRDs' schemas have neither field.
func knative(f inventory.Finding) (why, fix string, ok bool) {
	switch g := apiGroup(f.APIVersion); {
	case g == "kubeflow.org" && f.Kind == "MXJob":
		// MXJob left the training operator in v1.8: the last CRD that
		// serves it (v1.7.0) embeds a pod spec from before
		// resourceClaimTemplateName and rejects it.
		return "the MXJob CRD (Kubeflow training operator v1.7, the last release with MXJob) embeds a pod spec from before resource.k8s.io/v1 and rejects resourceClaimTemplateName",
			"use --strategy extended-resource (or auto): a DeviceClass with extendedResourceName serves the unchanged request (KEP-5004, on by default from Kubernetes 1.36); or move the job to a kind whose operator takes claims (PyTorchJob, Trainer)", true
	case g == "serving.knative.dev":
		return "Knative Serving's webhook rejects resources.claims and pod resourceClaims (it allows only limits and requests in container resources)", knativeFix, true
	case g == "serving.kserve.io" && f.Kind == "InferenceService" && f.Workload != nil:
		switch f.Workload.Annotations[KServeModeAnnotation] {
		case "Serverless", "Knative":
			return "KServe runs this InferenceService as a Knative Service (" + KServeModeAnnotation + ": " + f.Workload.Annotations[KServeModeAnnotation] +
					"), and Knative Serving's webhook rejects resources.claims and pod resourceClaims",
				knativeFix + "; or set " + KServeModeAnnotation + ": Standard (a Deployment, which takes claims)", true
		}
	}
	return "", "", false
}

// frameworkItem adjusts a scan decision for the framework around the
// request: a Knative-run pod cannot take the claims the rules map it to.
func frameworkItem(f inventory.Finding, d *rules.Decision) {
	why, fix, ok := knative(f)
	if !ok || d.Status != rules.Mappable {
		return
	}
	d.Status = rules.Lossy
	d.Loss = why + "; the claims strategy cannot migrate it"
	d.Fix = fix
}

// knativeLeft reports the Knative-run pod templates among pods as left
// unchanged and returns the others.
func (b *builder) knativeLeft(pods []*pod) []*pod {
	var out []*pod
	for _, pd := range pods {
		why, fix, ok := knative(pd.findings[0])
		if !ok {
			out = append(out, pd)
			continue
		}
		for i, f := range pd.findings {
			if decision(pd.res, i).Claim >= 0 {
				b.diag(inventory.Warning, RuleKnative, f, "left unchanged: the claims strategy cannot migrate it: "+why, fix)
			}
		}
	}
	return out
}

// frameworks adds what the frameworks around a migrated document need:
// KubeRay's GPU count, Kueue and Karpenter warnings, a ComputeDomain for
// multi-node NVLink jobs. It runs after claims planned the document.
func (b *builder) frameworks(dp *DocPlan, pods []*pod) {
	if len(dp.Pods) == 0 {
		return
	}
	b.oneRefPerClaim(dp, pods)
	b.kserveMode(pods)
	for _, pd := range pods {
		b.rayNumGPUs(dp, pd)
		b.rayAccelerator(dp, pd)
		b.kueue(pd)
	}
	b.karpenter(pods)
	b.computeDomain(dp, pods)
}

// kserveMode warns about InferenceServices whose deployment mode is the
// cluster's default.
func (b *builder) kserveMode(pods []*pod) {
	f := pods[0].findings[0]
	if apiGroup(f.APIVersion) != "serving.kserve.io" || f.Kind != "InferenceService" || f.Workload == nil {
		return
	}
	if _, set := f.Workload.Annotations[KServeModeAnnotation]; set {
		return
	}
	b.diag(inventory.Warning, RuleKServeMode, f,
		"the InferenceService has no "+KServeModeAnnotation+" annotation: where KServe's default mode is Serverless (the inferenceservice-config KServe ships), Knative runs it and its webhook rejects the claims migrate added",
		"set "+KServeModeAnnotation+": Standard, or migrate it with --strategy extended-resource")
}

// rayGPUKey is KubeRay's test for a GPU resource (IsGPUResourceKey in
// ray-operator/controllers/ray/utils/resources.go).
func rayGPUKey(name string) bool {
	return strings.HasSuffix(name, "gpu") || strings.HasPrefix(name, "nvidia.com/mig-")
}

// rayNumGPUs sets a KubeRay group's rayStartParams.num-gpus: KubeRay
// derives it from the Ray container's GPU limit (the first container),
// which migration moves to a claim, so Ray would see no GPU.
func (b *builder) rayNumGPUs(dp *DocPlan, pd *pod) {
	f0 := pd.findings[0]
	wl := f0.Workload
	if apiGroup(f0.APIVersion) != "ray.io" || wl == nil || wl.Group == "" {
		return
	}
	if _, set := wl.RayStartParams["num-gpus"]; set {
		return
	}
	// KubeRay takes the first GPU key in sorted order.
	var keys []int
	for i, f := range pd.findings {
		if f.ContainerType == inventory.Container && f.ContainerIndex == 0 && rayGPUKey(f.Resource) && decision(pd.res, i).Claim >= 0 {
			keys = append(keys, i)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.SliceStable(keys, func(a, c int) bool { return pd.findings[keys[a]].Resource < pd.findings[keys[c]].Resource })
	f := pd.findings[keys[0]]
	n, err := strconv.Atoi(f.Quantity())
	if err != nil || n <= 0 {
		return
	}
	dp.Sets = append(dp.Sets, FieldSet{Map: wl.Group + ".rayStartParams", Field: "num-gpus", Value: strconv.Itoa(n)})
	b.diag(inventory.Info, RuleRayNumGPUs, f,
		fmt.Sprintf("set %s.rayStartParams.num-gpus: %q: KubeRay derives Ray's GPU count from the %s limit of the Ray container, which is now a claim; without it Ray would see no GPU on this group", wl.Group, strconv.Itoa(n), f.Resource), "")
}

// rayAccelerators are the accelerators KubeRay turns into a Ray custom
// resource in rayStartParams.resources (customAcceleratorToRayResourceMap
// in ray-operator/controllers/ray/common/pod.go).
var rayAccelerators = map[string]string{
	"aws.amazon.com/neuroncore": "neuron_cores",
	"google.com/tpu":            "TPU",
}

// rayAccelerator adds the Ray custom resource KubeRay derived from the Ray
// container's TPU or NeuronCore limit, which migration moves to a claim,
// to the group's rayStartParams.resources (unless one is there already):
// Ray tasks that ask for {"TPU": 4} would otherwise never be placed.
func (b *builder) rayAccelerator(dp *DocPlan, pd *pod) {
	f0 := pd.findings[0]
	wl := f0.Workload
	if apiGroup(f0.APIVersion) != "ray.io" || wl == nil || wl.Group == "" {
		return
	}
	res := map[string]float64{}
	raw, had := wl.RayStartParams["resources"]
	if had {
		if err := json.Unmarshal([]byte(strings.Trim(raw, "'\"` ")), &res); err != nil {
			return // KubeRay cannot read it either
		}
	}
	for _, name := range rayAccelerators {
		if _, ok := res[name]; ok {
			return
		}
	}
	var keys []int
	for i, f := range pd.findings {
		if _, ok := rayAccelerators[f.Resource]; ok && f.ContainerType == inventory.Container && f.ContainerIndex == 0 && decision(pd.res, i).Claim >= 0 {
			keys = append(keys, i)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.SliceStable(keys, func(a, c int) bool { return pd.findings[keys[a]].Resource < pd.findings[keys[c]].Resource })
	f := pd.findings[keys[0]]
	n, err := strconv.Atoi(f.Quantity())
	if err != nil || n <= 0 {
		return
	}
	res[rayAccelerators[f.Resource]] = float64(n)
	js, err := json.Marshal(res)
	if err != nil {
		return
	}
	value := "'" + string(js) + "'" // as KubeRay writes it
	dp.Sets = append(dp.Sets, FieldSet{Map: wl.Group + ".rayStartParams", Field: "resources", Value: value, Replace: had})
	b.diag(inventory.Info, RuleRayNumGPUs, f,
		fmt.Sprintf("set %s.rayStartParams.resources: %s: KubeRay derives Ray's %s resource from the %s limit of the Ray container, which is now a claim; without it Ray tasks that ask for %s are never placed", wl.Group, value, rayAccelerators[f.Resource], f.Resource, rayAccelerators[f.Resource]), "")
}

// kueueQueue is the Kueue LocalQueue a workload is in, or "".
func kueueQueue(wl *inventory.Workload) string {
	if wl == nil {
		return ""
	}
	return or(wl.Labels[KueueQueueLabel], wl.Annotations[KueueQueueLabel])
}

// kueueAdmitted drops from active the pods in a Kueue queue when no Kueue
// Configuration is among the inputs: Kueue would not admit their Workloads
// once they claim devices of a class its Configuration does not map
// ("DeviceClass ... is not mapped in DRA configuration", peers.md §1.4),
// so they are left as they are, each request said so with the snippet,
// unless Options say that the cluster's Kueue maps the classes
// (KueueMapsClasses). A Configuration in the input gets the mappings the
// run needs (Governance).
func (b *builder) kueueAdmitted(active []*pod) []*pod {
	if b.opts.KueueMapsClasses || b.kueueConfigured() {
		return active
	}
	return slices.DeleteFunc(active, func(pd *pod) bool {
		queue := kueueQueue(pd.findings[0].Workload)
		if queue == "" {
			return false
		}
		var need []KueueMapping
		var missing []string
		for i, f := range pd.findings {
			dec := decision(pd.res, i)
			if dec.Claim < 0 || dec.Claim >= len(pd.res.Claims) {
				continue
			}
			for _, c := range claimClasses(pd.res.Claims[dec.Claim]) {
				if !slices.Contains(missing, c) {
					missing = append(missing, c)
					need = append(need, KueueMapping{Name: f.Resource, Classes: []string{c}})
				}
			}
		}
		if len(missing) == 0 {
			return false
		}
		for _, f := range pd.findings {
			b.diag(inventory.Warning, RuleKueueUnmapped, f,
				fmt.Sprintf("left unchanged: the workload is in Kueue queue %q, and no Kueue Configuration is among the inputs to map DeviceClass %s: Kueue would not admit it once it claims devices", queue, strings.Join(missing, ", ")),
				"add these deviceClassMappings to Kueue's Configuration (ConfigMap kueue-manager-config, controller_manager_config.yaml), restart Kueue, and migrate with the Configuration among the inputs; or, when the cluster's Kueue maps them already, pass --kueue-maps-classes (.kubedra.yaml kueueMapsClasses: true):\n"+KueueSnippet(need))
		}
		return true
	})
}

// kueueConfigured reports whether the Planner learnt of a Kueue
// Configuration.
func (p *Planner) kueueConfigured() bool {
	return slices.ContainsFunc(p.govAll, func(f inventory.GovFinding) bool { return f.What == inventory.GovKueueConfig })
}

// kueueMapped are the DeviceClasses the Kueue Configurations the Planner
// learnt of map.
func (p *Planner) kueueMapped() map[string]bool {
	mapped := map[string]bool{}
	for _, f := range p.govAll {
		if f.What == inventory.GovKueueConfig {
			for _, cs := range f.Mappings {
				for _, c := range cs {
					mapped[c] = true
				}
			}
		}
	}
	return mapped
}

// claimClasses are the DeviceClasses a claim's requests name.
func claimClasses(c rules.Claim) []string {
	var out []string
	for _, r := range c.Spec.Devices.Requests {
		if r.Exactly != nil && r.Exactly.DeviceClassName != "" {
			out = append(out, r.Exactly.DeviceClassName)
		}
		for _, s := range r.FirstAvailable {
			out = append(out, s.DeviceClassName)
		}
	}
	return out
}

// kueue warns when a pod in a Kueue queue gets a claim Kueue cannot admit
// (peers.md §1.4: Kueue's DRA limitations, kubernetes-sigs/kueue v0.19).
func (b *builder) kueue(pd *pod) {
	f0 := pd.findings[0]
	queue := kueueQueue(f0.Workload)
	if queue == "" {
		return
	}
	var why []string
	add := func(s string) {
		if !slices.Contains(why, s) {
			why = append(why, s)
		}
	}
	for ci, c := range pd.res.Claims {
		if !slices.ContainsFunc(pd.res.Decisions, func(d rules.Decision) bool { return d.Claim == ci }) {
			continue
		}
		if c.Shared {
			add("a shared ResourceClaim (Kueue counts ResourceClaimTemplates only)")
		}
		if len(c.Spec.Devices.Constraints) > 0 {
			add("matchAttribute constraints")
		}
		if len(c.Spec.Devices.Config) > 0 {
			add("per-request config")
		}
		for _, r := range c.Spec.Devices.Requests {
			if len(r.FirstAvailable) > 0 {
				add("firstAvailable subrequests")
			}
			if e := r.Exactly; e != nil {
				if e.AllocationMode == resourcev1.DeviceAllocationModeAll {
					add("allocationMode All")
				}
				if e.AdminAccess != nil && *e.AdminAccess {
					add("adminAccess")
				}
			}
		}
	}
	if len(why) == 0 {
		return
	}
	b.diag(inventory.Warning, RuleKueue, f0,
		fmt.Sprintf("the workload is in Kueue queue %q, and its claim uses %s, which Kueue's DRA integration cannot admit: the Workload stays pending", queue, strings.Join(why, ", ")),
		"keep this workload on the device plugin, or use --strategy extended-resource (Kueue v0.19 admits KEP-5004 pods by the class's extendedResourceName); Kueue also needs a deviceClassMappings entry for each DeviceClass its claims use")
}

// karpenterKey reports whether a node label is one Karpenter provisions
// by (its NodePool or instance labels).
func karpenterKey(k string) bool {
	for _, p := range []string{"karpenter.sh/", "karpenter.k8s.aws/", "karpenter.azure.com/", "karpenter.k8s.gcp/"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// karpenter warns once per workload whose pods select Karpenter nodes.
func (b *builder) karpenter(pods []*pod) {
	for _, pd := range pods {
		wl := pd.findings[0].Workload
		if wl == nil {
			continue
		}
		var keys []string
		for k, vs := range wl.NodeLabels {
			if karpenterKey(k) {
				keys = append(keys, k+"="+strings.Join(vs, "|"))
			}
		}
		if len(keys) == 0 {
			continue
		}
		sort.Strings(keys)
		b.diag(inventory.Warning, RuleKarpenter, pd.findings[0],
			fmt.Sprintf("the pods select Karpenter-provisioned nodes (%s); Karpenter ignores DRA requests by default (IGNORE_DRA_REQUESTS=true through v1.14), so the migrated pods, which no longer ask for %s, do not make it provision a node", strings.Join(keys, ", "), pd.findings[0].Resource),
			"keep capacity for them in a static NodePool or existing nodes, run Karpenter with IGNORE_DRA_REQUESTS=false where its provider publishes the devices, or use --strategy extended-resource (the pods keep their extended resource)")
		return
	}
}

// multiNodeKinds run one job's pods on several nodes together.
var multiNodeKinds = map[string]bool{
	"jobset.x-k8s.io/JobSet":                      true,
	"leaderworkerset.x-k8s.io/LeaderWorkerSet":    true,
	"kubeflow.org/MPIJob":                         true,
	"kubeflow.org/PyTorchJob":                     true,
	"trainer.kubeflow.org/TrainingRuntime":        true,
	"trainer.kubeflow.org/ClusterTrainingRuntime": true,
}

// nvl72 reports the node label value that selects GB200/GB300 NVL72 nodes
// (multi-node NVLink: EKS p6e-gb200 instances, GPU products GB200/GB300),
// or "".
func nvl72(labels map[string][]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		instance := strings.HasSuffix(k, "instance-type") || strings.HasPrefix(k, "karpenter.k8s.aws/instance-")
		product := k == "nvidia.com/gpu.product" || k == "nvidia.com/gpu.family" || strings.HasSuffix(k, "instance-gpu-name")
		if !instance && !product {
			continue
		}
		for _, v := range labels[k] {
			l := strings.ToLower(v)
			if strings.Contains(l, "gb200") || strings.Contains(l, "gb300") {
				return k + "=" + v
			}
		}
	}
	return ""
}

// computeDomain proposes a ComputeDomain and its IMEX channel claim for a
// job whose GPU pods span several NVL72 nodes: NVIDIA's DRA driver gives
// multi-node NVLink only to pods of one ComputeDomain (its demo
// demo/specs/imex/nvbandwidth-test-job-1.yaml has this shape).
func (b *builder) computeDomain(dp *DocPlan, pods []*pod) {
	f0 := pods[0].findings[0]
	if !multiNodeKinds[apiGroup(f0.APIVersion)+"/"+f0.Kind] {
		return
	}
	var gpuPods []int // indexes into dp.Pods
	total, label := 0, ""
	for _, pd := range pods {
		wl := pd.findings[0].Workload
		if wl == nil {
			continue
		}
		nvidia := false
		for i := range pd.findings {
			if d := decision(pd.res, i); d.Claim >= 0 && d.Driver == "gpu.nvidia.com" {
				nvidia = true
			}
		}
		if !nvidia {
			continue
		}
		if len(wl.PodClaims) > 0 {
			return // the pods already have claims of their own (a channel?): leave them to the user
		}
		if l := nvl72(wl.NodeLabels); l != "" {
			label = l
		}
		idx := slices.IndexFunc(dp.Pods, func(pe PodEdit) bool { return pe.Path == pd.findings[0].PodTemplatePath })
		if idx < 0 {
			continue
		}
		gpuPods = append(gpuPods, idx)
		total += max(wl.Replicas, 1)
	}
	if label == "" || total < 2 || len(gpuPods) == 0 {
		return
	}
	wlName := strings.TrimRight(f0.Name, "-")
	cdName := b.name(inventory.ObjectRef{Kind: "ComputeDomain", Namespace: f0.Namespace, Name: wlName + "-compute-domain"}, Key(f0)+"\x00compute-domain", f0.Kind)
	channel := b.name(inventory.ObjectRef{Kind: "ResourceClaimTemplate", Namespace: f0.Namespace, Name: cdName + "-channel"}, Key(f0)+"\x00compute-domain-channel", f0.Kind)
	cd, err := computeDomainObject(cdName, f0.Namespace, channel, total)
	if err != nil {
		b.diag(inventory.Error, RuleEncode, f0, "encoding the ComputeDomain: "+err.Error(), "")
		return
	}
	dp.Objects = append(dp.Objects, &Object{Kind: "ComputeDomain", Name: cdName, Namespace: f0.Namespace, Node: cd})
	for _, idx := range gpuPods {
		pe := &dp.Pods[idx]
		pe.ResourceClaims = append(pe.ResourceClaims, PodClaim{Name: ChannelClaim, ResourceClaimTemplateName: channel})
		for ci := range pe.Containers {
			if c := &pe.Containers[ci]; len(c.Claims) > 0 {
				c.Claims = append(c.Claims, ContainerClaim{Name: ChannelClaim})
			}
		}
	}
	b.diag(inventory.Warning, RuleComputeDomain, f0,
		fmt.Sprintf("the job's %d GPU pods run on multi-node NVLink nodes (%s): proposed ComputeDomain %s (numNodes: %d) and its IMEX channel claim %q from ResourceClaimTemplate %s, which the driver's ComputeDomain controller creates (NVIDIA DRA driver, compute-domain.nvidia.com)",
			total, label, cdName, total, ChannelClaim, channel),
		fmt.Sprintf("check that the pods land one per node (numNodes is then the node count, %d here; set it to the number of nodes otherwise), and the driver's IMEX daemon mode: with IMEXDaemonsWithDNSNames (on by default since driver 0.2) numNodes only sets when the ComputeDomain reports Ready and may be 0; with it off, pods wait until numNodes IMEX daemons have joined", total))
}

// computeDomainObject encodes a ComputeDomain (resource.nvidia.com/v1beta1,
// the CRD of NVIDIA's DRA driver) whose channel template is channel.
func computeDomainObject(name, namespace, channel string, numNodes int) (*yaml.RNode, error) {
	n, err := yaml.Parse("apiVersion: resource.nvidia.com/v1beta1\nkind: ComputeDomain\nmetadata:\n  name: x\n")
	if err != nil {
		return nil, err
	}
	if err := n.SetName(name); err != nil {
		return nil, err
	}
	if namespace != "" {
		if err := n.SetNamespace(namespace); err != nil {
			return nil, err
		}
	}
	spec, err := n.Pipe(yaml.LookupCreate(yaml.MappingNode, "spec"))
	if err != nil {
		return nil, err
	}
	nodes := yaml.NewScalarRNode(strconv.Itoa(numNodes))
	nodes.YNode().Tag = yaml.NodeTagInt
	if err := spec.PipeE(yaml.SetField("numNodes", nodes)); err != nil {
		return nil, err
	}
	tmpl, err := spec.Pipe(yaml.LookupCreate(yaml.MappingNode, "channel", "resourceClaimTemplate"))
	if err != nil {
		return nil, err
	}
	return n, tmpl.PipeE(yaml.SetField("name", yaml.NewStringRNode(channel)))
}
