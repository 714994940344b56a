package action

import (
	"path/filepath"

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

// kustomizePatches are scan's diagnostics of the input's kustomize build
// units: what migrate would refuse, and kustomization files it cannot read.
func kustomizePatches(in Input, dopts detect.Options, set *rules.Set, target rules.Version) inventory.Diagnostics {
	_, diags := kustomizeTree(in, dopts, set, target)
	return diags
}

// lists records the claims lists a migrated file's plans write.
func (m *migration) lists(st *fileState) {
	if len(st.lists) == 0 {
		return
	}
	if m.written == nil {
		m.written = map[string][]string{}
	}
	p := filepath.Clean(st.path)
	m.written[p] = append(m.written[p], st.lists...)
}

// composePatches makes every JSON 6902 operation that adds a whole claims
// list add at the list's end instead, where the migration writes that list
// into what the operation's kustomization reaches: otherwise the add would
// replace the claims migrate wrote (the proof then refuses the unit).
func (m *migration) composePatches() {
	if m.tree == nil || len(m.written) == 0 {
		return
	}
	for _, k := range m.tree.Ordered() {
		if len(k.ClaimLists) == 0 {
			continue
		}
		have := map[string]bool{}
		for f := range m.tree.Reach(k.Path) {
			for _, key := range m.written[f] {
				have[key] = true
			}
		}
		for _, cl := range k.ClaimLists {
			if have[cl.Key()] {
				m.sides.AppendToList(cl.File, cl.Inline, cl.Op)
			}
		}
	}
}
