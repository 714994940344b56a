package rewrite_test

import (
	"testing"

	"github.com/kubedra/kubedra/rewrite"
)

// TestAppendToLists: an add of a whole claims list becomes an add at the
// list's end, keeping the patch's other lines and comments; a flow list
// and a list of several elements too.
func TestAppendToLists(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, in, want string
		op             int
	}{
		{"block", `# join the fabric
- op: replace
  path: /spec/replicas
  value: 2
- op: add
  path: /spec/template/spec/resourceClaims
  value:
    - name: channel # the MNNVL channel
      resourceClaimTemplateName: domain
`, `# join the fabric
- op: replace
  path: /spec/replicas
  value: 2
- op: add
  path: /spec/template/spec/resourceClaims/-
  value:
      name: channel # the MNNVL channel
      resourceClaimTemplateName: domain
`, 1},
		{"flow, quoted path", `- {op: add, path: "/spec/template/spec/containers/0/resources/claims", value: [{name: rdma}]}
`, `- {op: add, path: "/spec/template/spec/containers/0/resources/claims/-", value: {name: rdma}}
`, 0},
		{"several", `- op: add
  path: /spec/template/spec/resourceClaims
  value:
  - name: a
    resourceClaimTemplateName: ta
  - name: b
    resourceClaimTemplateName: tb
- op: remove
  path: /spec/x
`, `- op: add
  path: /spec/template/spec/resourceClaims/-
  value: {"name":"a","resourceClaimTemplateName":"ta"}
- op: add
  path: /spec/template/spec/resourceClaims/-
  value: {"name":"b","resourceClaimTemplateName":"tb"}
- op: remove
  path: /spec/x
`, 0},
		// The decoder ends a line at LS too; the edit goes by LF lines.
		{"a line separator in a string", "- op: replace\n  path: /x\n  value: \"a\u2028b\"\n- op: add\n  path: /spec/template/spec/resourceClaims\n  value:\n  - name: c\n",
			"- op: replace\n  path: /x\n  value: \"a\u2028b\"\n- op: add\n  path: /spec/template/spec/resourceClaims/-\n  value:\n    name: c\n", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rewrite.AppendToLists([]byte(tt.in), []int{tt.op})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

// TestAppendToInlineLists: the same edit inside a kustomization's inline
// patch (a block scalar), the rest of the file byte for byte.
func TestAppendToInlineLists(t *testing.T) {
	t.Parallel()
	in := `resources:
  - ../../base
patches:
  - target:
      kind: LeaderWorkerSet
    patch: |-
      # 3. Join the fabric.
      - op: add
        path: /spec/leaderWorkerTemplate/workerTemplate/spec/resourceClaims
        value:
          - name: compute-domain-channel
            resourceClaimTemplateName: wide-ep-compute-domain
# trailing comment
`
	want := `resources:
  - ../../base
patches:
  - target:
      kind: LeaderWorkerSet
    patch: |-
      # 3. Join the fabric.
      - op: add
        path: /spec/leaderWorkerTemplate/workerTemplate/spec/resourceClaims/-
        value:
            name: compute-domain-channel
            resourceClaimTemplateName: wide-ep-compute-domain
# trailing comment
`
	got, err := rewrite.AppendToInlineLists([]byte(in), 7, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
