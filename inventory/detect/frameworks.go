package detect

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// groupKinds are the kinds whose pod templates sit in replica groups, with
// the part of a pod-template path below its group (the group is the path
// without it) and how the group counts its pods.
var groupKinds = map[string]struct {
	suffix string
	count  func(root, group *yaml.Node, path string) int
}{
	"kubeflow.org/PyTorchJob":                     {".template.spec", replicas},
	"kubeflow.org/TFJob":                          {".template.spec", replicas},
	"kubeflow.org/MPIJob":                         {".template.spec", replicas},
	"kubeflow.org/XGBoostJob":                     {".template.spec", replicas},
	"kubeflow.org/PaddleJob":                      {".template.spec", replicas},
	"kubeflow.org/JAXJob":                         {".template.spec", replicas},
	"kubeflow.org/MXJob":                          {".template.spec", replicas},
	"batch.volcano.sh/Job":                        {".template.spec", replicas},
	"jobset.x-k8s.io/JobSet":                      {".template.spec.template.spec", jobsetPods},
	"trainer.kubeflow.org/TrainingRuntime":        {".template.spec.template.spec", jobsetPods},
	"trainer.kubeflow.org/ClusterTrainingRuntime": {".template.spec.template.spec", jobsetPods},
	"ray.io/RayCluster":                           {".template.spec", rayPods},
	"ray.io/RayJob":                               {".template.spec", rayPods},
	"ray.io/RayService":                           {".template.spec", rayPods},
	"leaderworkerset.x-k8s.io/LeaderWorkerSet":    {"Template.spec", lwsPods},
	"apps/Deployment":                             {".template.spec", replicas},
	"apps/StatefulSet":                            {".template.spec", replicas},
	"apps/ReplicaSet":                             {".template.spec", replicas},
}

// workload reads what the object around pod spec s tells the frameworks
// running it.
func (w *walk) workload(s spec) *inventory.Workload {
	wl := &inventory.Workload{Labels: map[string]string{}, Annotations: map[string]string{}, NodeLabels: map[string][]string{}}
	meta := get(w.root, "metadata")
	stringMap(get(meta, "labels"), wl.Labels)
	stringMap(get(meta, "annotations"), wl.Annotations)
	if s.parent != nil && s.parent != w.root {
		tm := get(s.parent, "metadata")
		stringMap(get(tm, "labels"), wl.Labels)
		stringMap(get(tm, "annotations"), wl.Annotations)
	}
	for _, m := range []*yaml.Node{s.hints, s.node} {
		nodeLabels(m, wl.NodeLabels)
	}
	if rcs := get(s.node, "resourceClaims"); rcs != nil && rcs.Kind == yaml.SequenceNode {
		for _, rc := range rcs.Content {
			if n := scalar(get(deref(rc), "name")); n != "" {
				wl.PodClaims = append(wl.PodClaims, n)
			}
		}
	}
	group, g, n := w.replicaGroup(s)
	if g == nil {
		return wl
	}
	if group != "spec" {
		wl.Group = group
	}
	wl.Replicas = n
	if p := get(g, "rayStartParams"); p != nil && p.Kind == yaml.MappingNode {
		wl.RayStartParams = map[string]string{}
		stringMap(p, wl.RayStartParams)
	}
	return wl
}

// replicaGroup is the replica group holding pod spec s (its path and map)
// and the pods of s it runs at once; g is nil when s's kind has no such
// group.
func (w *walk) replicaGroup(s spec) (group string, g *yaml.Node, pods int) {
	gk, ok := groupKinds[w.group()+"/"+w.kind]
	if !ok || !strings.HasSuffix(s.path, gk.suffix) {
		return "", nil, 0
	}
	group = strings.TrimSuffix(s.path, gk.suffix)
	if gk.suffix == "Template.spec" {
		// LeaderWorkerSet: leaderTemplate and workerTemplate share their group.
		group = group[:max(strings.LastIndex(group, "."), 0)]
	}
	g = nodeAt(w.root, group)
	if g == nil || g.Kind != yaml.MappingNode {
		return "", nil, 0
	}
	return group, g, gk.count(w.root, g, s.path)
}

// group is the API group of the document ("" for core).
func (w *walk) group() string {
	if i := strings.LastIndex(w.apiVersion, "/"); i >= 0 {
		return w.apiVersion[:i]
	}
	return ""
}

// replicas is a group's replicas (1 when absent, as the operators default).
func replicas(_, g *yaml.Node, _ string) int { return intField(g, "replicas", 1) }

// jobsetPods is a replicated job's pods: replicas jobs of JobPods each.
func jobsetPods(_, g *yaml.Node, _ string) int {
	return intField(g, "replicas", 1) * jobPods(get(get(g, "template"), "spec"))
}

// jobPods is the pods a Job spec runs at once: its parallelism (1 when
// absent), or its completions when fewer.
func jobPods(spec *yaml.Node) int {
	n := intField(spec, "parallelism", 1)
	if c := intField(spec, "completions", -1); c >= 0 && c < n {
		return c
	}
	return n
}

// rayPods is a Ray group's pods: one head, or replicas (else minReplicas)
// workers of numOfHosts pods each.
func rayPods(_, g *yaml.Node, path string) int {
	if strings.Contains(path, "headGroupSpec") {
		return 1
	}
	n := intField(g, "replicas", intField(g, "minReplicas", 1))
	return n * intField(g, "numOfHosts", 1)
}

// lwsPods is a LeaderWorkerSet's pods of one template: in each of its
// replicas groups, the leader, or size-1 workers (size pods when there is
// no leader template).
func lwsPods(root, g *yaml.Node, path string) int {
	groups := intField(get(root, "spec"), "replicas", 1)
	size := intField(g, "size", 1)
	switch {
	case strings.HasSuffix(path, "leaderTemplate.spec"):
		return groups
	case get(g, "leaderTemplate") == nil:
		return groups * size
	}
	return groups * max(size-1, 0)
}

func intField(m *yaml.Node, key string, def int) int {
	v := get(m, key)
	if v == nil {
		return def
	}
	n, err := strconv.Atoi(scalar(v))
	if err != nil {
		return def
	}
	return n
}

// stringMap copies a map of scalars into out.
func stringMap(m *yaml.Node, out map[string]string) {
	eachPair(m, func(k, v *yaml.Node) {
		if v.Kind == yaml.ScalarNode {
			out[k.Value] = v.Value
		}
	})
}

// nodeLabels collects the node labels a pod spec requires.
func nodeLabels(spec *yaml.Node, out map[string][]string) {
	spec = deref(spec)
	if spec == nil {
		return
	}
	eachPair(get(spec, "nodeSelector"), func(k, v *yaml.Node) {
		out[k.Value] = append(out[k.Value], scalar(v))
	})
	terms := get(get(get(get(spec, "affinity"), "nodeAffinity"), "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms")
	if terms == nil || terms.Kind != yaml.SequenceNode {
		return
	}
	for _, t := range terms.Content {
		exprs := get(deref(t), "matchExpressions")
		if exprs == nil || exprs.Kind != yaml.SequenceNode {
			continue
		}
		for _, e := range exprs.Content {
			key := scalar(get(e, "key"))
			if key == "" {
				continue
			}
			vals := out[key]
			if v := get(e, "values"); v != nil && v.Kind == yaml.SequenceNode {
				for _, x := range v.Content {
					vals = append(vals, scalar(x))
				}
			}
			out[key] = vals
		}
	}
}

// nodeAt resolves a path as detection writes them (dots escaped in keys,
// [key=value] or [i] after list fields) from root.
func nodeAt(root *yaml.Node, path string) *yaml.Node {
	cur := deref(root)
	for _, seg := range splitEscaped(path) {
		sel := ""
		if i := strings.IndexByte(seg, '['); i >= 0 && strings.HasSuffix(seg, "]") {
			seg, sel = seg[:i], seg[i+1:len(seg)-1]
		}
		cur = get(cur, seg)
		if sel == "" || cur == nil {
			continue
		}
		if cur.Kind != yaml.SequenceNode {
			return nil
		}
		var next *yaml.Node
		if k, v, ok := strings.Cut(sel, "="); ok {
			for _, el := range cur.Content {
				if scalar(get(deref(el), k)) == v {
					next = deref(el)
					break
				}
			}
		} else if i, err := strconv.Atoi(sel); err == nil && i >= 0 && i < len(cur.Content) {
			next = deref(cur.Content[i])
		}
		cur = next
	}
	return cur
}

// splitEscaped splits a path on dots that are not escaped.
func splitEscaped(path string) []string {
	var out []string
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		switch {
		case path[i] == '\\' && i+1 < len(path) && path[i+1] == '.':
			b.WriteByte('.')
			i++
		case path[i] == '.':
			out = append(out, b.String())
			b.Reset()
		default:
			b.WriteByte(path[i])
		}
	}
	return append(out, b.String())
}

// RuntimeUse is an object that runs pods from a cluster-scoped runtime:
// Runtime is the runtime's "Kind/name", Namespace the user's.
type RuntimeUse struct {
	Runtime, Namespace string
}

// RuntimeUses are what d uses of cluster-scoped runtimes: a KServe
// InferenceService whose predictor's model names a runtime (KServe takes a
// ServingRuntime of that name in its namespace first, else the
// ClusterServingRuntime), a Kubeflow TrainJob whose runtimeRef names a
// ClusterTrainingRuntime (the kind it defaults to).
func RuntimeUses(d *inventory.Document) []RuntimeUse {
	n := d.Node
	group, _, _ := strings.Cut(n.GetApiVersion(), "/")
	switch {
	case group == "serving.kserve.io" && n.GetKind() == "InferenceService":
		if rt := stringAt(n, "spec", "predictor", "model", "runtime"); rt != "" {
			return []RuntimeUse{{Runtime: "ClusterServingRuntime/" + rt, Namespace: n.GetNamespace()}}
		}
	case group == "trainer.kubeflow.org" && n.GetKind() == "TrainJob":
		if kind := stringAt(n, "spec", "runtimeRef", "kind"); kind == "" || kind == "ClusterTrainingRuntime" {
			if name := stringAt(n, "spec", "runtimeRef", "name"); name != "" {
				return []RuntimeUse{{Runtime: "ClusterTrainingRuntime/" + name, Namespace: n.GetNamespace()}}
			}
		}
	}
	return nil
}

// stringAt is the scalar at path under n, or "".
func stringAt(n *yaml.RNode, path ...string) string {
	v, err := n.Pipe(yaml.Lookup(path...))
	if err != nil || v == nil || v.YNode().Kind != yaml.ScalarNode {
		return ""
	}
	return v.YNode().Value
}
