package action

import (
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// NameReferenceFile is the kustomize configurations file migrate writes
// beside a kustomization whose build gains claims (docs/migrate.md).
const NameReferenceFile = plan.NameReferenceFile

// kustomizeTree reads the kustomize build units among the inputs and the
// patches migrate cannot make exact (inventory/kustomize); the
// diagnostics say what migrate refuses, and which kustomization files it
// cannot read.
func kustomizeTree(in Input, dopts detect.Options) (*kustomize.Tree, inventory.Diagnostics) {
	tree, diags := kustomize.Find(in.Paths, in.open)
	return tree, append(diags, tree.CheckPatches(in.open, dopts)...)
}

// kustomizePatches are scan's diagnostics of the input's kustomize build
// units: what migrate would refuse, and kustomization files it cannot read.
func kustomizePatches(in Input, dopts detect.Options) inventory.Diagnostics {
	_, diags := kustomizeTree(in, dopts)
	return diags
}
