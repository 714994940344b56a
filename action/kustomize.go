package action

import (
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// NameReferenceFile is the kustomize configurations file migrate writes
// beside a kustomization whose build gains claims (docs/migrate.md).
const NameReferenceFile = plan.NameReferenceFile

// kustomizeTree reads the kustomize build units among the inputs and the
// patches migrate cannot make exact (inventory/kustomize); the
// diagnostics say what migrate refuses, and which kustomization files it
// cannot read.
func kustomizeTree(in Input, dopts detect.Options, set *rules.Set, target rules.Version) (*kustomize.Tree, inventory.Diagnostics) {
	tree, diags := kustomize.Find(in.Paths, in.open)
	diags = append(diags, tree.CheckPatches(in.open, dopts)...)
	return tree, tree.Unblock(diags, func(resource string) bool { return maps(set, resource, target) })
}

// maps reports whether a rule maps resource, as migrate --allow-lossy
// would decide one container asking for one.
func maps(set *rules.Set, resource string, target rules.Version) bool {
	pod := rules.Pod{Requests: []rules.PodRequest{{Container: "c", ContainerType: inventory.Container, Resource: resource, Quantity: "1"}}}
	res, err := set.Resolve(pod, rules.Options{Target: target, AllowLossy: true})
	return err == nil && len(res.Decisions) > 0 && res.Decisions[0].Status != rules.Unmapped
}
