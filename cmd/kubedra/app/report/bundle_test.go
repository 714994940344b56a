package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/bundle"
)

func TestDriverCatalogue(t *testing.T) {
	drivers := []bundle.Driver{
		{Name: "a", Release: bundle.Release{Version: "v1"}, Install: bundle.Install{Helm: &bundle.Helm{Chart: "oci://x/a", Version: "1.2"}},
			DeviceClasses: []bundle.DeviceClass{{Name: "gpu.a"}, {Name: "mig.a"}}, Resources: []string{"a.com/gpu"}},
		{Name: "b", Install: bundle.Install{Helm: &bundle.Helm{Chart: "b/b"}}},
		{Name: "c", Install: bundle.Install{Manifests: &bundle.Manifests{File: "c.yaml"}}},
	}
	var b bytes.Buffer
	if err := DriverCatalogue(&b, drivers, "table"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NAME  RELEASE", "helm oci://x/a 1.2 ", "gpu.a,mig.a", "helm b/b ", "manifests (embedded)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := DriverCatalogue(&b, drivers, "json"); err != nil {
		t.Fatal(err)
	}
	var env struct {
		Kind  string           `json:"kind"`
		Items []DriverListItem `json:"items"`
	}
	if err := json.Unmarshal(b.Bytes(), &env); err != nil || env.Kind != "DriverCatalogue" || len(env.Items) != 3 || env.Items[1].Install != "helm b/b" {
		t.Errorf("json (%v):\n%s", err, b.String())
	}
}

func TestBundleVerify(t *testing.T) {
	r := &bundle.Report{Family: "example", Placements: []bundle.Placement{{Node: "n1"}, {Node: "n2"}}, Unserved: []string{"n2"},
		Notes: []string{"driver not installed"}}
	var out, errOut bytes.Buffer
	if err := BundleVerify(&out, &errOut, r, "table"); err != nil {
		t.Fatal(err)
	}
	if out.String() != "no conflict: 2 nodes checked for family example (now, labelled, unlabelled)\n" {
		t.Errorf("stdout: %q", out.String())
	}
	if want := "note: driver not installed\nwarning: node n2 is labelled kubedra.io/device-mode=dra but no example driver DaemonSet can run there\n"; errOut.String() != want {
		t.Errorf("stderr: %q", errOut.String())
	}
	r.Conflicts = []bundle.Conflict{{Node: "n1", State: bundle.StateDRA, Plugin: "kube-system/p", Driver: "(bundle) d/d"}}
	out.Reset()
	errOut.Reset()
	if err := BundleVerify(&out, &errOut, r, "yaml"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "kind: BundleVerifyReport") || !strings.Contains(out.String(), "state: labelled") || errOut.Len() != 0 {
		t.Errorf("yaml: %s\nstderr: %s", out.String(), errOut.String())
	}
}
