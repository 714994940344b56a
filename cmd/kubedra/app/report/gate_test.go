package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kubedra/kubedra/internal/golden"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// fixture is a check over three files: a mappable GPU (failing), a lossy
// MIG slice (failing), an unmapped FPGA with a pipe in its reason, an
// ignored workload, a DRA-backed request (passing) and an unread Helm
// template.
func fixture() Check {
	item := func(file string, index, line, col int, kind, ns, name, container, res, limit string, d rules.Decision) plan.Item {
		return plan.Item{File: file, Index: index, Finding: inventory.Finding{
			Line: line, Column: col, APIVersion: "apps/v1", Kind: kind, Namespace: ns, Name: name,
			PodTemplatePath: "spec.template.spec", Container: container, ContainerType: inventory.Container,
			Resource: res, Limit: limit,
		}, Mapping: d, Status: d.Status}
	}
	items := []plan.Item{
		item("deploy/train.yaml", 0, 21, 17, "Deployment", "ml", "train", "cuda", "nvidia.com/gpu", "2",
			rules.Decision{Status: rules.Mappable, Rule: &rules.RuleRef{ID: "nvidia-gpu", Source: "builtin:nvidia.yaml"}, DeviceClass: "gpu.nvidia.com", Count: 2}),
		item("deploy/train.yaml", 1, 48, 17, "StatefulSet", "ml", "infer", "server", "nvidia.com/mig-1g.10gb", "1",
			rules.Decision{Status: rules.Lossy, Loss: "MIG profile becomes a CEL selector on the partition, counts, are \"approximate\"", Fix: "pass --allow-lossy"}),
		item("deploy/fpga.yaml", 0, 12, 15, "Job", "", "synth", "xilinx", "xilinx.com/fpga-u250", "1",
			rules.Decision{Status: rules.Unmapped, Reason: "no rule for xilinx.com | fpga", Fix: "add a rule"}),
		item("deploy/fpga.yaml", 1, 40, 15, "Job", "", "legacy", "xilinx", "xilinx.com/fpga-u250", "1",
			rules.Decision{Status: rules.Unmapped, Reason: "no rule for xilinx.com"}),
		item("deploy/dra.yaml", 0, 9, 11, "Pod", "default", "ok", "app", "deviceclass.resource.kubernetes.io/gpu.example.com", "1",
			rules.Decision{Status: rules.DRABacked, Reason: "served by DeviceClass gpu.example.com"}),
	}
	items[3].Ignored = "vendor driver has no DRA support yet"
	items[2].IgnoreInvalid = true
	r := plan.NewReport(items, inventory.Diagnostics{{Severity: inventory.Warning, File: "charts/gpu/templates/job.yaml", Line: 3, Message: "not YAML: Helm template"}}, 4, 6)
	return Check{Report: r, FailOn: "any", Failing: []bool{true, true, true, false, false},
		Tool: Tool{Name: "kubedra", Version: "v0.1.0-test", InformationURI: "https://github.com/kubedra/kubedra"}}
}

func empty() Check {
	return Check{Report: plan.NewReport(nil, nil, 2, 3), FailOn: "any", Tool: Tool{Name: "kubedra", Version: "v0.1.0-test"}}
}

func render(t *testing.T, f func(*bytes.Buffer, Check) error, c Check) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	t.Parallel()
	formats := map[string]func(*bytes.Buffer, Check) error{
		"sarif":    func(b *bytes.Buffer, c Check) error { return SARIF(b, c) },
		"junit":    func(b *bytes.Buffer, c Check) error { return JUnit(b, c) },
		"markdown": func(b *bytes.Buffer, c Check) error { return Markdown(b, c) },
		"github":   func(b *bytes.Buffer, c Check) error { return GitHub(b, c) },
		"krm":      func(b *bytes.Buffer, c Check) error { return KRM(b, c) },
	}
	ext := map[string]string{"sarif": "sarif", "junit": "xml", "markdown": "md", "github": "txt", "krm": "krm.yaml"}
	for name, f := range formats {
		for cname, c := range map[string]Check{"findings": fixture(), "empty": empty()} {
			t.Run(name+"/"+cname, func(t *testing.T) {
				golden.Check(t, "testdata/TestGolden/"+cname+"."+ext[name], render(t, f, c))
			})
		}
	}
}

func loadSARIFSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open("testdata/schemas/sarif-schema-2.1.0.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	// This copy of the schema keeps the log's own schema under
	// definitions/Root and leaves the document root empty (it would accept
	// anything), so validation starts there.
	sch, err := c.Compile(url + "#/definitions/Root")
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func TestSARIFValidatesAgainstSchema(t *testing.T) {
	t.Parallel()
	sch := loadSARIFSchema(t)
	for name, c := range map[string]Check{"findings": fixture(), "empty": empty()} {
		t.Run(name, func(t *testing.T) {
			out := render(t, func(b *bytes.Buffer, c Check) error { return SARIF(b, c) }, c)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Errorf("SARIF does not validate: %v\n%s", err, out)
			}
		})
	}
	// The validator must be able to fail: a log without runs is invalid.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"version":"2.1.0","runs":[{"tool":{"driver":{}}}]}`))
	if sch.Validate(bad) == nil {
		t.Error("schema accepted a driver without a name")
	}
}

// TestSARIFUploadable checks what GitHub code scanning requires beyond
// the schema: results present (even empty), every ruleId described with
// help, relative URIs, 1-based regions, and fingerprints.
func TestSARIFUploadable(t *testing.T) {
	t.Parallel()
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID   string `json:"id"`
						Help struct {
							Text string `json:"text"`
						} `json:"help"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation *struct {
						ArtifactLocation struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine   int `json:"startLine"`
							StartColumn int `json:"startColumn"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				PartialFingerprints map[string]string `json:"partialFingerprints"`
				Suppressions        []struct {
					Justification string `json:"justification"`
				} `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	raw := render(t, func(b *bytes.Buffer, c Check) error { return SARIF(b, c) }, empty())
	if !bytes.Contains(raw, []byte(`"results": []`)) {
		t.Errorf("empty report must carry an empty results list:\n%s", raw)
	}
	raw = render(t, func(b *bytes.Buffer, c Check) error { return SARIF(b, c) }, fixture())
	if err := json.Unmarshal(raw, &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	var ids []string
	for _, r := range run.Tool.Driver.Rules {
		ids = append(ids, r.ID)
		if r.Help.Text == "" {
			t.Errorf("rule %s has no help text", r.ID)
		}
	}
	wantIDs := []string{"mappable/nvidia.com", "lossy/nvidia.com", "unmapped/xilinx.com", plan.IgnoreReasonRuleID, "dra-backed/deviceclass.resource.kubernetes.io"}
	if diff := cmp.Diff(wantIDs, ids); diff != "" {
		t.Errorf("rule ids (-want +got):\n%s", diff)
	}
	var levels []string
	suppressed := 0
	for _, r := range run.Results {
		levels = append(levels, r.Level)
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("result %s points at rule %d", r.RuleID, r.RuleIndex)
		}
		pl := r.Locations[0].PhysicalLocation
		if pl == nil || pl.ArtifactLocation.URIBaseID != "%SRCROOT%" || strings.HasPrefix(pl.ArtifactLocation.URI, "/") || pl.Region.StartLine < 1 || pl.Region.StartColumn < 1 {
			t.Errorf("result %s: bad location %+v", r.RuleID, pl)
		}
		if r.PartialFingerprints["kubedraFinding/v1"] == "" {
			t.Errorf("result %s has no fingerprint", r.RuleID)
		}
		if len(r.Suppressions) > 0 {
			suppressed++
			if r.Suppressions[0].Justification != "vendor driver has no DRA support yet" {
				t.Errorf("suppression without the reason: %+v", r.Suppressions)
			}
		}
	}
	if diff := cmp.Diff([]string{"error", "error", "error", "error", "warning", "note"}, levels); diff != "" {
		t.Errorf("levels (-want +got):\n%s", diff)
	}
	if suppressed != 1 {
		t.Errorf("want 1 suppressed (ignored) result, got %d", suppressed)
	}
}

func TestArtifactURI(t *testing.T) {
	t.Parallel()
	tests := []struct{ file, uri, base string }{
		{"deploy/a b.yaml", "deploy/a%20b.yaml", "%SRCROOT%"},
		{"./deploy/x.yaml", "deploy/x.yaml", "%SRCROOT%"},
		{"/abs/x.yaml", "file:///abs/x.yaml", ""},
	}
	for _, tt := range tests {
		got := artifact(tt.file)
		if got.URI != tt.uri || got.URIBaseID != tt.base {
			t.Errorf("artifact(%q) = %+v, want %s %s", tt.file, got, tt.uri, tt.base)
		}
	}
}

// junitShape is the common JUnit XSD (testsuites > testsuite > testcase >
// failure|error|skipped) with its required attributes.
type junitShape struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    *int     `xml:"tests,attr"`
	Failures *int     `xml:"failures,attr"`
	Errors   *int     `xml:"errors,attr"`
	Suites   []struct {
		Name     *string `xml:"name,attr"`
		Tests    *int    `xml:"tests,attr"`
		Failures *int    `xml:"failures,attr"`
		Errors   *int    `xml:"errors,attr"`
		Skipped  *int    `xml:"skipped,attr"`
		Cases    []struct {
			Name      *string `xml:"name,attr"`
			Classname *string `xml:"classname,attr"`
			Failure   []struct {
				Message *string `xml:"message,attr"`
				Type    *string `xml:"type,attr"`
			} `xml:"failure"`
			Error []struct {
				Message *string `xml:"message,attr"`
			} `xml:"error"`
			Skipped []struct {
				Message *string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnitShape(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]Check{"findings": fixture(), "empty": empty()} {
		t.Run(name, func(t *testing.T) {
			out := render(t, func(b *bytes.Buffer, c Check) error { return JUnit(b, c) }, c)
			dec := xml.NewDecoder(bytes.NewReader(out))
			var doc junitShape
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("not XML: %v", err)
			}
			if doc.Tests == nil || doc.Failures == nil || doc.Errors == nil || len(doc.Suites) == 0 {
				t.Fatalf("testsuites lacks tests/failures/errors or suites:\n%s", out)
			}
			var tests, failures, errs int
			for _, s := range doc.Suites {
				if s.Name == nil || s.Tests == nil || s.Failures == nil || s.Errors == nil || s.Skipped == nil {
					t.Fatalf("testsuite lacks a required attribute:\n%s", out)
				}
				var st, sf, se, ss int
				for _, tc := range s.Cases {
					if tc.Name == nil || tc.Classname == nil {
						t.Errorf("testcase lacks name or classname")
					}
					if len(tc.Failure)+len(tc.Error)+len(tc.Skipped) > 1 {
						t.Errorf("testcase %s has more than one outcome", *tc.Name)
					}
					for _, f := range tc.Failure {
						if f.Message == nil || f.Type == nil {
							t.Errorf("failure lacks message or type")
						}
					}
					st++
					sf += len(tc.Failure)
					se += len(tc.Error)
					ss += len(tc.Skipped)
				}
				if st != *s.Tests || sf != *s.Failures || se != *s.Errors || ss != *s.Skipped {
					t.Errorf("suite %s counts %d/%d/%d/%d, attributes say %d/%d/%d/%d", *s.Name, st, sf, se, ss, *s.Tests, *s.Failures, *s.Errors, *s.Skipped)
				}
				tests, failures, errs = tests+st, failures+sf, errs+se
			}
			if tests != *doc.Tests || failures != *doc.Failures || errs != *doc.Errors {
				t.Errorf("testsuites totals %d/%d/%d, attributes say %d/%d/%d", tests, failures, errs, *doc.Tests, *doc.Failures, *doc.Errors)
			}
			if name == "findings" && (failures != 4 || errs != 1) {
				t.Errorf("want 4 failures (3 failing findings + 1 ignore without reason) and 1 error (unread input), got %d and %d", failures, errs)
			}
		})
	}
}

func TestGitHubEscaping(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	writeCommand(&b, "error", "a,b:c.yaml", 3, 4, "t", "50% done\nnext")
	want := "::error file=a%2Cb%3Ac.yaml,line=3,col=4,title=t::50%25 done%0Anext\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestMarkdownCellEscaping(t *testing.T) {
	t.Parallel()
	out := string(render(t, func(b *bytes.Buffer, c Check) error { return Markdown(b, c) }, fixture()))
	if !strings.Contains(out, `xilinx.com \| fpga`) {
		t.Errorf("pipe in a reason not escaped:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| `") && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 7 && strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") != 6 {
			t.Errorf("table row with a wrong number of cells: %s", line)
		}
	}
}
