package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltinFilesLoad(t *testing.T) {
	t.Parallel()
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, _ := builtinFS.ReadFile("builtin/" + e.Name())
		if err := Validate(e.Name(), data); err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data string
		want []string // "line: substring"
	}{
		{
			name: "unknown field",
			data: `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: a
  resource: x.com/y
  driver: d.example.com
  deviceClass: d.example.com
  selektors: []
`,
			want: []string{"8: field selektors not found"},
		},
		{
			name: "bad CEL",
			data: `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: a
  resource: x.com/y
  driver: d.example.com
  deviceClass: d.example.com
  selectors:
  - device.attributes["d.example.com"].model == "x"
  - device.attributes["d.example.com"].model ==
`,
			want: []string{"10: selectors[1]: compilation failed"},
		},
		{
			name: "cost limit",
			data: `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: a
  resource: x.com/y
  driver: d.example.com
  deviceClass: d.example.com
  selectors:
  - device.attributes["d.example.com"].?model.orValue("").lowerAscii() == "x"
`,
			want: []string{"9: selectors[0]: CEL expression is too complex"},
		},
		{
			name: "not bool",
			data: `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: a
  resource: x.com/y
  driver: d.example.com
  deviceClass: d.example.com
  selectors: ['device.attributes["d.example.com"].model']
`,
			want: []string{"8: selectors[0]: CEL expression must evaluate to bool"},
		},
		{
			name: "wrong kind and missing fields",
			data: `apiVersion: kubedra.dev/v1
kind: Rule
rules:
- id: A_B
  match: 'x.com/('
  status: lossy
`,
			want: []string{"1: apiVersion", "2: kind", "4: rule id", "5: match:", "4: rule A_B: driver is required", "4: rule A_B: status lossy needs loss"},
		},
		{
			name: "hint with unknown variable and bad regexp",
			data: `apiVersion: kubedra.dev/v1alpha1
kind: Rules
hints:
- label: example.com/model
  drivers: [gpu.example.com]
  value: '(['
  in: 'device.attributes["gpu.example.com"].model == {{model}}'
`,
			want: []string{"6: value:", "7: in: unknown variable {{model}}"},
		},
		{
			name: "duplicate id in one file",
			data: `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- {id: a, resource: x.com/y, driver: d.example.com, deviceClass: d.example.com}
- {id: a, resource: x.com/z, driver: d.example.com, deviceClass: d.example.com}
`,
			want: []string{"5: rule id \"a\" is already used"},
		},
		{
			name: "yaml syntax",
			data: "apiVersion: kubedra.dev/v1alpha1\nkind: Rules\nrules: [\n",
			want: []string{"3: did not find expected node content"},
		},
		{
			name: "example does not match",
			data: `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: a
  match: 'x\.com/y-.*'
  examples: [x.com/z]
  driver: d.example.com
  deviceClass: d.example.com
`,
			want: []string{"6: example \"x.com/z\" does not match"},
		},
		{
			name: "enable unknown id",
			data: "apiVersion: kubedra.dev/v1alpha1\nkind: Rules\nenable: [nope]\n",
			want: []string{"3: enable: no rule with id \"nope\""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := LoadBytes("my-rules.yaml", []byte(tt.data))
			var le LoadErrors
			if !errors.As(err, &le) {
				t.Fatalf("LoadBytes error = %v, want LoadErrors", err)
			}
			var got []string
			for _, e := range le {
				if e.File != "my-rules.yaml" {
					t.Errorf("error for file %q, want my-rules.yaml", e.File)
				}
				got = append(got, e.Error())
			}
			for _, w := range tt.want {
				line, sub, _ := strings.Cut(w, ": ")
				found := false
				for _, g := range got {
					if strings.HasPrefix(g, "my-rules.yaml:"+line+": ") && strings.Contains(g, sub) {
						found = true
					}
				}
				if !found {
					t.Errorf("want an error at line %s containing %q, got:\n%s", line, sub, strings.Join(got, "\n"))
				}
			}
		})
	}
}

func TestUserRulesWin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	data := `apiVersion: kubedra.dev/v1alpha1
kind: Rules
vendor: acme
rules:
# replaces the built-in nvidia-gpu rule by id
- id: nvidia-gpu
  resource: nvidia.com/gpu
  driver: gpu.nvidia.com
  deviceClass: h100.acme.example
# a new rule for a resource a built-in rule also maps (different id)
- id: acme-efa
  resource: vpc.amazonaws.com/efa
  driver: dra.net
  deviceClass: efa-fast.acme.example
- id: acme-fpga
  resource: acme.com/fpga
  driver: fpga.acme.example
  deviceClass: fpga.acme.example
  selectors: ['device.attributes["fpga.acme.example"].?family.orValue("") == "u55"']
disable: [amd-gpu]
templatePaths:
- group: acme.example
  kind: Trainer
  paths: [spec.worker.template.spec]
naming:
  requests: {acme.com/fpga: accel}
`
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Resolve(Pod{Requests: []PodRequest{
		{Container: "a", Resource: "nvidia.com/gpu", Quantity: "1"},
		{Container: "a", Resource: "vpc.amazonaws.com/efa", Quantity: "1"},
		{Container: "a", Resource: "acme.com/fpga", Quantity: "2"},
		{Container: "a", Resource: "amd.com/gpu", Quantity: "1"},
	}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, d := range res.Decisions {
		id := ""
		if d.Rule != nil {
			id = d.Rule.ID + "@" + filepath.Base(d.Rule.Source)
		}
		got = append(got, string(d.Status)+" "+id+" "+d.DeviceClass+" "+d.Request)
	}
	want := []string{
		"mappable nvidia-gpu@rules.yaml h100.acme.example gpu",
		"mappable acme-efa@rules.yaml efa-fast.acme.example efa",
		"mappable acme-fpga@rules.yaml fpga.acme.example accel",
		"unmapped   ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	if tp := s.TemplatePaths(); len(tp) != 1 || tp[0].Kind != "Trainer" {
		t.Errorf("TemplatePaths = %+v", tp)
	}
	var applies []string
	for _, ri := range s.Rules() {
		if ri.ID == "nvidia-gpu" || ri.ID == "amd-gpu" {
			applies = append(applies, ri.ID+": "+ri.Applies)
		}
	}
	wantApplies := []string{"amd-gpu: disabled", "nvidia-gpu: replaced by " + file, "nvidia-gpu: yes"}
	if diff := cmp.Diff(wantApplies, applies); diff != "" {
		t.Errorf("rules list (-want +got):\n%s", diff)
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !strings.Contains(err.Error(), "nope.yaml: reading rules") {
		t.Fatalf("err = %v", err)
	}
}

func TestEnableDisable(t *testing.T) {
	t.Parallel()
	data := `apiVersion: kubedra.dev/v1alpha1
kind: Rules
rules:
- id: acme-fpga
  resource: acme.com/fpga
  driver: fpga.acme.example
  deviceClass: fpga.acme.example
  disabled: true
---
apiVersion: kubedra.dev/v1alpha1
kind: Rules
enable: [acme-fpga]
`
	pod := Pod{Requests: []PodRequest{req("a", "acme.com/fpga", "1")}}
	s, err := LoadBytes("acme.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := s.Resolve(pod, Options{})
	if res.Decisions[0].Status != Mappable {
		t.Errorf("enabled rule: %+v", res.Decisions[0])
	}
	first, _, _ := strings.Cut(data, "---")
	s, err = LoadBytes("acme.yaml", []byte(first))
	if err != nil {
		t.Fatal(err)
	}
	res, _ = s.Resolve(pod, Options{})
	if d := res.Decisions[0]; d.Status != Unmapped || !strings.Contains(d.Reason, "no rule maps acme.com/fpga") {
		t.Errorf("disabled rule applied: %+v", d)
	}
}
