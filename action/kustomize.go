package action

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/rewrite"
)

// NameReferenceFile is the kustomize configurations file migrate writes
// beside a kustomization whose build gains claims (docs/migrate.md).
const NameReferenceFile = "kubedra-namereference.yaml"

// kustomizeState is what migrate knows of the input's kustomize build
// units (inventory/kustomize) and what it adds to them.
type kustomizeState struct {
	tree *kustomize.Tree
	// held are files left unchanged because a kustomization that reaches
	// them holds a patch kubedra cannot migrate (value: that kustomization).
	held map[string]string
	// nameRefs are the kustomizations that get the configurations file,
	// in order; pods are the pod-spec paths of the run's workloads.
	nameRefs []string
	refSet   map[string]bool
	pods     map[rewrite.FieldSpec]bool
}

func newKustomizeState(in Input, dopts detect.Options) (*kustomizeState, inventory.Diagnostics) {
	tree, diags := kustomize.Find(in.Paths, in.open)
	diags = append(diags, tree.CheckPatches(in.open, dopts)...)
	return &kustomizeState{tree: tree, held: tree.Held(), refSet: map[string]bool{}, pods: map[rewrite.FieldSpec]bool{}}, diags
}

// kustomizePatches are scan's diagnostics of the input's kustomize build
// units: what migrate would refuse, and kustomization files it cannot read.
func kustomizePatches(in Input, dopts detect.Options) inventory.Diagnostics {
	_, diags := newKustomizeState(in, dopts)
	return diags
}

// failed counts the files holding a patch migrate cannot migrate: their
// units are left as they were, and the run exits 1.
func (k *kustomizeState) failed(diags inventory.Diagnostics) int {
	if k == nil {
		return 0
	}
	return kustomizeFailed(diags)
}

// kustomizeFailed counts the files of diags holding a patch kubedra cannot
// migrate.
func kustomizeFailed(diags inventory.Diagnostics) int {
	files := map[string]bool{}
	for _, d := range diags {
		if d.Rule == kustomize.RulePatch && d.Severity == inventory.Error {
			files[d.File] = true
		}
	}
	return len(files)
}

// heldBy returns the kustomization whose patch keeps the file unchanged.
func (k *kustomizeState) heldBy(path string) string {
	if k == nil {
		return ""
	}
	return k.held[filepath.Clean(path)]
}

// heldDiagnostic says a request stays because its build unit holds a patch
// kubedra cannot migrate.
func heldDiagnostic(x inventory.Finding, by string) inventory.Diagnostic {
	return inventory.Diagnostic{Severity: inventory.Warning, Rule: kustomize.RuleHeld,
		File: x.Origin.Path, Line: x.Line, Object: x.Object(), Container: x.Container, Resource: x.Resource, Field: x.FieldPath(),
		Message: "left unchanged: " + by + " (or a kustomization sharing its bases) holds a patch kubedra cannot migrate (see above), and a base must be migrated the same way for every overlay",
		Fix:     "rewrite that patch as a strategic-merge patch file, then migrate again"}
}

// migrated records that the file's workloads were migrated: every
// kustomization listing it gets the name references, and the workloads'
// pod-spec paths join them.
func (k *kustomizeState) migrated(path string, pods map[rewrite.FieldSpec]bool) {
	if k == nil {
		return
	}
	for _, kz := range k.tree.Listing(path) {
		k.needRefs(kz.Path)
	}
	for fs := range pods {
		k.pods[fs] = true
	}
}

// record keeps the pod-spec paths of a planned batch's workloads, when the
// input has kustomizations.
func (k *kustomizeState) record(st *fileState, findings []inventory.Finding) {
	if k == nil || len(k.tree.Kustomizations) == 0 {
		return
	}
	if st.pods == nil {
		st.pods = map[rewrite.FieldSpec]bool{}
	}
	for _, f := range findings {
		st.pods[rewrite.FieldSpec{Path: kustomizePath(f.PodTemplatePath)}] = true
	}
}

func (k *kustomizeState) needRefs(kustomization string) {
	if k == nil || kustomization == "" || k.refSet[kustomization] {
		return
	}
	k.refSet[kustomization] = true
	k.nameRefs = append(k.nameRefs, kustomization)
}

// podSpecs are the pod-spec paths the configurations file names, without
// a kind (a field spec without one applies to every kind that has the
// path): every path detection knows (rules files' templatePaths included),
// and the concrete paths of the run's workloads, which stand for the
// patterns with a `*` (kustomize's field paths have no wildcard).
func (k *kustomizeState) podSpecs(dopts detect.Options) []rewrite.FieldSpec {
	seen := map[string]bool{}
	var out []rewrite.FieldSpec
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, rewrite.FieldSpec{Path: p})
		}
	}
	for _, tp := range detect.PodSpecPaths(dopts) {
		for _, p := range tp.Paths {
			if !strings.Contains(p, "*") {
				add(kustomizePath(p))
			}
		}
	}
	var run []string
	for fs := range k.pods {
		run = append(run, fs.Path)
	}
	slices.Sort(run)
	for _, p := range run {
		add(p)
	}
	return out
}

// kustomizePath turns a detection path (spec.replicatedJobs[].template.spec,
// spec.tasks[name=x].template.spec) into a kustomize field path
// (spec/replicatedJobs/template/spec): kustomize walks list items itself.
func kustomizePath(p string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth > 0:
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteByte(p[i])
		case c == '.':
			b.WriteByte('/')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// nameRefEdits are the kustomizations that list the configurations file;
// each joins the kustomization edits of sideFiles (one edit per file).
func (m *migration) nameRefEdits() map[string]bool {
	out := map[string]bool{}
	if m.kz == nil {
		return out
	}
	for _, k := range m.kz.nameRefs {
		out[k] = true
		if _, ok := m.kustom[k]; !ok {
			m.kustom[k] = nil
			m.sides = append(m.sides, k)
		}
	}
	return out
}

// writeNameRefs writes the configurations file beside each kustomization
// that lists it.
func (m *migration) writeNameRefs(ks map[string]bool) {
	if len(ks) == 0 {
		return
	}
	pods := m.kz.podSpecs(m.dopts)
	for _, k := range m.kz.nameRefs {
		path := filepath.Join(filepath.Dir(k), NameReferenceFile)
		m.side(path, func(old []byte) ([]byte, error) { return rewrite.NameReferences(old, pods) })
	}
}
