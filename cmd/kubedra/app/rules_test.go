package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	sigyaml "sigs.k8s.io/yaml"
)

const goodRules = `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: acme-fpga
  resource: acme.com/fpga
  driver: fpga.acme.example
  deviceClass: fpga.acme.example
`

const badRules = `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: acme-fpga
  resource: acme.com/fpga
  driver: fpga.acme.example
  deviceClass: fpga.acme.example
  selectors:
  - device.attributes["fpga.acme.example"].family ==
  colour: red
`

func TestRulesValidate(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte(goodRules), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(badRules), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		stdin      string
		args       []string
		wantCode   int
		wantOut    string
		wantErr    []string
		wantNoErrs bool
	}{
		{name: "valid", args: []string{good}, wantCode: 0, wantOut: good + ": valid", wantNoErrs: true},
		{name: "stdin", stdin: goodRules, args: []string{"-"}, wantCode: 0, wantOut: "-: valid", wantNoErrs: true},
		{name: "invalid", args: []string{good, bad}, wantCode: 1, wantOut: good + ": valid",
			wantErr: []string{bad + ":10: field colour not found"}},
		{name: "cel error without unknown field", stdin: strings.Replace(badRules, "  colour: red\n", "", 1), args: []string{"-"}, wantCode: 1,
			wantErr: []string{"-:9: selectors[0]: compilation failed"}},
		{name: "missing file", args: []string{filepath.Join(dir, "nope.yaml")}, wantCode: 1, wantErr: []string{"nope.yaml: no such file"}},
		{name: "no args", args: nil, wantCode: 1, wantErr: []string{"requires at least 1 arg"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := Invoke(t, Invocation{Args: append([]string{"rules", "validate"}, tt.args...), Stdin: tt.stdin})
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.wantCode, errOut)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("stdout %q, want %q", out, tt.wantOut)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q, want %q", errOut, w)
				}
			}
			if tt.wantNoErrs && errOut != "" {
				t.Errorf("stderr %q, want nothing", errOut)
			}
		})
	}
}

func TestRulesList(t *testing.T) {
	dir := t.TempDir()
	user := filepath.Join(dir, "user.yaml")
	override := strings.Replace(goodRules, "- id: acme-fpga\n  resource: acme.com/fpga", "- id: nvidia-gpu\n  resource: nvidia.com/gpu", 1)
	if err := os.WriteFile(user, []byte(override), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := Invoke(t, Invocation{Args: []string{"rules", "list", "--rules", user}})
	if code != 0 || errOut != "" {
		t.Fatalf("code %d, stderr %q", code, errOut)
	}
	if !strings.HasPrefix(out, "VENDOR") || !strings.Contains(out, "builtin:nvidia.yaml") {
		t.Errorf("table:\n%s", out)
	}
	var replaced, userLine bool
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "builtin:nvidia.yaml") && strings.Contains(l, "replaced by "+user) {
			replaced = true
		}
		if strings.Contains(l, user+":4") && strings.HasSuffix(strings.TrimSpace(l), "yes") {
			userLine = true
		}
	}
	if !replaced || !userLine {
		t.Errorf("want the built-in nvidia-gpu rule replaced by the user rule:\n%s", out)
	}
	code, out, _ = Invoke(t, Invocation{Args: []string{"rules", "list", "-o", "json"}})
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			ID, Status, Applies string
		} `json:"items"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || list.Kind != "RuleList" || len(list.Items) < 15 {
		t.Errorf("json list: code %d, %q", code, out)
	}
	if code, _, errOut := Invoke(t, Invocation{Args: []string{"rules", "list", "-o", "wide"}}); code != 1 || !strings.Contains(errOut, "unknown output format") {
		t.Errorf("-o wide: code %d, stderr %q", code, errOut)
	}
	if code, _, errOut := Invoke(t, Invocation{Args: []string{"rules", "list", "--rules", filepath.Join(dir, "nope.yaml")}}); code != 1 || !strings.Contains(errOut, "nope.yaml") {
		t.Errorf("missing rules file: code %d, stderr %q", code, errOut)
	}
}

// TestRulesShowRule (issue 28): the rules rules show lists are shown as
// written, their selectors and their count included.
func TestRulesShowRule(t *testing.T) {
	for _, tc := range []struct {
		resource, id, count string
		selectors           []string
	}{
		{"amd.com/gpu", "amd-gpu", "one device per unit requested", []string{`device.attributes["gpu.amd.com"].?type.orValue("") == "amdgpu"`}},
		{"aws.amazon.com/neuroncore", "neuroncore", "ceil(units / 2); by instance family: inf1 4, inf2 2, trn1 2, trn1n 2, trn2 4, trn2u 4", []string{}},
	} {
		code, out, errOut := Invoke(t, Invocation{Args: []string{"rules", "show", tc.resource}})
		if code != 0 {
			t.Fatalf("%s: code %d: %s", tc.resource, code, errOut)
		}
		var doc struct {
			Rules []struct {
				ID        string
				Count     string
				Selectors []string
			}
		}
		if err := sigyaml.Unmarshal([]byte(strings.Split(out, "\n---\n")[0]), &doc); err != nil || len(doc.Rules) == 0 {
			t.Fatalf("%s: %v\n%s", tc.resource, err, out)
		}
		r := doc.Rules[0]
		if r.ID != tc.id || r.Count != tc.count || !slices.Equal(r.Selectors, tc.selectors) || r.Selectors == nil {
			t.Errorf("%s: rule %+v, want %s, count %q, selectors %q", tc.resource, r, tc.id, tc.count, tc.selectors)
		}
	}
}

func TestRulesShow(t *testing.T) {
	tests := []struct {
		args       []string
		apiVersion string
		kind       string
		want       []string
	}{
		{args: []string{"nvidia.com/mig-1g.10gb.me"}, apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate",
			want: []string{`profile in ["1g.10gb+me"]`, "deviceClassName: mig.nvidia.com"}},
		{args: []string{"nvidia.com/gpu", "--count", "2", "--node-selector", "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3"},
			apiVersion: "resource.k8s.io/v1", kind: "ResourceClaimTemplate",
			want: []string{"count: 2", `== "NVIDIA-H100-80GB-HBM3"`, "usedNodeSelectors:\n- nvidia.com/gpu.product"}},
		{args: []string{"nvidia.com/gpu.shared", "--share", "--target-version", "1.32"}, apiVersion: "resource.k8s.io/v1beta1", kind: "ResourceClaim",
			want: []string{"strategy: TimeSlicing", "status: lossy", "loss:"}},
		{args: []string{"aws.amazon.com/neuron", "--target-version", "1.33"}, want: []string{"status: unmapped", "needs Kubernetes 1.34"}},
		{args: []string{"deviceclass.resource.kubernetes.io/gpu.example.com"}, want: []string{"status: dra-backed"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, out, errOut := Invoke(t, Invocation{Args: append([]string{"rules", "show"}, tt.args...)})
			if code != 0 || errOut != "" {
				t.Fatalf("code %d, stderr %q", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			docs := strings.Split(out, "\n---\n")
			if tt.kind == "" {
				if len(docs) != 1 {
					t.Errorf("want only the decision, got %d documents", len(docs))
				}
				return
			}
			if len(docs) != 2 {
				t.Fatalf("want 2 documents, got %d:\n%s", len(docs), out)
			}
			var meta struct{ APIVersion, Kind string }
			if err := sigyaml.Unmarshal([]byte(docs[1]), &meta); err != nil || meta.APIVersion != tt.apiVersion || meta.Kind != tt.kind {
				t.Errorf("object %+v (%v), want %s %s", meta, err, tt.apiVersion, tt.kind)
			}
			if tt.apiVersion == "resource.k8s.io/v1" && tt.kind == "ResourceClaimTemplate" {
				var rct resourcev1.ResourceClaimTemplate
				if err := sigyaml.UnmarshalStrict([]byte(docs[1]), &rct); err != nil {
					t.Errorf("strict decode: %v", err)
				}
			}
		})
	}
	if code, _, errOut := Invoke(t, Invocation{Args: []string{"rules", "show", "nvidia.com/gpu", "--target-version", "1.31"}}); code != 1 || !strings.Contains(errOut, "not supported") {
		t.Errorf("--target-version 1.31: code %d, stderr %q", code, errOut)
	}
}
