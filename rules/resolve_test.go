package rules

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory"
)

func req(container, res, qty string) PodRequest {
	return PodRequest{Container: container, Resource: res, Quantity: qty, ContainerType: inventory.Container}
}

// shape summarises a resolution: claims with their requests (name:class:count)
// and constraints, and the decisions' status/claim/request.
func shape(r Resolution) []string {
	var out []string
	for _, c := range r.Claims {
		line := "claim " + c.Name
		if c.Shared {
			line += " shared"
		}
		for _, q := range c.Spec.Devices.Requests {
			line += " " + q.Name + ":" + q.Exactly.DeviceClassName + ":" + itoa(q.Exactly.Count)
		}
		for _, k := range c.Spec.Devices.Constraints {
			line += " match(" + strings.Join(k.Requests, ",") + ")=" + string(*k.MatchAttribute)
		}
		for _, cfg := range c.Spec.Devices.Config {
			var p map[string]any
			_ = json.Unmarshal(cfg.Opaque.Parameters.Raw, &p)
			line += " config(" + strings.Join(cfg.Requests, ",") + ")=" + p["kind"].(string)
		}
		out = append(out, line)
	}
	for _, d := range r.Decisions {
		line := string(d.Status) + " claim=" + itoa(int64(d.Claim)) + " request=" + d.Request + " count=" + itoa(d.Count)
		if len(d.Refs) > 1 {
			line += " refs="
			for i, ref := range d.Refs {
				if i > 0 {
					line += ","
				}
				line += itoa(int64(ref.Claim)) + "/" + ref.Request
			}
		}
		out = append(out, line)
	}
	return out
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func TestResolveShapes(t *testing.T) {
	t.Parallel()
	s := Default()
	trn2 := nodeSel("node.kubernetes.io/instance-type", "trn2.48xlarge")
	tests := []struct {
		name string
		pod  Pod
		opts Options
		want []string
	}{
		{
			name: "containers get their own requests; an init container reuses a long-lived container's",
			pod: Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1"), req("b", "nvidia.com/gpu", "2"),
				{Container: "init", ContainerType: inventory.InitContainer, Resource: "nvidia.com/gpu", Quantity: "1"}}},
			want: []string{"claim gpu gpu-a:gpu.nvidia.com:1 gpu-b:gpu.nvidia.com:2",
				"mappable claim=0 request=gpu-a count=1", "mappable claim=0 request=gpu-b count=2", "mappable claim=0 request=gpu-a count=1"},
		},
		{
			name: "an init container asking for more devices than the app containers reuses theirs and asks only the rest",
			pod: Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1"),
				{Container: "init", ContainerType: inventory.InitContainer, Resource: "nvidia.com/gpu", Quantity: "2"}}},
			want: []string{"claim gpu gpu-a:gpu.nvidia.com:1 gpu-init:gpu.nvidia.com:1",
				"mappable claim=0 request=gpu-a count=1", "mappable claim=0 request=gpu-a count=2 refs=0/gpu-a,0/gpu-init"},
		},
		{
			name: "an init container of 2 GPUs before two app containers of 1 takes both of theirs: the pod asks max(2, 1+1)",
			pod: Pod{Requests: []PodRequest{
				{Container: "init", ContainerType: inventory.InitContainer, Resource: "nvidia.com/gpu", Quantity: "2"},
				req("a", "nvidia.com/gpu", "1"), {Container: "b", ContainerIndex: 1, ContainerType: inventory.Container, Resource: "nvidia.com/gpu", Quantity: "1"}}},
			want: []string{"claim gpu gpu-a:gpu.nvidia.com:1 gpu-b:gpu.nvidia.com:1",
				"mappable claim=0 request=gpu-a count=2 refs=0/gpu-a,0/gpu-b", "mappable claim=0 request=gpu-a count=1", "mappable claim=0 request=gpu-b count=1"},
		},
		{
			name: "sequential init containers share one request; a sidecar keeps its own",
			pod: Pod{Requests: []PodRequest{
				{Container: "fetch", ContainerType: inventory.InitContainer, Resource: "nvidia.com/gpu", Quantity: "1"},
				{Container: "warm", ContainerIndex: 1, ContainerType: inventory.InitContainer, Resource: "nvidia.com/gpu", Quantity: "1"},
				{Container: "proxy", ContainerIndex: 2, ContainerType: inventory.SidecarContainer, Resource: "nvidia.com/gpu", Quantity: "1"},
				req("a", "vpc.amazonaws.com/efa", "1")}},
			want: []string{"claim gpu-efa gpu:gpu.nvidia.com:1 efa:efa.networking.k8s.aws:1",
				"mappable claim=0 request=gpu count=1", "mappable claim=0 request=gpu count=1",
				"mappable claim=0 request=gpu count=1", "mappable claim=0 request=efa count=1"},
		},
		{
			name: "an init container after a running sidecar does not share its device",
			pod: Pod{Requests: []PodRequest{
				{Container: "proxy", ContainerIndex: 0, ContainerType: inventory.SidecarContainer, Resource: "nvidia.com/gpu", Quantity: "1"},
				{Container: "warm", ContainerIndex: 1, ContainerType: inventory.InitContainer, Resource: "nvidia.com/gpu", Quantity: "1"}}},
			want: []string{"claim gpu gpu-proxy:gpu.nvidia.com:1 gpu-warm:gpu.nvidia.com:1",
				"mappable claim=0 request=gpu-proxy count=1", "mappable claim=0 request=gpu-warm count=1"},
		},
		{
			name: "one GPU and EFA are aligned on the PCIe root",
			pod:  Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1"), req("a", "vpc.amazonaws.com/efa", "1")}},
			want: []string{"claim gpu-efa gpu:gpu.nvidia.com:1 efa:efa.networking.k8s.aws:1 match(gpu,efa)=resource.kubernetes.io/pcieRoot",
				"mappable claim=0 request=gpu count=1", "mappable claim=0 request=efa count=1"},
		},
		{
			name: "eight GPUs and 32 EFA are more than a claim holds: two claims",
			pod:  Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "8"), req("a", "vpc.amazonaws.com/efa", "32")}},
			want: []string{"claim gpu gpu:gpu.nvidia.com:8", "claim efa efa:efa.networking.k8s.aws:32",
				"mappable claim=0 request=gpu count=8", "mappable claim=1 request=efa count=32"},
		},
		{
			name: "a p5 job: 8 GPUs and 32 EFA in one container, 1 and 1 in another; each claim at most 32 devices, each used by a container whole or by one request",
			pod: Pod{Requests: []PodRequest{req("main", "nvidia.com/gpu", "8"), req("main", "vpc.amazonaws.com/efa", "32"),
				{Container: "side", ContainerIndex: 1, ContainerType: inventory.Container, Resource: "nvidia.com/gpu", Quantity: "1"},
				{Container: "side", ContainerIndex: 1, ContainerType: inventory.Container, Resource: "vpc.amazonaws.com/efa", Quantity: "1"}}},
			// The side container's GPU and EFA would be two of three requests
			// of the first claim, and a container names a claim once: it gets
			// a claim of its own.
			want: []string{"claim gpu gpu-main:gpu.nvidia.com:8", "claim efa efa-main:efa.networking.k8s.aws:32",
				"claim gpu-efa gpu-side:gpu.nvidia.com:1 efa-side:efa.networking.k8s.aws:1 match(gpu-side,efa-side)=resource.kubernetes.io/pcieRoot",
				"mappable claim=0 request=gpu-main count=8", "mappable claim=1 request=efa-main count=32",
				"mappable claim=2 request=gpu-side count=1", "mappable claim=2 request=efa-side count=1"},
		},
		{
			name: "a request of more than 32 devices is split in requests of at most 32",
			pod:  Pod{Requests: []PodRequest{req("a", "vpc.amazonaws.com/efa", "40")}},
			want: []string{"claim efa efa:efa.networking.k8s.aws:32", "claim efa-2 efa-2:efa.networking.k8s.aws:8",
				"mappable claim=0 request=efa count=40 refs=0/efa,1/efa-2"},
		},
		{
			name: "Neuron and EFA use the smallest device group that fits",
			pod:  Pod{Requests: []PodRequest{req("a", "aws.amazon.com/neuron", "3"), req("a", "vpc.amazonaws.com/efa", "2")}},
			want: []string{"claim neuron-efa neuron:neuron.aws.com:3 efa:efa.networking.k8s.aws:2 match(neuron,efa)=resource.aws.com/devicegroup4_id",
				"mappable claim=0 request=neuron count=3", "mappable claim=0 request=efa count=2"},
		},
		{
			name: "16 Neuron devices on trn2 keep contiguity",
			pod:  Pod{Requests: []PodRequest{req("a", "aws.amazon.com/neuron", "16")}, Hints: []inventory.Hint{trn2}},
			want: []string{"claim neuron neuron:neuron.aws.com:16 match(neuron)=resource.aws.com/devicegroup16_id",
				"mappable claim=0 request=neuron count=16"},
		},
		{
			name: "Neuron devices without an EFA instance family get no group constraint",
			pod:  Pod{Requests: []PodRequest{req("a", "aws.amazon.com/neuron", "4")}},
			want: []string{"claim neuron neuron:neuron.aws.com:4", "mappable claim=0 request=neuron count=4"},
		},
		{
			name: "neuroncores round up to devices on trn2",
			pod:  Pod{Requests: []PodRequest{req("a", "aws.amazon.com/neuroncore", "6")}, Hints: []inventory.Hint{trn2}},
			opts: Options{AllowLossy: true},
			want: []string{"claim neuron neuron:neuron.aws.com:2", "lossy claim=0 request=neuron count=2"},
		},
		{
			name: "neuroncores without an instance type assume two per device",
			pod:  Pod{Requests: []PodRequest{req("a", "aws.amazon.com/neuroncore", "6")}},
			opts: Options{AllowLossy: true},
			want: []string{"claim neuron neuron:neuron.aws.com:3", "lossy claim=0 request=neuron count=3"},
		},
		{
			name: "lossy without --allow-lossy is left alone",
			pod:  Pod{Requests: []PodRequest{req("a", "aws.amazon.com/neuroncore", "6"), req("b", "nvidia.com/gpu", "1")}},
			want: []string{"claim gpu gpu:gpu.nvidia.com:1", "lossy claim=-1 request= count=3", "mappable claim=0 request=gpu count=1"},
		},
		{
			name: "gpu.shared is an exclusive GPU by default",
			pod:  Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu.shared", "1"), req("b", "nvidia.com/gpu.shared", "1")}},
			opts: Options{AllowLossy: true},
			want: []string{"claim gpu gpu-a:gpu.nvidia.com:1 gpu-b:gpu.nvidia.com:1", "lossy claim=0 request=gpu-a count=1", "lossy claim=0 request=gpu-b count=1"},
		},
		{
			name: "gpu.shared with --share is one shared claim with time-slicing",
			pod:  Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu.shared", "1"), req("b", "nvidia.com/gpu.shared", "1")}},
			opts: Options{AllowLossy: true, Share: true},
			want: []string{"claim gpu-shared shared gpu:gpu.nvidia.com:1 config(gpu)=GpuConfig", "lossy claim=0 request=gpu count=1", "lossy claim=0 request=gpu count=1"},
		},
		{
			name: "MPS nodes with --share",
			pod:  Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1")}, Hints: []inventory.Hint{nodeSel("nvidia.com/gpu.sharing-strategy", "mps")}},
			opts: Options{AllowLossy: true, Share: true},
			want: []string{"claim gpu-mps shared gpu:gpu.nvidia.com:1 config(gpu)=GpuConfig", "lossy claim=0 request=gpu count=1"},
		},
		{
			name: "HAMi memory becomes a selector on the GPU request",
			pod:  Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1"), req("a", "nvidia.com/gpumem", "8000"), req("a", "nvidia.com/gpucores", "30")}},
			opts: Options{AllowLossy: true},
			want: []string{"claim gpu gpu:gpu.nvidia.com:1", "lossy claim=0 request=gpu count=1", "lossy claim=0 request=gpu count=0", "lossy claim=0 request=gpu count=0"},
		},
		{
			name: "HAMi memory without a GPU request",
			pod:  Pod{Requests: []PodRequest{req("a", "nvidia.com/gpumem", "8000")}},
			opts: Options{AllowLossy: true},
			want: []string{"unmapped claim=-1 request= count=0"},
		},
		{
			name: "unreadable and fractional quantities, unknown and DRA-backed names",
			pod: Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "$GPUS"), req("a", "amd.com/gpu", "500m"),
				req("a", "acme.com/fpga", "1"), req("a", "deviceclass.resource.kubernetes.io/gpu.example.com", "2")}},
			want: []string{"unmapped claim=-1 request= count=0", "unmapped claim=-1 request= count=0", "unmapped claim=-1 request= count=0", "dra-backed claim=-1 request= count=2"},
		},
		{
			name: "EFA needs 1.34",
			pod:  Pod{Requests: []PodRequest{req("a", "vpc.amazonaws.com/efa", "1")}},
			opts: Options{Target: Version{1, 33}},
			want: []string{"unmapped claim=-1 request= count=0"},
		},
		{
			name: "MIG single strategy without a profile",
			pod:  Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1")}, Hints: []inventory.Hint{nodeSel("nvidia.com/mig.strategy", "single")}},
			want: []string{"unmapped claim=-1 request= count=1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := s.Resolve(tt.pod, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, shape(res)); diff != "" {
				t.Errorf("resolution (-want +got):\n%s", diff)
			}
			for _, d := range res.Decisions {
				if d.Status == Unmapped && (d.Reason == "" || d.Fix == "") {
					t.Errorf("unmapped decision without reason or fix: %+v", d)
				}
			}
		})
	}
}

func TestResolveReasons(t *testing.T) {
	t.Parallel()
	s := Default()
	res, _ := s.Resolve(Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "$GPUS"), req("a", "vpc.amazonaws.com/efa", "1"), req("a", "aws.amazon.com/neuroncore", "3")}},
		Options{Target: Version{1, 33}})
	for i, want := range []string{`quantity "$GPUS"`, "needs Kubernetes 1.34", ""} {
		if !strings.Contains(res.Decisions[i].Reason, want) {
			t.Errorf("decision %d reason %q, want %q", i, res.Decisions[i].Reason, want)
		}
	}
	res, _ = s.Resolve(Pod{Requests: []PodRequest{req("a", "aws.amazon.com/neuroncore", "3")}}, Options{})
	if d := res.Decisions[0]; !strings.Contains(d.Loss, "3 aws.amazon.com/neuroncore → 2 device(s)") || !strings.Contains(d.Fix, "--allow-lossy") {
		t.Errorf("neuroncore loss/fix: %q / %q", d.Loss, d.Fix)
	}
}

func TestResolveHints(t *testing.T) {
	t.Parallel()
	s := Default()
	hints := []inventory.Hint{
		nodeSel("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),                                // 0: translated, removed
		nodeSel("node.kubernetes.io/instance-type", "p5.48xlarge"),                                // 1: node-level, stays
		nodeSel("karpenter.k8s.aws/instance-gpu-name", "h100"),                                    // 2: translated, kept
		nodeSel("topology.kubernetes.io/zone", "us-east-1a"),                                      // 3: node-level
		{Kind: inventory.HintPreferred, Key: "nvidia.com/gpu.family", Values: []string{"hopper"}}, // 4: preferred: never
		nodeSel("nvidia.com/gpu.present", "true"),                                                 // 5: dropped (no selector), removed
	}
	res, err := s.Resolve(Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1")}, Hints: hints}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 5}, res.UsedHints); diff != "" {
		t.Errorf("UsedHints (-want +got):\n%s", diff)
	}
	d := res.Decisions[0]
	if len(d.Selectors) != 2 || d.ExtendedResource {
		t.Errorf("decision %+v: want two selectors and no KEP-5004 path", d)
	}
	// Affinity spread over several ORed terms is not translated.
	multi := []inventory.Hint{
		{Kind: inventory.HintNodeAffinity, Key: "nvidia.com/gpu.product", Operator: "In", Values: []string{"NVIDIA-H100-80GB-HBM3"}, Term: 0},
		{Kind: inventory.HintNodeAffinity, Key: "nvidia.com/gpu.product", Operator: "In", Values: []string{"NVIDIA-A100-SXM4-80GB"}, Term: 1},
	}
	res, _ = s.Resolve(Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1")}, Hints: multi}, Options{})
	if len(res.UsedHints) != 0 || len(res.Decisions[0].Selectors) != 0 {
		t.Errorf("multi-term affinity translated: %+v %v", res.Decisions[0], res.UsedHints)
	}
	// Hints of a request left alone (lossy without --allow-lossy) are not used.
	res, _ = s.Resolve(Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu.shared", "1")}, Hints: hints[:1]}, Options{})
	if len(res.UsedHints) != 0 {
		t.Errorf("UsedHints of an unapplied request: %v", res.UsedHints)
	}
	// A label the device plugin still needs for another request stays.
	res, _ = s.Resolve(Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1"), req("b", "nvidia.com/gpu.shared", "1")}, Hints: hints}, Options{})
	if len(res.UsedHints) != 0 || len(res.Decisions[0].Selectors) != 2 {
		t.Errorf("hints of a pod with a request left on the device plugin: used %v, selectors %q", res.UsedHints, res.Decisions[0].Selectors)
	}
	// A plain count maps through KEP-5004.
	res, _ = s.Resolve(Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "2")}}, Options{})
	if d := res.Decisions[0]; !d.ExtendedResource || d.ExtendedResourceName != "nvidia.com/gpu" {
		t.Errorf("plain GPU: %+v, want ExtendedResource", d)
	}
	// A label value that would break out of a CEL string is not translated.
	res, _ = s.Resolve(Pod{Requests: []PodRequest{req("a", "nvidia.com/gpu", "1")}, Hints: []inventory.Hint{nodeSel("karpenter.k8s.aws/instance-gpu-name", `h100") || true || ("`)}}, Options{})
	if len(res.Decisions[0].Selectors) != 0 {
		t.Errorf("unsafe value translated: %q", res.Decisions[0].Selectors)
	}
}

func TestMIGProfiles(t *testing.T) {
	t.Parallel()
	tests := map[string][]string{
		"1g.10gb":        {"1g.10gb"},
		"1g.10gb.me":     {"1g.10gb+me"},
		"1c.2g.20gb":     {"1c.2g.20gb"},
		"1g.10gb.me.all": {"1g.10gb+me.all", "1g.10gb+me+all"},
		"7g.80gb.gfx":    {"7g.80gb+gfx"},
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, migProfiles(in)); diff != "" {
			t.Errorf("migProfiles(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestSelectorCheckedPerTarget(t *testing.T) {
	t.Parallel()
	s, err := LoadBytes("multi.yaml", []byte(`apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: acme-shared-fpga
  resource: acme.com/fpga
  driver: fpga.acme.example
  deviceClass: fpga.acme.example
  selectors: ["device.allowMultipleAllocations"]
`))
	if err != nil {
		t.Fatal(err)
	}
	pod := Pod{Requests: []PodRequest{req("a", "acme.com/fpga", "1")}}
	res, _ := s.Resolve(pod, Options{Target: Version{1, 35}})
	if d := res.Decisions[0]; d.Status != Unmapped || !strings.Contains(d.Reason, "rejected by the API server") {
		t.Errorf("1.35: %+v, want unmapped (no allowMultipleAllocations before 1.36)", d)
	}
	res, _ = s.Resolve(pod, Options{Target: Version{1, 36}})
	if d := res.Decisions[0]; d.Status != Mappable {
		t.Errorf("1.36: %+v, want mappable", d)
	}
}
