package rewrite

import (
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"
)

// AddEntry edits only the lines it adds: an inline patch, blank lines,
// comments and trailing spaces elsewhere keep their bytes (re-encoding
// the whole kustomization turned a literal block into a quoted string).
func TestAddEntryKeepsTheRestOfTheFile(t *testing.T) {
	src := "# head\n\nnamespace: default \n\nresources:\n- job.yaml   # the job\n- service.yaml\n\npatches:\n- patch: |-\n    - op: add \n      path: /spec/x\n      value: 1\n  target:\n    kind: Job\n"
	got, err := AddEntry([]byte(src), "resources", "kubedra-claims.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(src, "- service.yaml\n", "- service.yaml\n- kubedra-claims.yaml\n", 1)
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	again, err := AddEntry(got, "resources", "kubedra-claims.yaml")
	if err != nil || string(again) != string(got) {
		t.Fatalf("second add changed the file (%v):\n%s", err, again)
	}
	got, err = AddEntry(got, "configurations", "kubedra-namereference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := want + "configurations:\n- kubedra-namereference.yaml\n"; string(got) != want {
		t.Fatalf("new field: got\n%s\nwant\n%s", got, want)
	}
}

func TestAddEntryIndentedAndFlowLists(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"resources:\n  - a.yaml\n  - b.yaml\nnamePrefix: p-\n", "resources:\n  - a.yaml\n  - b.yaml\n  - c.yaml\nnamePrefix: p-\n"},
		{"resources: [a.yaml]\n", "resources: [a.yaml, c.yaml]\n"},
		{"resources: []\n", "resources: [c.yaml]\n"},
		{"resources:\nkind: Kustomization\n", "resources:\n- c.yaml\nkind: Kustomization\n"},
		{"kind: Kustomization", "kind: Kustomization\nresources:\n- c.yaml\n"},
	} {
		got, err := AddEntry([]byte(c.src), "resources", "c.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%q: got %q, want %q", c.src, got, c.want)
		}
	}
}

func TestNameReferencesMergeAndKeep(t *testing.T) {
	pods := []FieldSpec{{Path: "spec/template/spec"}, {Path: "spec"}}
	first, err := NameReferences(nil, pods)
	if err != nil {
		t.Fatal(err)
	}
	var cfg transformerConfig
	if err := sigsyaml.Unmarshal(first, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.NameReference) != 2 || cfg.NameReference[0].Kind != "ResourceClaimTemplate" || len(cfg.NameReference[0].FieldSpecs) != 2 ||
		cfg.NameReference[0].FieldSpecs[1].Path != "spec/template/spec/resourceClaims/resourceClaimTemplateName" ||
		cfg.NameReference[1].FieldSpecs[0].Path != "spec/resourceClaims/resourceClaimName" {
		t.Fatalf("unexpected configuration:\n%s", first)
	}
	same, _ := NameReferences(first, pods[:1])
	if string(same) != string(first) {
		t.Fatalf("a file holding every field was rewritten:\n%s", same)
	}
	more, _ := NameReferences(first, []FieldSpec{{Path: "spec/replicatedJobs/template/spec/template/spec"}})
	if !strings.Contains(string(more), "spec/replicatedJobs/template/spec/template/spec/resourceClaims/resourceClaimTemplateName") ||
		!strings.Contains(string(more), "path: spec/resourceClaims/resourceClaimTemplateName") {
		t.Fatalf("merge lost or missed fields:\n%s", more)
	}
}
