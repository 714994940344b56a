package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubedra/kubedra/internal/golden"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// upgradeFixture is a check against 1.38 of DRA written for earlier
// releases, judged by plan.UpgradeItems as check judges it: a classic claim
// template, its parameters, a v1beta1 claim (removed in 1.38), a v1beta2
// one (still served with --runtime-config), a pod claim under source, a
// kubeadm feature gate and an unknown parameters kind.
func upgradeFixture(t *testing.T) Check {
	t.Helper()
	at := func(file string, index, line int) inventory.Origin {
		return inventory.Origin{Path: file, Index: index, Line: line}
	}
	fs := []inventory.DRAFinding{
		{Origin: at("dra/claims.yaml", 0, 1), Line: 1, Column: 1, What: inventory.DRAObject, APIVersion: "resource.k8s.io/v1alpha2", Kind: "ResourceClaimTemplate",
			Namespace: "ml", Name: "one-gpu", Classic: true, ClassName: "gpu.nvidia.com", Parameters: &inventory.ParametersRef{APIGroup: "gpu.resource.nvidia.com", Kind: "GpuClaimParameters", Name: "one", Namespace: "ml"}},
		{Origin: at("dra/claims.yaml", 1, 14), Line: 14, Column: 1, What: inventory.DRAParameters, APIVersion: "gpu.resource.nvidia.com/v1alpha1", Kind: "GpuClaimParameters",
			Namespace: "ml", Name: "one", Spec: map[string]any{"count": 1}},
		{Origin: at("dra/claims.yaml", 2, 22), Line: 22, Column: 1, What: inventory.DRAObject, APIVersion: "resource.k8s.io/v1alpha2", Kind: "ResourceClaim",
			Namespace: "ml", Name: "fpga", Classic: true, ClassName: "fpga.example.com", Parameters: &inventory.ParametersRef{APIGroup: "fpga.example.com", Kind: "Bitstream", Name: "x"}},
		{Origin: at("dra/beta.yaml", 0, 1), Line: 1, Column: 1, What: inventory.DRAObject, APIVersion: "resource.k8s.io/v1beta1", Kind: "ResourceClaimTemplate", Namespace: "ml", Name: "beta1"},
		{Origin: at("dra/beta.yaml", 1, 12), Line: 12, Column: 1, What: inventory.DRAObject, APIVersion: "resource.k8s.io/v1beta2", Kind: "ResourceClaimTemplate", Namespace: "ml", Name: "beta2"},
		{Origin: at("dra/pod.yaml", 0, 1), Line: 9, Column: 5, What: inventory.DRAPodSource, APIVersion: "v1", Kind: "Pod", Namespace: "ml", Name: "app",
			PodTemplatePath: "spec", Claim: "gpu"},
		{Origin: at("cluster/kubeadm.yaml", 0, 1), Line: 6, Column: 20, What: inventory.DRAFeatureGate, APIVersion: "kubeadm.k8s.io/v1beta3", Kind: "ClusterConfiguration",
			Gate: "DynamicResourceAllocation", Value: "true", Field: "apiServer.extraArgs.feature-gates"},
	}
	items := plan.UpgradeItems(fs, rules.Version{Major: 1, Minor: 38}, nil)
	if len(items) != len(fs) {
		t.Fatalf("%d items for %d findings", len(items), len(fs))
	}
	failing := make([]bool, len(items))
	for i, it := range items {
		// --fail-on unmapped: what 1.38 does not serve fails anyway.
		failing[i] = it.Status == rules.Unmapped || it.Mapping.Upgrade.Serving == rules.NotServed
	}
	return Check{Report: plan.NewReport(items, nil, 4, 9), FailOn: "unmapped", Failing: failing,
		Tool: Tool{Name: "kubedra", Version: "v0.1.0-test", InformationURI: "https://github.com/kubedra/kubedra"}}
}

// TestUpgradeGolden renders the dra-upgrade findings in every format check
// has; the goldens are reviewed by hand.
func TestUpgradeGolden(t *testing.T) {
	t.Parallel()
	c := upgradeFixture(t)
	formats := map[string]string{"table": "txt", "wide": "wide.txt", "json": "json", "yaml": "yaml", "sarif": "sarif", "junit": "xml", "markdown": "md", "github": "github.txt"}
	for f, ext := range formats {
		t.Run(f, func(t *testing.T) {
			var buf bytes.Buffer
			if err := RenderCheck(&buf, Format(f), c, Style{}); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, "testdata/TestUpgradeGolden/upgrade."+ext, buf.Bytes())
		})
	}
}

// TestUpgradeFormatsCarryTheVersions checks what a CI user relies on in
// each machine format: the status, the rule id and the version that stops
// serving the object, and valid documents.
func TestUpgradeFormatsCarryTheVersions(t *testing.T) {
	t.Parallel()
	c := upgradeFixture(t)
	render := func(f string) []byte {
		var buf bytes.Buffer
		if err := RenderCheck(&buf, Format(f), c, Style{}); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	var rep struct {
		Findings []struct {
			Status  string `json:"status"`
			Mapping struct {
				Upgrade *rules.Upgrade `json:"upgrade"`
			} `json:"mapping"`
		} `json:"findings"`
		Summary plan.Summary `json:"summary"`
	}
	if err := json.Unmarshal(render("json"), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary.DRAUpgrade != 6 || rep.Summary.Unmapped != 1 {
		t.Errorf("summary %+v: want 6 dra-upgrade, 1 unmapped", rep.Summary)
	}
	removed := map[string]bool{}
	for _, f := range rep.Findings {
		if f.Mapping.Upgrade == nil {
			t.Fatalf("a finding without its upgrade record: %+v", f)
		}
		removed[f.Mapping.Upgrade.From+" "+f.Mapping.Upgrade.RemovedIn] = true
	}
	for _, want := range []string{"resource.k8s.io/v1beta1 1.38", "resource.k8s.io/v1beta2 1.39", "resource.k8s.io/v1alpha2 1.31", "DynamicResourceAllocation=true 1.38"} {
		if !removed[want] {
			t.Errorf("json: no finding %q (from, removedIn) in %v", want, removed)
		}
	}

	sarif := render("sarif")
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(sarif))
	if err != nil {
		t.Fatal(err)
	}
	if err := loadSARIFSchema(t).Validate(inst); err != nil {
		t.Errorf("SARIF does not validate: %v", err)
	}
	for _, id := range []string{`"dra-upgrade/classic"`, `"dra-upgrade/api-version"`, `"dra-upgrade/pod-claim-source"`, `"dra-upgrade/feature-gate"`, `"unmapped/classic"`, `"removedIn": "1.38"`} {
		if !bytes.Contains(sarif, []byte(id)) {
			t.Errorf("SARIF has no %s", id)
		}
	}
	var suites junitSuites
	if err := xml.Unmarshal(render("junit"), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Tests != 7 || suites.Failures != 6 {
		t.Errorf("junit: %d tests, %d failures; want 7 and 6 (all but the v1beta2 template, which 1.38 still serves)", suites.Tests, suites.Failures)
	}
	for f, want := range map[string]string{"github": "title=kubedra dra-upgrade/api-version", "markdown": "not served from 1.38", "table": "resource.k8s.io/v1 (removed in 1.38)"} {
		if out := render(f); !strings.Contains(string(out), want) {
			t.Errorf("%s has no %q:\n%s", f, want, out)
		}
	}
}
