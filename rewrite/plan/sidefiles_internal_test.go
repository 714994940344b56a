package plan

import (
	"slices"
	"testing"

	"github.com/kubedra/kubedra/inventory"
)

// TestClaimListKeysAgree: the names a plan gives the claims lists it
// writes are the names a JSON 6902 pointer to those lists gets, list
// indexes between dropped, so that Compose finds the patches to rewrite.
func TestClaimListKeysAgree(t *testing.T) {
	t.Parallel()
	fp := &FilePlan{Docs: []*DocPlan{{Pods: []PodEdit{{
		Path:           "spec.replicatedJobs[name=w].template.spec.template.spec",
		ResourceClaims: []PodClaim{{Name: "gpu", ResourceClaimTemplateName: "t"}},
		Containers:     []ContainerEdit{{Type: inventory.Container, Index: 1, Claims: []ContainerClaim{{Name: "gpu"}}}},
	}}}}}
	keys := ClaimListKeys(fp)
	for _, pointer := range []string{
		"/spec/replicatedJobs/0/template/spec/template/spec/resourceClaims",
		"/spec/replicatedJobs/0/template/spec/template/spec/containers/1/resources/claims",
	} {
		if k := claimListKey(pointer); !slices.Contains(keys, k) {
			t.Errorf("%s names %q, not among the plan's %q", pointer, k, keys)
		}
	}
	if k := claimListKey("/spec/template/spec/containers/0/resources/claims"); slices.Contains(keys, k) {
		t.Errorf("another pod template's list %q matches", k)
	}
}
