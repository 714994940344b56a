package bundle

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// plugins decides, for every device-plugin DaemonSet of the family, how it is
// kept off DRA nodes.
func (g *generator) plugins() {
	if g.Facts == nil {
		// Never patch what was only assumed: a chart's required node
		// affinity (the NVIDIA plugin chart ships three ORed terms) is
		// atomic under server-side apply, so a patch built on a guess
		// would replace it, and its rollback delete it.
		for _, p := range g.d.Plugins {
			if ex := p.exclusion(); ex != nil {
				g.warnf(RuleNoFacts, "defaults: if %s/%s (%s) runs in your cluster, it is reconciled by its owner and cannot be patched; set %s on the DRA nodes of each pool (kubedra only does so when it finds that DaemonSet: regenerate with --from-cluster).", p.Namespace, p.Name, p.Source, labelList(ex.ExcludeLabels))
			}
		}
		g.warnf(RuleNoFacts, "no cluster facts: phase 1 (keeping the %s device plugins off DRA nodes) is not written, because it must copy each plugin DaemonSet's own node affinity. Regenerate with --from-cluster, or with --from-dump FILE from `kubectl get nodes,daemonsets,resourcequotas -A -o yaml`, before labelling any pool.", g.d.Family)
		return
	}
	found := 0
	for i := range g.Facts.DaemonSets {
		ds := &g.Facts.DaemonSets[i]
		ref, ok := g.Facts.isPlugin(g.d, ds)
		if !ok {
			continue
		}
		found++
		id := ds.Namespace + "/" + ds.Name
		ex := (*Exclusion)(nil)
		if ref != nil {
			ex = ref.exclusion()
		}
		owner := controllerOwner(ds)
		managed := managedAddon(ds)
		if ex != nil {
			if nodes := g.stillRuns(ds, ex.ExcludeLabels); len(nodes) == 0 {
				maps.Copy(g.man.NodeLabels, ex.ExcludeLabels)
				g.man.Plugins = append(g.man.Plugins, PluginAction{Namespace: ds.Namespace, Name: ds.Name, Method: "labels", Labels: ex.ExcludeLabels, Source: "cluster"})
				g.warnf(RulePlugin, "%s (%s) is reconciled by its owner; it is kept off DRA nodes by labelling them %s instead of a patch.", id, ref.Source, labelList(ex.ExcludeLabels))
				continue
			} else if owner != "" || managed != "" {
				g.problemf(RuleUnsafe, "device-plugin DaemonSet %s (%s) cannot be excluded: it is reconciled by its owner, and its opt-out labels %s do not keep it off node(s) %s", id, ref.Source, labelList(ex.ExcludeLabels), strings.Join(nodes, ", "))
				continue
			}
		}
		switch {
		case owner != "":
			g.problemf(RuleUnsafe, "device-plugin DaemonSet %s is controlled by %s, which would revert a patch; disable the device plugin for the DRA nodes through that owner (for the AMD GPU Operator: DeviceConfig spec.devicePlugin.enableDevicePlugin=false on a DeviceConfig selecting only device-plugin nodes), then rerun", id, owner)
		case managed != "":
			g.problemf(RuleUnsafe, "device-plugin DaemonSet %s is a managed add-on (%s) that would revert a patch; disable it for the DRA node pools through the provider (e.g. GKE node-pool label gke-no-default-nvidia-gpu-device-plugin=true, or remove the EKS add-on), then rerun", id, managed)
		default:
			var orig *corev1.NodeSelector
			if a := ds.Spec.Template.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
				orig = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.DeepCopy()
			}
			pp := patchedPlugin{ns: ds.Namespace, name: ds.Name, orig: orig, known: true, helm: helmRelease(ds)}
			if pp.helm != "" {
				g.warnf(RulePlugin, "%s is managed by Helm release %s: a later helm upgrade may drop the kubedra affinity. Add this to that release's values (the key depends on the chart, e.g. affinity for nvdp/nvidia-device-plugin) before upgrading it: nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution with matchExpressions [{key: %s, operator: NotIn, values: [%s]}] in every term.", id, pp.helm, ModeLabel, ModeDRA)
			}
			g.patched = append(g.patched, pp)
			g.man.Plugins = append(g.man.Plugins, PluginAction{Namespace: ds.Namespace, Name: ds.Name, Method: "patch", Source: "cluster"})
		}
	}
	if found == 0 {
		g.warnf(RulePlugin, "no %s device-plugin DaemonSet found in %s: phase 1 is empty. If the plugin runs outside Kubernetes (e.g. baked into the node image), remove it from the DRA node pools by other means before labelling them.", g.d.Family, g.Facts.Source)
	}
}

// stillRuns lists the nodes where ds can run now and still could after
// labels are added.
func (g *generator) stillRuns(ds *appsv1.DaemonSet, labels map[string]string) []string {
	var out []string
	for i := range g.Facts.Nodes {
		n := g.Facts.Nodes[i].DeepCopy()
		if !runs(ds, n) {
			continue
		}
		if n.Labels == nil {
			n.Labels = map[string]string{}
		}
		maps.Copy(n.Labels, labels)
		n.Labels[ModeLabel] = ModeDRA
		if runs(ds, n) {
			out = append(out, n.Name)
		}
	}
	return out
}

// runs reports whether the DaemonSet controller would run a pod of ds on n.
func runs(ds *appsv1.DaemonSet, n *corev1.Node) bool {
	ok, _ := cluster.DaemonSetCanSchedule(cluster.PlacementOf(&ds.Spec.Template.Spec), n)
	return ok
}

func (p Plugin) exclusion() *Exclusion {
	if p.Operator != nil {
		return p.Operator
	}
	return p.Managed
}

// matchPlugin reports whether ds is a device plugin of d's family, and which
// catalogue entry it matched (nil when matched by image only).
func matchPlugin(d Driver, ds *appsv1.DaemonSet) (*Plugin, bool) {
	if matchWorkload(d.KubeletPlugin, ds) {
		return nil, false
	}
	for i := range d.Plugins {
		p := &d.Plugins[i]
		if (p.Namespace == ds.Namespace && p.Name == ds.Name) || labelsMatch(p.Labels, ds.Spec.Template.Labels) {
			return p, true
		}
	}
	if imagesMatch(d.Images, &ds.Spec.Template.Spec) {
		return nil, true
	}
	return nil, false
}

// matchWorkload reports whether ds is the workload w describes.
func matchWorkload(w Workload, ds *appsv1.DaemonSet) bool {
	if w.Namespace == ds.Namespace && w.Name == ds.Name {
		return true
	}
	return labelsMatch(w.Labels, ds.Spec.Template.Labels) || imagesMatch(w.Images, &ds.Spec.Template.Spec)
}

func labelsMatch(want, have map[string]string) bool {
	if len(want) == 0 {
		return false
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func imagesMatch(repos []string, spec *corev1.PodSpec) bool {
	for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
		repo := imageRepo(c.Image)
		for _, r := range repos {
			if repo == r || strings.HasSuffix(repo, "/"+r) {
				return true
			}
		}
	}
	return false
}

// imageRepo strips the tag and digest from an image reference.
func imageRepo(image string) string {
	if i := strings.Index(image, "@"); i >= 0 {
		image = image[:i]
	}
	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		image = image[:i]
	}
	return image
}

func controllerOwner(ds *appsv1.DaemonSet) string {
	for _, o := range ds.OwnerReferences {
		if o.Controller != nil && *o.Controller {
			return fmt.Sprintf("%s %s (%s)", o.Kind, o.Name, o.APIVersion)
		}
	}
	return ""
}

// managedAddon recognises DaemonSets a cloud provider reconciles.
func managedAddon(ds *appsv1.DaemonSet) string {
	if ds.Labels["addonmanager.kubernetes.io/mode"] == "Reconcile" {
		return "addonmanager.kubernetes.io/mode=Reconcile"
	}
	if m := ds.Labels["app.kubernetes.io/managed-by"]; strings.EqualFold(m, "EKS") {
		return "app.kubernetes.io/managed-by=" + m
	}
	return ""
}

func helmRelease(ds *appsv1.DaemonSet) string {
	if r := ds.Annotations["meta.helm.sh/release-name"]; r != "" {
		return ds.Annotations["meta.helm.sh/release-namespace"] + "/" + r
	}
	if ds.Labels["app.kubernetes.io/managed-by"] == "Helm" {
		return ds.Labels["app.kubernetes.io/instance"]
	}
	return ""
}

// familyNodes are the nodes where a plugin of the family can run now or that
// advertise one of its resources.
func (g *generator) familyNodes() []*corev1.Node {
	var out []*corev1.Node
	for i := range g.Facts.Nodes {
		n := &g.Facts.Nodes[i]
		if g.advertises(n) || g.pluginRuns(n) {
			out = append(out, n)
		}
	}
	return out
}

func (g *generator) advertises(n *corev1.Node) bool {
	for r, q := range n.Status.Allocatable {
		if !q.IsZero() && g.d.servesResource(string(r)) {
			return true
		}
	}
	return false
}

func (g *generator) pluginRuns(n *corev1.Node) bool {
	for i := range g.Facts.DaemonSets {
		ds := &g.Facts.DaemonSets[i]
		if _, ok := g.Facts.isPlugin(g.d, ds); ok && runs(ds, n) {
			return true
		}
	}
	return false
}

// outsidePlugins finds pool nodes whose device plugin cannot be excluded by a
// DaemonSet change: nodes that advertise the family's resources with no
// plugin DaemonSet able to run there (a plugin baked into the node image, as
// on Bottlerocket's NVIDIA variants), and EKS Auto Mode nodes, whose runtime
// brings its own device software.
func (g *generator) outsidePlugins() {
	if g.Facts == nil {
		return
	}
	if len(g.Facts.DaemonSets) == 0 {
		g.warnf(RuleUnread, "%s has no DaemonSets: kubedra cannot tell whether the nodes' device plugins run in Kubernetes; include daemonsets in the dump.", g.Facts.Source)
		return
	}
	var outside, auto []string
	for i := range g.Facts.Nodes {
		n := &g.Facts.Nodes[i]
		if !g.inPools(n) || n.Labels[ModeLabel] == ModeDRA {
			continue
		}
		if n.Labels["eks.amazonaws.com/compute-type"] == "auto" {
			auto = append(auto, n.Name)
			continue
		}
		if g.advertises(n) && !g.pluginRuns(n) {
			outside = append(outside, n.Name)
		}
	}
	if len(auto) > 0 {
		g.problemf(RuleUnsafe, "EKS Auto Mode node(s) %s: Auto Mode runs its own device plugins and DRA drivers (NVIDIA and EFA DRA on 1.36+) and keeps them apart itself; do not install a driver there, leave these pools out with --pools", strings.Join(auto, ", "))
	}
	if len(outside) > 0 {
		g.problemf(RuleUnsafe, "node(s) %s advertise %s but no %s device-plugin DaemonSet can run there: the plugin runs outside Kubernetes (e.g. baked into the node image) and a DaemonSet patch cannot remove it; disable it on those nodes (node image or provider settings) or leave their pools out with --pools", strings.Join(outside, ", "), strings.Join(g.d.Resources, ", "), g.d.Family)
	}
}
