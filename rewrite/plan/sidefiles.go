package plan

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/kustomize"
)

// NameReferenceFile is the kustomize configurations file migrate writes
// beside a kustomization whose build gains claims (docs/migrate.md).
const NameReferenceFile = "kubedra-namereference.yaml"

// SideFiles plans the files a migration adds to besides the inputs it
// edits: the claims files that take the new objects of workloads whose own
// file cannot (strategic-merge patches, --claims-file), the kustomizations
// that must list them, the configurations file that makes kustomize's name
// transformers rename claim references (NameReferenceFile) and the
// DeviceClass file. What goes in depends on what the run migrated, so a
// run adds to it as its files end; Edits says what to write, in order.
type SideFiles struct {
	// DeviceClassFile is where extended-resource DeviceClasses go ("":
	// the stream's end).
	DeviceClassFile string
	// Detect are the detection options of the run: the pod-spec paths
	// the configurations file names.
	Detect detect.Options

	order    []string                 // claims files and kustomizations, first seen first
	claims   map[string][]*yaml.RNode // claims file -> new objects
	kustom   map[string][]string      // kustomization -> claims files to list
	nameRefs []string                 // kustomizations that get the configurations file
	refSet   map[string]bool
	pods     map[string]bool          // pod-spec paths of the run's workloads (kustomize field paths)
	appends  map[string]map[int][]int // patch file or kustomization -> inline patch's line (0: the file) -> operations
	written  map[string][]string      // migrated file -> the claims lists its plans write
}

// SideEdit is what to do to one side file: append objects, add entries to
// a kustomization's lists, or merge pod-spec paths into a kustomize
// configurations file (rewrite.Side applies it).
type SideEdit struct {
	Path           string
	Objects        []*yaml.RNode
	Resources      []string
	Configurations []string
	// NameReferences are the pod-spec paths (kustomize field paths) of a
	// configurations file.
	NameReferences []string
	// Appends are the JSON 6902 operations to turn into adds at a list's
	// end (rewrite.AppendToLists), by the line where the inline patch
	// holding them starts (0: the file is the patch).
	Appends map[int][]int
}

// ClaimListKeys name the claims lists a file plan writes, as claimListKey
// names what a JSON 6902 operation adds: "P|" and the pod spec's path
// (kustomize field path) for a pod's resourceClaims, "C|", the path, the
// container list and the index for a container's resources.claims.
func ClaimListKeys(fp *FilePlan) []string {
	var out []string
	for _, dp := range fp.Docs {
		for _, pe := range dp.Pods {
			p := KustomizePath(pe.Path)
			if len(pe.ResourceClaims) > 0 {
				out = append(out, "P|"+p)
			}
			for _, ce := range pe.Containers {
				if len(ce.Claims) == 0 {
					continue
				}
				list := "containers"
				if ce.Type == inventory.InitContainer || ce.Type == inventory.SidecarContainer {
					list = "initContainers"
				}
				out = append(out, fmt.Sprintf("C|%s|%s|%d", p, list, ce.Index))
			}
		}
	}
	return out
}

// Compose makes every JSON 6902 operation that adds a whole claims list
// add at the list's end instead, where the migration writes that list
// into what the operation's kustomization reaches (written: the claims
// lists of the migrated files, Wrote): otherwise the add would replace
// the claims migrate wrote.
func (s *SideFiles) Compose(tree *kustomize.Tree) {
	if tree == nil || len(s.written) == 0 {
		return
	}
	for _, k := range tree.Ordered() {
		if len(k.ClaimLists) == 0 {
			continue
		}
		have := map[string]bool{}
		for f := range tree.Reach(k.Path) {
			for _, key := range s.written[f] {
				have[key] = true
			}
		}
		for _, cl := range k.ClaimLists {
			if have[claimListKey(cl.Path)] {
				s.AppendToList(cl.File, cl.Inline, cl.Op)
			}
		}
	}
}

// claimListKey names the claims list a JSON pointer adds, as
// ClaimListKeys names what a plan writes; list indexes between are
// dropped (the path of a pod template, whichever list item holds it).
func claimListKey(pointer string) string {
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	n := len(parts)
	switch {
	case n >= 1 && parts[n-1] == "resourceClaims":
		return "P|" + pointerPath(parts[:n-1])
	case n >= 4 && parts[n-2] == "resources" && parts[n-1] == "claims":
		return "C|" + pointerPath(parts[:n-4]) + "|" + parts[n-4] + "|" + parts[n-3]
	}
	return ""
}

// pointerPath joins a pod spec's JSON pointer segments without list
// indexes, as KustomizePath writes a detection path.
func pointerPath(parts []string) string {
	var out []string
	for _, p := range parts {
		if _, err := strconv.Atoi(p); err != nil {
			out = append(out, strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~"))
		}
	}
	return strings.Join(out, "/")
}

// Wrote records the claims lists (ClaimListKeys) a migrated file's plans
// write, for Compose.
func (s *SideFiles) Wrote(path string, keys ...string) {
	if len(keys) == 0 {
		return
	}
	s.init()
	p := filepath.Clean(path)
	s.written[p] = append(s.written[p], keys...)
}

// AppendToList makes a JSON 6902 operation that adds a whole claims list,
// which the migration now writes into the base, add at the list's end.
func (s *SideFiles) AppendToList(file string, inline, op int) {
	s.init()
	if s.appends[file] == nil {
		s.appends[file] = map[int][]int{}
		if _, ok := s.kustom[file]; !ok && s.claims[file] == nil {
			s.order = append(s.order, file)
			s.kustom[file] = nil
		}
	}
	if !slices.Contains(s.appends[file][inline], op) {
		s.appends[file][inline] = append(s.appends[file][inline], op)
		slices.Sort(s.appends[file][inline])
	}
}

func (s *SideFiles) init() {
	if s.claims == nil {
		s.claims, s.kustom, s.refSet, s.pods = map[string][]*yaml.RNode{}, map[string][]string{}, map[string]bool{}, map[string]bool{}
		s.appends, s.written = map[string]map[int][]int{}, map[string][]string{}
	}
}

// AddClaims queues a file's new objects for its claims file, and the
// claims file for the kustomization beside it ("": none).
func (s *SideFiles) AddClaims(claimsFile, kustomization string, objs []*yaml.RNode) {
	s.init()
	if _, ok := s.claims[claimsFile]; !ok {
		s.order = append(s.order, claimsFile)
	}
	s.claims[claimsFile] = append(s.claims[claimsFile], objs...)
	if kustomization == "" {
		return
	}
	s.NeedNameReferences(kustomization)
	s.kustomization(kustomization)
	rel, _ := filepath.Rel(filepath.Dir(kustomization), claimsFile)
	if !slices.Contains(s.kustom[kustomization], rel) {
		s.kustom[kustomization] = append(s.kustom[kustomization], rel)
	}
}

func (s *SideFiles) kustomization(k string) {
	if _, ok := s.kustom[k]; !ok {
		s.order = append(s.order, k)
		s.kustom[k] = nil
	}
}

// NeedNameReferences gives the kustomization the configurations file: its
// build holds migrated workloads, whose claim references kustomize must
// rename with the claims (a namePrefix, a nameSuffix).
func (s *SideFiles) NeedNameReferences(kustomization string) {
	s.init()
	if kustomization == "" || s.refSet[kustomization] {
		return
	}
	s.refSet[kustomization] = true
	s.nameRefs = append(s.nameRefs, kustomization)
}

// AddPods records the pod templates of migrated workloads (detection's
// PodTemplatePath of each finding), which the configurations file names.
func (s *SideFiles) AddPods(paths ...string) {
	s.init()
	for _, p := range paths {
		s.pods[KustomizePath(p)] = true
	}
}

// Edits are the side files to write, in order: claims files, then the
// configurations files, then the kustomizations that list them, then the
// DeviceClass file (with classes, the run's DeviceClasses).
func (s *SideFiles) Edits(classes []*yaml.RNode) []SideEdit {
	s.init()
	var out []SideEdit
	for _, p := range s.order {
		if objs, ok := s.claims[p]; ok {
			out = append(out, SideEdit{Path: p, Objects: objs})
		}
	}
	for _, k := range s.nameRefs {
		s.kustomization(k)
	}
	if len(s.nameRefs) > 0 {
		pods := s.podSpecs()
		for _, k := range s.nameRefs {
			out = append(out, SideEdit{Path: filepath.Join(filepath.Dir(k), NameReferenceFile), NameReferences: pods})
		}
	}
	for _, p := range s.order {
		if _, ok := s.claims[p]; ok {
			continue
		}
		e := SideEdit{Path: p, Resources: s.kustom[p], Appends: s.appends[p]}
		if s.refSet[p] {
			e.Configurations = []string{NameReferenceFile}
		}
		out = append(out, e)
	}
	if len(classes) > 0 && s.DeviceClassFile != "" {
		out = append(out, SideEdit{Path: s.DeviceClassFile, Objects: classes})
	}
	return out
}

// podSpecs are the pod-spec paths the configurations file names, without
// a kind (a field spec without one applies to every kind that has the
// path): every path detection knows (rules files' templatePaths included),
// and the concrete paths of the run's workloads, which stand for the
// patterns with a `*` (kustomize's field paths have no wildcard).
func (s *SideFiles) podSpecs() []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, tp := range detect.PodSpecPaths(s.Detect) {
		for _, p := range tp.Paths {
			if !strings.Contains(p, "*") {
				add(KustomizePath(p))
			}
		}
	}
	var run []string
	for p := range s.pods {
		run = append(run, p)
	}
	slices.Sort(run)
	for _, p := range run {
		add(p)
	}
	return out
}

// KustomizePath turns a detection path (spec.replicatedJobs[].template.spec,
// spec.tasks[name=x].template.spec) into a kustomize field path
// (spec/replicatedJobs/template/spec): kustomize walks list items itself.
func KustomizePath(p string) string {
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
