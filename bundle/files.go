package bundle

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/rules"
)

// Folders of the tree.
const (
	dirPhase1   = "phase-1"
	dirPhase2   = "phase-2"
	dirQuota    = "quota"
	dirRollback = "rollback"
)

// objectFile is the file name of a cluster object's configuration,
// <namespace>.<name>.yaml. Both come from a dump or a cluster, which are not
// trusted: a name that is not a valid Kubernetes name (a DNS-1123
// subdomain, its namespace a DNS-1123 label, as the API server requires)
// could be a path ("/../../x"), so it is refused and no bundle is made.
func objectFile(kind, ns, name string) (string, error) {
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return "", fmt.Errorf("%s %q/%q in the cluster facts: namespace %q is not a valid Kubernetes namespace (%s): refused, no bundle written", kind, ns, name, ns, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return "", fmt.Errorf("%s %q/%q in the cluster facts: name %q is not a valid Kubernetes name (%s): refused, no bundle written", kind, ns, name, name, strings.Join(errs, "; "))
	}
	return ns + "." + name + ".yaml", nil
}

func (g *generator) put(path string, header string, objs ...any) error {
	var buf bytes.Buffer
	if header != "" {
		for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
			buf.WriteString("# " + l + "\n")
		}
	}
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(b)
	}
	g.tree[path] = buf.Bytes()
	return nil
}

func (g *generator) kustomization(dir, header string, resources []string) error {
	k := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  resources,
	}
	return g.put(dir+"/kustomization.yaml", header, k)
}

func applyCmd(dir string) string {
	return fmt.Sprintf("kubectl apply --server-side --force-conflicts --field-manager=%s -k %s", FieldManager, dir)
}

func partialDaemonSet(ns, name string, terms *corev1.NodeSelector) map[string]any {
	obj := map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "DaemonSet",
		"metadata":   map[string]any{"name": name, "namespace": ns},
	}
	if terms != nil {
		obj["spec"] = map[string]any{"template": map[string]any{"spec": map[string]any{
			"affinity": map[string]any{"nodeAffinity": map[string]any{
				"requiredDuringSchedulingIgnoredDuringExecution": terms,
			}},
		}}}
	}
	return obj
}

// exclude ANDs "ModeLabel NotIn [dra]" into every term of orig (terms are
// ORed, so each needs it); with no terms it makes one.
func exclude(orig *corev1.NodeSelector) *corev1.NodeSelector {
	req := corev1.NodeSelectorRequirement{Key: ModeLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{ModeDRA}}
	if orig == nil || len(orig.NodeSelectorTerms) == 0 {
		return &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req}}}}
	}
	out := orig.DeepCopy()
	for i := range out.NodeSelectorTerms {
		t := &out.NodeSelectorTerms[i]
		if !slices.ContainsFunc(t.MatchExpressions, func(r corev1.NodeSelectorRequirement) bool {
			return r.Key == req.Key && r.Operator == req.Operator && slices.Equal(r.Values, req.Values)
		}) {
			t.MatchExpressions = append(t.MatchExpressions, req)
		}
	}
	return out
}

func (g *generator) phase1() error {
	if len(g.patched) == 0 {
		return nil
	}
	var res []string
	for _, p := range g.patched {
		file, err := objectFile("DaemonSet", p.ns, p.name)
		if err != nil {
			return err
		}
		res = append(res, file)
		head := fmt.Sprintf("Server-side apply configuration: adds %s NotIn [%s] to every required node\naffinity term of %s/%s, so the device plugin leaves DRA nodes.", ModeLabel, ModeDRA, p.ns, p.name)
		if err := g.put(dirPhase1+"/"+file, head, partialDaemonSet(p.ns, p.name, exclude(p.orig))); err != nil {
			return err
		}
		rhead := "Restores the required node affinity " + p.ns + "/" + p.name + " had before phase 1"
		if p.orig == nil {
			rhead += " (none):\napplying without the field removes what the kubedra field manager set."
		} else {
			rhead += "."
		}
		if !p.known {
			rhead += "\nAssumed, not read from a cluster: check it against your own copy."
		}
		if err := g.put(dirRollback+"/"+dirPhase1+"/"+file, rhead, partialDaemonSet(p.ns, p.name, p.orig)); err != nil {
			return err
		}
	}
	if err := g.kustomization(dirPhase1, "Phase 1: keep the device plugins off nodes labelled "+ModeLabel+"="+ModeDRA+".\n"+applyCmd(dirPhase1), res); err != nil {
		return err
	}
	return g.kustomization(dirRollback+"/"+dirPhase1, "Rollback of phase 1.\n"+applyCmd(dirRollback+"/"+dirPhase1), res)
}

func (g *generator) deviceClassObj(c DeviceClass) map[string]any {
	spec := map[string]any{"selectors": []any{map[string]any{"cel": map[string]any{"expression": c.Selector}}}}
	if c.ExtendedResourceName != "" {
		spec["extendedResourceName"] = c.ExtendedResourceName
	}
	return map[string]any{
		"apiVersion": rules.ResourceAPIVersion(g.Target),
		"kind":       "DeviceClass",
		"metadata":   map[string]any{"name": c.Name, "labels": map[string]any{"app.kubernetes.io/managed-by": "kubedra"}},
		"spec":       spec,
	}
}

func (g *generator) phase2() error {
	var res []string
	if h := g.d.Install.Helm; h != nil {
		if err := g.values(h); err != nil {
			return err
		}
		if h.Namespace != "kube-system" && h.Namespace != "default" {
			ns := map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": h.Namespace}}
			if len(h.NamespaceLabels) > 0 {
				ns["metadata"].(map[string]any)["labels"] = h.NamespaceLabels
			}
			if err := g.put(dirPhase2+"/namespace.yaml", "The driver's namespace, created before helm install.", ns); err != nil {
				return err
			}
			res = append(res, "namespace.yaml")
		}
	} else {
		b, err := g.driverManifests()
		if err != nil {
			return err
		}
		g.tree[dirPhase2+"/driver.yaml"] = b
		res = append(res, "driver.yaml")
	}
	if len(g.classes) > 0 {
		var objs []any
		for _, c := range g.classes {
			objs = append(objs, g.deviceClassObj(c))
		}
		if err := g.put(dirPhase2+"/deviceclasses.yaml", "DeviceClasses kubedra writes for "+g.d.Name+" (target "+g.Target.String()+", strategy "+string(g.Strategy)+").", objs...); err != nil {
			return err
		}
		res = append(res, "deviceclasses.yaml")
	}
	if len(res) == 0 {
		return nil
	}
	return g.kustomization(dirPhase2, "Phase 2: the "+g.d.Title+" ("+g.d.Release.Version+"), restricted to nodes labelled "+ModeLabel+"="+ModeDRA+".\n"+applyCmd(dirPhase2), res)
}

// values writes the Helm values file: the kubelet plugin's node selector and
// the settings the cutover needs.
func (g *generator) values(h *Helm) error {
	vals := map[string]any{}
	for k, v := range h.Values {
		vals[k] = v
	}
	setPath(vals, h.NodeSelectorPath, map[string]any{ModeLabel: ModeDRA})
	if h.TolerationsPath != "" && len(g.tolerations) > 0 {
		setPath(vals, h.TolerationsPath, g.tolerations)
	}
	if p := h.ExtendedResourceValue; p != "" {
		switch {
		case g.ext != nil:
			setPath(vals, p, g.ext.ExtendedResourceName)
		case g.Target.Less(rules.ExtendedResourceOn):
			setPath(vals, p, "")
		}
	}
	head := fmt.Sprintf("Helm values kubedra writes for %s %s (%s).\nThe kubelet plugin runs only on nodes labelled %s=%s.", g.d.Title, g.d.Release.Version, h.Chart, ModeLabel, ModeDRA)
	return g.put(dirPhase2+"/values.yaml", head, vals)
}

// setPath sets a dotted path in a nested map, merging maps on the way.
func setPath(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	last := keys[len(keys)-1]
	if mv, ok := v.(map[string]any); ok {
		if cur, ok := m[last].(map[string]any); ok {
			maps.Copy(cur, mv)
			return
		}
	}
	m[last] = v
}

// driverManifests returns the embedded plain manifests with the kubelet
// plugin DaemonSet restricted to DRA nodes. kyaml keeps comments and order.
func (g *generator) driverManifests() ([]byte, error) {
	src, err := g.d.manifests()
	if err != nil {
		return nil, err
	}
	nodes, err := (&kio.ByteReader{Reader: bytes.NewReader(src), OmitReaderAnnotations: true}).Read()
	if err != nil {
		return nil, fmt.Errorf("driver %s manifests: %w", g.d.Name, err)
	}
	found := false
	for _, n := range nodes {
		if n.GetKind() != "DaemonSet" || n.GetName() != g.d.KubeletPlugin.Name {
			continue
		}
		found = true
		if err := n.PipeE(kyaml.LookupCreate(kyaml.MappingNode, "spec", "template", "spec", "nodeSelector"), kyaml.SetField(ModeLabel, kyaml.NewStringRNode(ModeDRA))); err != nil {
			return nil, err
		}
		if len(g.tolerations) > 0 {
			b, err := yaml.Marshal(g.tolerations)
			if err != nil {
				return nil, err
			}
			tol, err := kyaml.Parse(string(b))
			if err != nil {
				return nil, err
			}
			if err := n.PipeE(kyaml.Lookup("spec", "template", "spec"), kyaml.SetField("tolerations", tol)); err != nil {
				return nil, err
			}
		}
	}
	if !found {
		return nil, errNoDriverDaemonSet
	}
	var out bytes.Buffer
	out.WriteString("# " + g.d.Title + " " + g.d.Release.Version + ": plain manifests; the kubelet plugin runs only on\n# nodes labelled " + ModeLabel + "=" + ModeDRA + ".\n")
	if err := (kio.ByteWriter{Writer: &out}).Write(nodes); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// quota writes, for every ResourceQuota limiting one of the family's
// resources, the per-class device key next to the existing one.
func (g *generator) quota() error {
	if g.Facts == nil {
		return nil
	}
	class := g.mainClass()
	key := corev1.ResourceName(class + ".deviceclass.resource.k8s.io/devices")
	var res []string
	for _, q := range g.Facts.Quotas {
		var val string
		var from []string
		for _, k := range slices.Sorted(maps.Keys(q.Spec.Hard)) {
			r, ok := strings.CutPrefix(string(k), "requests.")
			if !ok || !g.d.servesResource(r) {
				continue
			}
			from = append(from, string(k))
			if val == "" {
				v := q.Spec.Hard[k]
				val = v.String()
			}
		}
		if val == "" {
			continue
		}
		if _, has := q.Spec.Hard[key]; has {
			continue
		}
		file, err := objectFile("ResourceQuota", q.Namespace, q.Name)
		if err != nil {
			return err
		}
		res = append(res, file)
		obj := map[string]any{
			"apiVersion": "v1", "kind": "ResourceQuota",
			"metadata": map[string]any{"name": q.Name, "namespace": q.Namespace},
			"spec":     map[string]any{"hard": map[string]any{string(key): val}},
		}
		head := fmt.Sprintf("Adds %s (same limit as %s) to %s/%s;\nthe existing keys stay.", key, strings.Join(from, ", "), q.Namespace, q.Name)
		if err := g.put(dirQuota+"/"+file, head, obj); err != nil {
			return err
		}
		back := map[string]any{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": map[string]any{"name": q.Name, "namespace": q.Namespace}}
		if err := g.put(dirRollback+"/"+dirQuota+"/"+file, "Removes the key kubedra added.", back); err != nil {
			return err
		}
		g.quotaOut = append(g.quotaOut, fmt.Sprintf("%s/%s: %s=%s (kept: %s)", q.Namespace, q.Name, key, val, strings.Join(from, ", ")))
	}
	if len(res) == 0 {
		return nil
	}
	if err := g.kustomization(dirQuota, "Quota keys for DRA devices of class "+class+".\n"+applyCmd(dirQuota), res); err != nil {
		return err
	}
	return g.kustomization(dirRollback+"/"+dirQuota, "Rollback of the quota keys.\n"+applyCmd(dirRollback+"/"+dirQuota), res)
}

func labelList(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// MigrateConfigFile is the kit's kubedra configuration for step 7: its
// `ignore:` entries leave the requests of every other family of the
// catalogue as they are, so that the migrate of step 7 moves only what
// this kit installs a driver for (a pod asking for GPUs and EFA keeps its
// EFA on the EFA device plugin until the EFA kit runs).
const MigrateConfigFile = "migrate.kubedra.yaml"

// migrateConfig writes MigrateConfigFile (strategy claims: the only one
// with a migrate step), and warns when the family's nodes also advertise
// another family's devices.
func (g *generator) migrateConfig() error {
	if g.Strategy != StrategyClaims {
		return nil
	}
	cat, err := Catalogue()
	if err != nil {
		return err
	}
	type ignore struct {
		Resource string `json:"resource"`
		Reason   string `json:"reason"`
	}
	var ignores []ignore
	seen := map[string]bool{}
	for _, d := range cat {
		if d.Family == g.d.Family || d.Family == "example" {
			continue
		}
		g.others = append(g.others, d)
		for _, r := range d.Resources {
			if seen[r] {
				continue
			}
			seen[r] = true
			ignores = append(ignores, ignore{Resource: r,
				Reason: fmt.Sprintf("no %s driver in this %s kit; use kubedra bundle --driver %s", d.Family, g.d.Name, d.Name)})
		}
	}
	if g.Facts != nil {
		type advertised struct{ driver, family, resource string }
		also := map[advertised]bool{}
		for _, n := range g.familyNodes() {
			for r, q := range n.Status.Allocatable {
				for _, d := range g.others {
					if !q.IsZero() && d.servesResource(string(r)) {
						also[advertised{d.Name, d.Family, string(r)}] = true
					}
				}
			}
		}
		for _, a := range slices.SortedFunc(maps.Keys(also), func(x, y advertised) int {
			return cmp.Or(cmp.Compare(x.driver, y.driver), cmp.Compare(x.resource, y.resource))
		}) {
			g.warnf(RuleDriver, "the %s nodes also advertise %s (%s): step 7 leaves those requests on their device plugin (%s); move them with their own kit, kubedra bundle --driver %s, after this one", g.d.Family, a.family, a.resource, MigrateConfigFile, a.driver)
		}
	}
	return g.put(MigrateConfigFile, "kubedra configuration for step 7 of PLAN.md (kubedra migrate --config "+MigrateConfigFile+"):\nthe requests of device families this kit installs no driver for are left as they are.",
		struct {
			Ignore []ignore `json:"ignore"`
		}{ignores})
}
