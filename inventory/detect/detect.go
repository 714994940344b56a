package detect

import (
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// IgnoreAnnotation excludes a workload from migration; its value says why.
const IgnoreAnnotation = "kubedra.io/ignore"

// Options steer detection.
type Options struct {
	// TemplatePaths add pod-spec paths for kinds detection does not know
	// (from rules files). They add to the built-in paths of a kind.
	TemplatePaths []inventory.TemplatePath
}

// Documents returns the findings of all documents, in document order.
func Documents(docs []*inventory.Document, opts Options) []inventory.Finding {
	var out []inventory.Finding
	for _, d := range docs {
		out = append(out, Document(d, opts)...)
	}
	return out
}

// PodSpec is a pod spec (or a map shaped like one) inside a document.
type PodSpec struct {
	// Path is the kyaml field path of the map, e.g. spec.template.spec.
	Path string
	// Node is the map itself.
	Node *yaml.RNode
	// Generic is true when it was found by the fallback for unknown kinds.
	Generic bool
}

// PodSpecs returns the pod specs detection looks at in a document, in the
// order it visits them: those of the document's kind, then those found by
// the generic fallback.
func PodSpecs(doc *inventory.Document, opts Options) []PodSpec {
	var out []PodSpec
	w := newWalk(doc, opts)
	for _, s := range w.specs() {
		out = append(out, PodSpec{Path: s.path, Node: yaml.NewRNode(s.node), Generic: s.generic})
	}
	return out
}

// Document returns the findings of one document.
func Document(doc *inventory.Document, opts Options) []inventory.Finding {
	if doc == nil || doc.Node == nil {
		return nil
	}
	w := newWalk(doc, opts)
	for _, s := range w.specs() {
		w.scanSpec(s)
	}
	return w.out
}

// spec is one pod spec to scan.
type spec struct {
	node    *yaml.Node
	parent  *yaml.Node // the pod template (holding metadata), when any
	path    string
	shape   shape
	hints   *yaml.Node // an extra map of scheduling fields (Argo workflow spec)
	hpath   string
	generic bool
	// single is a lone container-shaped map found by the fallback.
	single bool
}

type walk struct {
	doc        *inventory.Document
	root       *yaml.Node
	opts       Options
	apiVersion string
	kind       string
	name       string
	namespace  string
	ignore     *string
	seen       map[*yaml.Node]bool // container lists and containers already covered
	out        []inventory.Finding
}

func newWalk(doc *inventory.Document, opts Options) *walk {
	root := deref(doc.Node.YNode())
	w := &walk{doc: doc, root: root, opts: opts, seen: map[*yaml.Node]bool{}}
	if root == nil || root.Kind != yaml.MappingNode {
		return w
	}
	w.apiVersion = scalar(get(root, "apiVersion"))
	w.kind = scalar(get(root, "kind"))
	meta := get(root, "metadata")
	w.name = scalar(get(meta, "name"))
	if w.name == "" {
		w.name = scalar(get(meta, "generateName"))
	}
	w.namespace = scalar(get(meta, "namespace"))
	w.ignore = annotation(meta, IgnoreAnnotation)
	return w
}

// specs lists the pod specs of the document: known kinds first, then the
// generic fallback over what is left.
func (w *walk) specs() []spec {
	if w.root == nil || w.root.Kind != yaml.MappingNode {
		return nil
	}
	var out []spec
	for _, pp := range w.paths() {
		var hints *yaml.Node
		var hpath string
		if pp.hints != "" {
			for _, m := range expand(w.root, pp.hints) {
				hints, hpath = m.node, m.path
			}
		}
		for _, m := range expand(w.root, pp.pattern) {
			if m.node.Kind != yaml.MappingNode {
				continue
			}
			s := spec{node: m.node, parent: m.parent, path: m.path, shape: pp.shape, hints: hints, hpath: hpath}
			w.claim(s)
			out = append(out, s)
		}
	}
	return append(out, w.generic()...)
}

// paths returns the pod-spec paths of the document's kind.
func (w *walk) paths() []podPath {
	group := ""
	if i := strings.LastIndex(w.apiVersion, "/"); i >= 0 {
		group = w.apiVersion[:i]
	}
	paths := slices.Clone(builtinKinds[group+"/"+w.kind])
	for _, tp := range w.opts.TemplatePaths {
		if tp.Kind == w.kind && tp.Group == group {
			for _, p := range tp.Paths {
				paths = append(paths, podPath{pattern: p})
			}
		}
	}
	return paths
}

// claim marks the containers of a known spec so the fallback skips them.
func (w *walk) claim(s spec) {
	w.seen[s.node] = true
	for _, l := range []string{"containers", "initContainers", "ephemeralContainers", "sidecars"} {
		if seq := get(s.node, l); seq != nil {
			w.seen[seq] = true
			for _, c := range seq.Content {
				w.seen[deref(c)] = true
			}
		}
	}
	for _, k := range []string{"container", "script"} {
		if c := get(s.node, k); c != nil {
			w.seen[c] = true
		}
	}
	if cs := get(get(s.node, "containerSet"), "containers"); cs != nil {
		w.seen[cs] = true
		for _, c := range cs.Content {
			w.seen[deref(c)] = true
		}
	}
	for _, k := range kserveModels {
		if c := get(s.node, k); c != nil && s.shape == shapeKServe {
			w.seen[c] = true
		}
	}
}

// generic finds container lists and container-shaped maps the known paths
// did not cover.
func (w *walk) generic() []spec {
	var out []spec
	// segs is the path to the current node; it is joined only for the few
	// nodes that are reported (building every path costs more than the walk).
	var segs []string
	path := func() string {
		var b strings.Builder
		for _, s := range segs {
			if b.Len() > 0 && (s == "" || s[0] != '[') { // an empty key is a segment too
				b.WriteByte('.')
			}
			b.WriteString(s)
		}
		return b.String()
	}
	var visit func(n *yaml.Node, depth int)
	visit = func(n *yaml.Node, depth int) {
		n = deref(n)
		if depth > 64 {
			return
		}
		switch n.Kind {
		case yaml.MappingNode:
			if !w.seen[n] {
				hasList := false
				for _, l := range []string{"containers", "initContainers", "ephemeralContainers"} {
					if seq := get(n, l); seq != nil && seq.Kind == yaml.SequenceNode && !w.seen[seq] && containerList(seq) {
						hasList = true
					}
				}
				if hasList {
					s := spec{node: n, path: path(), shape: shapePod, generic: true}
					w.claim(s)
					out = append(out, s)
				} else if get(n, "resources") != nil && len(requests(n)) > 0 {
					// A container-shaped map outside any known list, or a
					// bare resources block (Helm values, CRD fields).
					w.seen[n] = true
					out = append(out, spec{node: n, path: path(), generic: true, single: true})
					return
				}
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				v := deref(n.Content[i+1])
				if v.Kind != yaml.MappingNode && v.Kind != yaml.SequenceNode {
					continue
				}
				segs = append(segs, escape(n.Content[i].Value))
				visit(v, depth+1)
				segs = segs[:len(segs)-1]
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				c = deref(c)
				if c.Kind != yaml.MappingNode && c.Kind != yaml.SequenceNode {
					continue
				}
				segs = append(segs, item(c, i))
				visit(c, depth+1)
				segs = segs[:len(segs)-1]
			}
		}
	}
	visit(w.root, 0)
	return out
}

// containerList reports whether every item of seq is a map with a name.
func containerList(seq *yaml.Node) bool {
	if len(seq.Content) == 0 {
		return false
	}
	for _, c := range seq.Content {
		if !containerShaped(deref(c)) {
			return false
		}
	}
	return true
}

func containerShaped(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.MappingNode && get(n, "name") != nil && (get(n, "image") != nil || get(n, "resources") != nil)
}

// scanSpec reports the requests of one pod spec.
func (w *walk) scanSpec(s spec) {
	var hints []inventory.Hint
	if !s.single {
		if s.hints != nil {
			hints = append(hints, Hints(s.hints, s.hpath)...)
		}
		hints = append(hints, Hints(s.node, s.path)...)
	}
	ignore := w.ignore
	if ignore == nil && s.parent != nil {
		ignore = annotation(get(s.parent, "metadata"), IgnoreAnnotation)
	}
	// The workload's facts are read once, for pod templates with requests.
	var wl *inventory.Workload
	workload := func() *inventory.Workload {
		if wl == nil && !s.generic {
			wl = w.workload(s)
		}
		return wl
	}
	emit := func(c *yaml.Node, idx int, name, listPath string, ct inventory.ContainerType) {
		for _, r := range requests(c) {
			f := inventory.Finding{
				Origin: w.doc.Origin, Line: r.line, Column: r.column,
				APIVersion: w.apiVersion, Kind: w.kind, Namespace: w.namespace, Name: w.name,
				PodTemplatePath: s.path, Container: name, ContainerIndex: idx, ContainerType: ct,
				Resource: r.name, Limit: r.limit, Request: r.request, Hints: hints, Generic: s.generic,
				Workload: workload(),
			}
			if ignore != nil {
				f.Ignore = *ignore
				f.IgnoreInvalid = strings.TrimSpace(*ignore) == ""
			}
			w.out = append(w.out, f)
		}
	}
	list := func(key string, ct inventory.ContainerType) {
		seq := get(s.node, key)
		if seq == nil || seq.Kind != yaml.SequenceNode {
			return
		}
		for i, c := range seq.Content {
			c = deref(c)
			t := ct
			if ct == inventory.InitContainer && scalar(get(c, "restartPolicy")) == "Always" {
				t = inventory.SidecarContainer
			}
			emit(c, i, scalar(get(c, "name")), join(s.path, key), t)
		}
	}
	if s.single {
		name := scalar(get(s.node, "name"))
		if name == "" {
			name = lastSegment(s.path)
		}
		emit(s.node, 0, name, s.path, inventory.Container)
		return
	}
	switch s.shape {
	case shapePod, shapeKServe:
		list("initContainers", inventory.InitContainer)
		list("containers", inventory.Container)
		list("ephemeralContainers", inventory.EphemeralContainer)
		if s.shape == shapeKServe {
			for _, k := range kserveModels {
				if m := get(s.node, k); m != nil && m.Kind == yaml.MappingNode {
					name := scalar(get(m, "name"))
					if name == "" {
						name = k
					}
					emit(m, 0, name, join(s.path, k), inventory.Container)
				}
			}
		}
	case shapeArgo:
		list("initContainers", inventory.InitContainer)
		for _, k := range []string{"container", "script"} {
			if c := get(s.node, k); c != nil && c.Kind == yaml.MappingNode {
				name := scalar(get(c, "name"))
				if name == "" {
					name = "main"
				}
				emit(c, 0, name, join(s.path, k), inventory.Container)
			}
		}
		if cs := get(s.node, "containerSet"); cs != nil {
			sub := s
			sub.node, sub.path = cs, join(s.path, "containerSet")
			seq := get(cs, "containers")
			if seq != nil && seq.Kind == yaml.SequenceNode {
				for i, c := range seq.Content {
					c = deref(c)
					emit(c, i, scalar(get(c, "name")), join(sub.path, "containers"), inventory.Container)
				}
			}
		}
		list("sidecars", inventory.Container)
	case shapeSpark:
		list("initContainers", inventory.InitContainer)
		list("sidecars", inventory.Container)
		if g := get(s.node, "gpu"); g != nil && g.Kind == yaml.MappingNode {
			nameNode := get(g, "name")
			if name := scalar(nameNode); IsExtendedResource(name) {
				key := keyOf(s.node, "gpu")
				f := inventory.Finding{
					Origin: w.doc.Origin, Line: key.Line, Column: key.Column,
					APIVersion: w.apiVersion, Kind: w.kind, Namespace: w.namespace, Name: w.name,
					PodTemplatePath: s.path, Container: lastSegment(s.path), ContainerType: inventory.Container,
					Resource: name, Limit: scalar(get(g, "quantity")), Hints: hints, Workload: workload(),
				}
				if ignore != nil {
					f.Ignore = *ignore
					f.IgnoreInvalid = strings.TrimSpace(*ignore) == ""
				}
				w.out = append(w.out, f)
			}
		}
		// A Spark pod spec may also carry plain container resources.
		if get(s.node, "resources") != nil {
			emit(s.node, 0, lastSegment(s.path), s.path, inventory.Container)
		}
	}
}

// request is one extended resource of one container.
type request struct {
	name           string
	limit, request string
	line, column   int
}

// requests returns the extended resources of a container, limits first.
func requests(c *yaml.Node) []request {
	res := get(c, "resources")
	if res == nil {
		return nil
	}
	var out []request
	idx := map[string]int{}
	for _, field := range []string{"limits", "requests"} {
		eachPair(get(res, field), func(k, v *yaml.Node) {
			if !IsExtendedResource(k.Value) {
				return
			}
			i, ok := idx[k.Value]
			if !ok {
				i = len(out)
				idx[k.Value] = i
				out = append(out, request{name: k.Value, line: k.Line, column: k.Column})
			}
			q := quantity(v)
			if field == "limits" {
				out[i].limit = q
			} else {
				out[i].request = q
			}
		})
	}
	return out
}

func quantity(v *yaml.Node) string {
	v = deref(v)
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return ""
	}
	return v.Value
}
