package detect

import (
	"encoding/json"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

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
	// Replicas is the pods of this template its replica group runs at once
	// (inventory.Workload's Replicas), 0 when the kind has no such group.
	Replicas int
}

// PodSpecs returns the pod specs detection looks at in a document, in the
// order it visits them: those of the document's kind, then those found by
// the generic fallback.
func PodSpecs(doc *inventory.Document, opts Options) []PodSpec {
	var out []PodSpec
	w := newWalk(doc, opts)
	for _, s := range w.specs() {
		_, _, n := w.replicaGroup(s)
		out = append(out, PodSpec{Path: s.path, Node: yaml.NewRNode(s.node), Generic: s.generic, Replicas: n})
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
	sc := &scan{w: w, s: s, hints: specHints(s), ignore: w.ignoreOf(s)}
	if s.single {
		sc.single()
		return
	}
	switch s.shape {
	case shapePod, shapeKServe:
		sc.pod()
	case shapeArgo:
		sc.argo()
	case shapeSpark:
		sc.spark()
	}
}

// scan is one pod spec being scanned, with what its findings share.
type scan struct {
	w      *walk
	s      spec
	hints  []inventory.Hint
	ignore *string
	// wl is the workload's facts, read once (see workload).
	wl *inventory.Workload
}

// specHints are the scheduling hints of a pod spec (its extra hints map
// first); a lone container has none.
func specHints(s spec) []inventory.Hint {
	if s.single {
		return nil
	}
	var hints []inventory.Hint
	if s.hints != nil {
		hints = append(hints, Hints(s.hints, s.hpath)...)
	}
	return append(hints, Hints(s.node, s.path)...)
}

// ignoreOf is the ignore annotation of the document, else of the pod
// template holding s, or nil.
func (w *walk) ignoreOf(s spec) *string {
	if w.ignore == nil && s.parent != nil {
		return annotation(get(s.parent, "metadata"), IgnoreAnnotation)
	}
	return w.ignore
}

// workload reads the workload's facts once, for pod templates with
// requests; nil for the generic fallback.
func (sc *scan) workload() *inventory.Workload {
	if sc.wl == nil && !sc.s.generic {
		sc.wl = sc.w.workload(sc.s)
	}
	return sc.wl
}

// report completes f with what it shares with the pod spec's other
// findings and adds it.
func (sc *scan) report(f inventory.Finding) {
	w := sc.w
	f.Origin, f.APIVersion, f.Kind, f.Namespace, f.Name = w.doc.Origin, w.apiVersion, w.kind, w.namespace, w.name
	f.PodTemplatePath, f.Hints, f.Workload = sc.s.path, sc.hints, sc.workload()
	if sc.ignore != nil {
		f.Ignore = *sc.ignore
		f.IgnoreInvalid = strings.TrimSpace(*sc.ignore) == ""
	}
	w.out = append(w.out, f)
}

// emit reports the requests of container c.
func (sc *scan) emit(c *yaml.Node, idx int, name string, ct inventory.ContainerType) {
	for _, r := range requests(c) {
		sc.report(inventory.Finding{Line: r.line, Column: r.column, Container: name, ContainerIndex: idx, ContainerType: ct,
			Resource: r.name, Limit: r.limit, Request: r.request, Generic: sc.s.generic})
	}
}

// list reports the containers of the list key of map m; an init
// container with restartPolicy Always is a sidecar.
func (sc *scan) list(m *yaml.Node, key string, ct inventory.ContainerType) {
	seq := get(m, key)
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	for i, c := range seq.Content {
		c = deref(c)
		t := ct
		if ct == inventory.InitContainer && scalar(get(c, "restartPolicy")) == "Always" {
			t = inventory.SidecarContainer
		}
		sc.emit(c, i, scalar(get(c, "name")), t)
	}
}

// named reports the lone container map under key, named by its name
// field or else def.
func (sc *scan) named(key, def string) {
	m := get(sc.s.node, key)
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	name := scalar(get(m, "name"))
	if name == "" {
		name = def
	}
	sc.emit(m, 0, name, inventory.Container)
}

// single reports a container-shaped map found by the fallback, named by
// its name field or else its key.
func (sc *scan) single() {
	name := scalar(get(sc.s.node, "name"))
	if name == "" {
		name = lastSegment(sc.s.path)
	}
	sc.emit(sc.s.node, 0, name, inventory.Container)
}

// pod reports a pod spec's container lists, and a KServe predictor's
// model containers.
func (sc *scan) pod() {
	sc.list(sc.s.node, "initContainers", inventory.InitContainer)
	sc.list(sc.s.node, "containers", inventory.Container)
	sc.list(sc.s.node, "ephemeralContainers", inventory.EphemeralContainer)
	if sc.s.shape == shapeKServe {
		for _, k := range kserveModels {
			sc.named(k, k)
		}
	}
}

// argo reports an Argo template: init containers, its container or
// script, a containerSet's containers and sidecars.
func (sc *scan) argo() {
	sc.list(sc.s.node, "initContainers", inventory.InitContainer)
	for _, k := range []string{"container", "script"} {
		sc.named(k, "main")
	}
	if cs := get(sc.s.node, "containerSet"); cs != nil {
		sc.list(cs, "containers", inventory.Container)
	}
	sc.list(sc.s.node, "sidecars", inventory.Container)
}

// spark reports a Spark driver or executor spec: init containers,
// sidecars, its gpu field (the resource name is a value) and its own
// resources.
func (sc *scan) spark() {
	sc.list(sc.s.node, "initContainers", inventory.InitContainer)
	sc.list(sc.s.node, "sidecars", inventory.Container)
	if g := get(sc.s.node, "gpu"); g != nil && g.Kind == yaml.MappingNode {
		if name := scalar(get(g, "name")); IsExtendedResource(name) {
			key := keyOf(sc.s.node, "gpu")
			sc.report(inventory.Finding{Line: key.Line, Column: key.Column, Container: lastSegment(sc.s.path), ContainerType: inventory.Container,
				Resource: name, Limit: scalar(get(g, "quantity"))})
		}
	}
	// A Spark pod spec may also carry plain container resources.
	if get(sc.s.node, "resources") != nil {
		sc.emit(sc.s.node, 0, lastSegment(sc.s.path), inventory.Container)
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

// quantity is a quantity's text as Kubernetes reads it. kubectl and the
// API server turn YAML into JSON with sigs.k8s.io/yaml, a YAML 1.1 reader,
// for which an unquoted 010 is octal (8), 0x10 hexadecimal and 1_0 ten,
// while kyaml (YAML 1.2) keeps the text: an unquoted number that is not
// plain decimal is read by that decoder, and its JSON number is the
// quantity. A quoted one is a string, which Quantity parses as written.
func quantity(v *yaml.Node) string {
	v = deref(v)
	if v == nil || v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
		return ""
	}
	if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || plainDecimal(v.Value) {
		return v.Value
	}
	j, err := sigsyaml.YAMLToJSON([]byte("q: " + v.Value + "\n"))
	if err != nil {
		return v.Value
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(j, &m); err != nil {
		return v.Value
	}
	raw := string(m["q"])
	if strings.HasPrefix(raw, `"`) {
		var s string
		if json.Unmarshal(m["q"], &s) == nil {
			return s
		}
	}
	return raw
}

// plainDecimal reports whether s is digits without a leading zero, which
// every YAML reader reads alike.
func plainDecimal(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
