package action

import (
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/rules"
)

// kustomizeTree reads the kustomize build units among the inputs and the
// patches migrate cannot make exact (inventory/kustomize); the
// diagnostics say what migrate refuses, and which kustomization files it
// cannot read.
func kustomizeTree(in Input, dopts detect.Options, set *rules.Set, target rules.Version) (*kustomize.Tree, inventory.Diagnostics) {
	tree, diags := kustomize.Find(in.Paths, in.open)
	diags = append(diags, tree.CheckPatches(in.open, dopts)...)
	return tree, tree.Unblock(diags, func(resource string) bool { return set.Maps(resource, target) })
}
