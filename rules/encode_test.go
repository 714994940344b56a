package rules

import (
	"errors"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	resourcev1beta2 "k8s.io/api/resource/v1beta2"
	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigyaml "sigs.k8s.io/yaml"
)

// strictDecode decodes an RNode into the Go type of its apiVersion/kind,
// rejecting unknown fields, and returns the JSON it decoded.
func strictDecode(t *testing.T, n *yaml.RNode) {
	t.Helper()
	s, err := n.String()
	if err != nil {
		t.Fatal(err)
	}
	var target any
	switch n.GetApiVersion() + " " + n.GetKind() {
	case "resource.k8s.io/v1 ResourceClaimTemplate":
		target = &resourcev1.ResourceClaimTemplate{}
	case "resource.k8s.io/v1 ResourceClaim":
		target = &resourcev1.ResourceClaim{}
	case "resource.k8s.io/v1 DeviceClass":
		target = &resourcev1.DeviceClass{}
	case "resource.k8s.io/v1beta2 ResourceClaimTemplate":
		target = &resourcev1beta2.ResourceClaimTemplate{}
	case "resource.k8s.io/v1beta2 ResourceClaim":
		target = &resourcev1beta2.ResourceClaim{}
	case "resource.k8s.io/v1beta1 ResourceClaimTemplate":
		target = &resourcev1beta1.ResourceClaimTemplate{}
	case "resource.k8s.io/v1beta1 ResourceClaim":
		target = &resourcev1beta1.ResourceClaim{}
	default:
		t.Fatalf("unexpected object %s %s", n.GetApiVersion(), n.GetKind())
	}
	if err := sigyaml.UnmarshalStrict([]byte(s), target); err != nil {
		t.Fatalf("strict decode of\n%s\n: %v", s, err)
	}
}

func TestEncodeVersions(t *testing.T) {
	t.Parallel()
	s := Default()
	pod := Pod{Requests: []PodRequest{
		{Container: "a", Resource: "nvidia.com/gpu", Quantity: "1"},
		{Container: "a", Resource: "vpc.amazonaws.com/efa", Quantity: "2"},
	}}
	tests := []struct {
		target     Version
		apiVersion string
		want       []string
		notWant    []string
	}{
		{Version{1, 32}, "resource.k8s.io/v1beta1", []string{"deviceClassName: gpu.nvidia.com"}, []string{"exactly:"}},
		{Version{1, 33}, "resource.k8s.io/v1beta2", []string{"exactly:"}, nil},
		{Version{1, 34}, "resource.k8s.io/v1", []string{"exactly:", "matchAttribute: resource.kubernetes.io/pcieRoot"}, []string{"creationTimestamp"}},
		{Version{1, 37}, "resource.k8s.io/v1", []string{"exactly:"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.target.String(), func(t *testing.T) {
			t.Parallel()
			// EFA (DRANET) needs 1.34; on older targets only the GPU maps.
			res, err := s.Resolve(pod, Options{Target: tt.target})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Claims) != 1 {
				t.Fatalf("claims = %d, want 1: %+v", len(res.Claims), res.Decisions)
			}
			for _, ns := range []string{"", "ml"} {
				n, err := EncodeClaimTemplate("trainer-gpu", ns, res.Claims[0], tt.target)
				if err != nil {
					t.Fatal(err)
				}
				if got := n.GetApiVersion(); got != tt.apiVersion {
					t.Errorf("apiVersion = %s, want %s", got, tt.apiVersion)
				}
				if got := n.GetNamespace(); got != ns {
					t.Errorf("namespace = %q, want %q", got, ns)
				}
				strictDecode(t, n)
				out := n.MustString()
				if !strings.HasPrefix(out, "apiVersion: ") || strings.Contains(out, "status:") || strings.Contains(out, "metadata: {}") {
					t.Errorf("want apiVersion first and no empty status or template metadata:\n%s", out)
				}
				for _, w := range tt.want {
					if !strings.Contains(out, w) {
						t.Errorf("output lacks %q:\n%s", w, out)
					}
				}
				for _, w := range tt.notWant {
					if strings.Contains(out, w) {
						t.Errorf("output has %q:\n%s", w, out)
					}
				}
				if ns == "" && strings.Contains(out, "namespace:") {
					t.Errorf("empty namespace is written:\n%s", out)
				}
			}
			c, err := EncodeClaim("shared", "ml", res.Claims[0], tt.target)
			if err != nil {
				t.Fatal(err)
			}
			strictDecode(t, c)
		})
	}
}

func TestCheckSpecGates(t *testing.T) {
	t.Parallel()
	spec := resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "gpu", FirstAvailable: []resourcev1.DeviceSubRequest{{Name: "a", DeviceClassName: "gpu.nvidia.com"}},
	}}}}
	var ge *GateError
	if err := CheckSpec(spec, Version{1, 33}); !errors.As(err, &ge) || ge.Gate != "DRAPrioritizedList" {
		t.Fatalf("firstAvailable on 1.33: %v, want DRAPrioritizedList gate error", err)
	}
	if err := CheckSpec(spec, Version{1, 34}); err != nil {
		t.Fatalf("firstAvailable on 1.34: %v", err)
	}
	if _, err := EncodeClaimTemplate("x", "", Claim{Spec: spec}, Version{1, 33}); err == nil {
		t.Fatal("EncodeClaimTemplate accepted firstAvailable on 1.33")
	}
}

func TestDeviceClass(t *testing.T) {
	t.Parallel()
	s := Default()
	res, err := s.Resolve(Pod{Requests: []PodRequest{{Container: "a", Resource: "aws.amazon.com/neuron", Quantity: "1"}}}, Options{Target: Version{1, 36}})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Decisions[0]
	if !d.ExtendedResource || d.ExtendedResourceName != "aws.amazon.com/neuron" {
		t.Fatalf("decision = %+v, want ExtendedResource for aws.amazon.com/neuron", d)
	}
	var ge *GateError
	if _, err := s.DeviceClass(d, Version{1, 35}); !errors.As(err, &ge) {
		t.Fatalf("DeviceClass on 1.35: %v, want a GateError", err)
	}
	if _, err := s.DeviceClassForced(d, Version{1, 33}); err == nil {
		t.Fatal("DeviceClassForced on 1.33: want an error (no extendedResourceName field)")
	}
	n, err := s.DeviceClass(d, Version{1, 36})
	if err != nil {
		t.Fatal(err)
	}
	strictDecode(t, n)
	var dc resourcev1.DeviceClass
	if err := sigyaml.Unmarshal([]byte(n.MustString()), &dc); err != nil {
		t.Fatal(err)
	}
	if dc.Name != "aws.amazon.com-neuron" || dc.Spec.ExtendedResourceName == nil || *dc.Spec.ExtendedResourceName != "aws.amazon.com/neuron" {
		t.Fatalf("DeviceClass = %+v", dc)
	}
	if len(dc.Spec.Selectors) < 2 || !strings.Contains(dc.Spec.Selectors[0].CEL.Expression, `device.driver == "neuron.aws.com"`) {
		t.Fatalf("selectors = %+v", dc.Spec.Selectors)
	}
}
