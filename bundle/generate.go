package bundle

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/rules"
)

// The node label convention and the field manager of every apply.
const (
	ModeLabel    = "kubedra.io/device-mode"
	ModeDRA      = "dra"
	FieldManager = "kubedra"
	// ManifestFile is the bundle's own description, read by Verify.
	ManifestFile = "kubedra-bundle.yaml"
)

// Strategy says how workloads move.
type Strategy string

// Strategies.
const (
	// StrategyClaims: workloads are rewritten to ResourceClaims (kubedra
	// migrate); DeviceClasses get no extendedResourceName from kubedra.
	StrategyClaims Strategy = "claims"
	// StrategyExtendedResource: workloads keep their extended-resource
	// requests and KEP-5004 serves them from DRA on labelled nodes.
	StrategyExtendedResource Strategy = "extended-resource"
)

// Options steer Generate.
type Options struct {
	Driver Driver
	// Pools are pool names (values of PoolLabel); empty means every pool
	// that has nodes of the family.
	Pools     []string
	PoolLabel string
	Target    rules.Version
	Strategy  Strategy
	// Facts are the cluster's nodes, DaemonSets and quotas; nil means none
	// known (defaults are used).
	Facts *Facts
	// Out is the output folder as the user named it; PLAN.md commands use it.
	Out string
}

// Tree maps slash-separated relative paths to file contents.
type Tree map[string][]byte

// Paths returns the tree's paths, sorted.
func (t Tree) Paths() []string { return slices.Sorted(maps.Keys(t)) }

// Result is what Generate produced.
type Result struct {
	Tree     Tree
	Manifest Manifest
	// Warnings are what the bundle leaves to the operator (severity
	// warning, no file); they are also written to PLAN.md.
	Warnings inventory.Diagnostics
}

// Manifest describes a bundle; it is written as kubedra-bundle.yaml and is
// what Verify checks a cluster against.
type Manifest struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Driver     string   `json:"driver"`
	Family     string   `json:"family"`
	DRADriver  string   `json:"draDriver"`
	Release    string   `json:"release"`
	Target     string   `json:"target"`
	Strategy   Strategy `json:"strategy"`
	// NodeLabels are set on a pool's nodes in the label phase.
	NodeLabels map[string]string `json:"nodeLabels"`
	// DriverNodeSelector restricts the driver's kubelet plugin.
	DriverNodeSelector map[string]string `json:"driverNodeSelector"`
	// DriverTolerations are the tolerations kubedra gives the kubelet plugin
	// for the pools' taints.
	DriverTolerations []corev1.Toleration `json:"driverTolerations,omitempty"`
	DriverDaemonSet   Workload            `json:"driverDaemonSet"`
	Plugins           []PluginAction      `json:"plugins"`
	PoolLabel         string              `json:"poolLabel,omitempty"`
	Pools             []Pool              `json:"pools"`
	FactsSource       string              `json:"factsSource"`
}

// PluginAction is how one device-plugin DaemonSet is kept off DRA nodes.
type PluginAction struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Method is "patch" (inverse node affinity, phase 1) or "labels" (the
	// plugin's own opt-out labels, set with the mode label).
	Method string            `json:"method"`
	Labels map[string]string `json:"labels,omitempty"`
	// Source says why kubedra knows this DaemonSet: "cluster" or "default".
	Source string `json:"source"`
}

// Pool is a set of nodes cut over together.
type Pool struct {
	Name string `json:"name"`
	// Selector is a label selector ("key=value"); when empty, Nodes lists
	// the nodes by name.
	Selector string   `json:"selector,omitempty"`
	Nodes    []string `json:"nodes,omitempty"`
}

// Rule ids of the bundle's diagnostics: its problems (errors: no bundle is
// written) and its warnings (what it leaves to the operator).
const (
	// RuleStrategy: the strategy cannot be served (the driver, the target).
	RuleStrategy = "bundle/strategy"
	// RulePools: the pools to move cannot be told, or one has no plugin node.
	RulePools = "bundle/pools"
	// RuleUnsafe: a device plugin the bundle cannot keep off DRA nodes.
	RuleUnsafe = "bundle/unsafe"
	// RuleUnread: cluster facts the bundle needs could not be read.
	RuleUnread = "bundle/unread"
	// RuleNoFacts: no cluster facts; the catalogue's defaults stand in.
	RuleNoFacts = "bundle/no-facts"
	// RulePlugin: how a device-plugin DaemonSet is kept off DRA nodes
	// needs the operator (labels instead of a patch, a Helm release), or
	// none was found.
	RulePlugin = "bundle/plugin"
	// RuleDriver: what the driver's install needs the operator to know.
	RuleDriver = "bundle/driver"
)

type generator struct {
	Options
	d        Driver
	problems inventory.Diagnostics
	warnings inventory.Diagnostics
	tree     Tree
	man      Manifest
	// plugins found (or defaulted), with their current pod spec when known.
	patched  []patchedPlugin
	ext      *DeviceClass // the class that declares the extended resource
	classes  []DeviceClass
	quotaOut []string
	// tolerations the driver's kubelet plugin needs for the pools' taints.
	tolerations []corev1.Toleration
}

type patchedPlugin struct {
	ns, name string
	orig     *corev1.NodeSelector // nil: no required node affinity
	known    bool                 // orig read from the cluster
	helm     string               // Helm release managing it, if any
}

// Generate builds the bundle for opts. It returns an
// *inventory.DiagnosticsError of its problems when the bundle would be unsafe
// or the input is wrong; nothing is written then.
func Generate(opts Options) (*Result, error) {
	g := &generator{Options: opts, d: opts.Driver, tree: Tree{}}
	if g.Strategy == "" {
		g.Strategy = StrategyClaims
	}
	if g.Target == (rules.Version{}) {
		g.Target = rules.DefaultTarget
	}
	g.man = Manifest{
		APIVersion: "kubedra.dev/v1alpha1", Kind: "Bundle",
		Driver: g.d.Name, Family: g.d.Family, DRADriver: g.d.DRADriver,
		Release: g.d.Release.Version, Target: g.Target.String(), Strategy: g.Strategy,
		NodeLabels:         map[string]string{ModeLabel: ModeDRA},
		DriverNodeSelector: map[string]string{ModeLabel: ModeDRA},
		DriverDaemonSet:    g.d.KubeletPlugin,
		Plugins:            []PluginAction{},
		FactsSource:        "none (catalogue defaults)",
	}
	if g.Facts != nil {
		g.man.FactsSource = g.Facts.Source
	}
	g.checkStrategy()
	g.unread()
	g.plugins()
	g.pools()
	g.outsidePlugins()
	if err := g.problems.Err(); err != nil {
		return nil, err
	}
	g.deviceClasses()
	g.taints()
	g.man.DriverTolerations = g.tolerations
	if err := g.phase1(); err != nil {
		return nil, err
	}
	if err := g.phase2(); err != nil {
		return nil, err
	}
	if err := g.quota(); err != nil {
		return nil, err
	}
	mb, err := yaml.Marshal(g.man)
	if err != nil {
		return nil, err
	}
	g.tree[ManifestFile] = append([]byte("# Written by kubedra bundle; read by kubedra bundle verify.\n"), mb...)
	g.tree["PLAN.md"] = []byte(g.plan())
	return &Result{Tree: g.tree, Manifest: g.man, Warnings: g.warnings}, nil
}

// problemf records why no bundle can be written.
func (g *generator) problemf(rule, format string, args ...any) {
	g.problems = append(g.problems, inventory.Diagnostic{Severity: inventory.Error, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

// warnf records what the bundle leaves to the operator.
func (g *generator) warnf(rule, format string, args ...any) {
	g.warnings = append(g.warnings, inventory.Diagnostic{Severity: inventory.Warning, Rule: rule, Message: fmt.Sprintf(format, args...)})
}

func (g *generator) checkStrategy() {
	switch g.Strategy {
	case StrategyClaims:
	case StrategyExtendedResource:
		if g.d.ExtendedResource == nil {
			g.problemf(RuleStrategy, "driver %s has no extended-resource mapping (KEP-5004); use --strategy claims", g.d.Name)
		}
		if g.Target.Less(rules.ExtendedResourceOn) {
			g.problemf(RuleStrategy, "--strategy extended-resource needs --target-version 1.36 or later: DRAExtendedResource is alpha and off by default in 1.34 and 1.35 and absent before; use --strategy claims")
		}
	default:
		g.problemf(RuleStrategy, "unknown strategy %q: use claims or extended-resource", g.Strategy)
	}
}

// unread turns what could not be read into problems and warnings: a bundle
// cannot keep plugins off nodes, or patch DaemonSets, it has not seen;
// without the quotas it only loses their device keys.
func (g *generator) unread() {
	if g.Facts == nil {
		return
	}
	for _, p := range g.Facts.Unread {
		if p.Resource == "nodes" || p.Resource == "daemonsets.apps" {
			g.problemf(RuleUnread, "%s in %s: a bundle needs every node and DaemonSet (docs/rbac.yaml lists the permissions)", p.Message, g.Facts.Source)
		} else {
			g.warnf(RuleUnread, "%s in %s: the bundle adds no DRA device keys to quotas it could not see.", p.Message, g.Facts.Source)
		}
	}
}

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

func (g *generator) pools() {
	label := g.PoolLabel
	if g.Facts == nil {
		switch {
		case len(g.Pools) > 0 && label == "":
			g.problemf(RulePools, "--pools without cluster facts needs --pool-label (the node label whose values name the pools, e.g. eks.amazonaws.com/nodegroup)")
		case len(g.Pools) > 0:
			for _, p := range g.Pools {
				g.man.Pools = append(g.man.Pools, Pool{Name: p, Selector: label + "=" + p})
			}
			g.man.PoolLabel = label
		default:
			g.man.Pools = []Pool{{Name: "all", Selector: "<pool-selector>"}}
			g.warnf(RulePools, "no pools and no cluster facts: PLAN.md uses the placeholder <pool-selector>; replace it with a label selector for one node pool at a time.")
		}
		return
	}
	family := g.familyNodes()
	if label == "" {
		label = detectPoolLabel(family)
	}
	g.man.PoolLabel = label
	if len(g.Pools) > 0 {
		if label == "" {
			g.problemf(RulePools, "cannot tell node pools apart: none of the nodes carries %s; pass --pool-label", strings.Join(cluster.PoolLabels, ", "))
			return
		}
		known := map[string]bool{}
		for _, n := range g.Facts.Nodes {
			if v, ok := n.Labels[label]; ok {
				known[v] = true
			}
		}
		for _, p := range g.Pools {
			if !known[p] {
				g.problemf(RulePools, "pool %q matches no node (%s=%s); known pools: %s", p, label, p, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
				continue
			}
			if !slices.ContainsFunc(family, func(n *corev1.Node) bool { return n.Labels[label] == p }) {
				g.warnf(RulePools, "pool %s has no node that runs a %s device plugin or advertises its resources; labelling it only installs the driver there.", p, g.d.Family)
			}
			g.man.Pools = append(g.man.Pools, Pool{Name: p, Selector: label + "=" + p})
		}
		return
	}
	if len(family) == 0 {
		g.problemf(RulePools, "no node runs a %s device plugin or advertises %s in %s; name the pools to move with --pools and --pool-label", g.d.Family, strings.Join(g.d.Resources, ", "), g.Facts.Source)
		return
	}
	byPool := map[string][]string{}
	var loose []string
	for _, n := range family {
		if v, ok := n.Labels[label]; ok && label != "" {
			byPool[v] = append(byPool[v], n.Name)
		} else {
			loose = append(loose, n.Name)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(byPool)) {
		g.man.Pools = append(g.man.Pools, Pool{Name: p, Selector: label + "=" + p})
	}
	if len(loose) > 0 {
		sort.Strings(loose)
		g.man.Pools = append(g.man.Pools, Pool{Name: "unpooled", Nodes: loose})
	}
}

func detectPoolLabel(nodes []*corev1.Node) string {
	for _, l := range cluster.PoolLabels {
		for _, n := range nodes {
			if _, ok := n.Labels[l]; ok {
				return l
			}
		}
	}
	return ""
}

// deviceClasses decides which classes kubedra writes and which one declares
// the extended resource.
func (g *generator) deviceClasses() {
	er := g.d.ExtendedResource
	useER := g.Strategy == StrategyExtendedResource
	for _, c := range g.d.DeviceClasses {
		if !c.ByKubedra {
			continue
		}
		c.ExtendedResourceName = ""
		if useER && er != nil && er.OnClass == c.Name {
			c.ExtendedResourceName = er.Resource
		}
		g.classes = append(g.classes, c)
	}
	if !useER || er == nil {
		return
	}
	if er.OnClass != "" {
		for i := range g.d.DeviceClasses {
			if g.d.DeviceClasses[i].Name == er.OnClass {
				c := g.d.DeviceClasses[i]
				c.ExtendedResourceName = er.Resource
				g.ext = &c
			}
		}
		return
	}
	base := g.d.DeviceClasses[0]
	sel := er.Selector
	if sel == "" {
		sel = base.Selector
	}
	// The same name as the class kubedra migrate/rules uses for this
	// resource, so the two never declare one extendedResourceName twice.
	c := DeviceClass{Name: rules.ExtendedResourceClassName(er.Resource), Selector: sel, ExtendedResourceName: er.Resource, ByKubedra: true}
	g.classes = append(g.classes, c)
	g.ext = &c
	g.warnf(RuleDriver, "DeviceClass %s (written by kubedra) declares extendedResourceName %s, so unchanged workloads that request it are served by %s on labelled nodes.", c.Name, er.Resource, g.d.DRADriver)
}

// mainClass is the class whose device quota replaces requests.<resource>.
func (g *generator) mainClass() string {
	if g.ext != nil {
		return g.ext.Name
	}
	return g.d.DeviceClasses[0].Name
}

var errNoDriverDaemonSet = errors.New("the example manifests have no kubelet-plugin DaemonSet")

// taints collects the NoSchedule/NoExecute taints of the pools' nodes that
// the driver's kubelet plugin must tolerate to run there (the DaemonSet
// controller already tolerates the node.kubernetes.io ones).
func (g *generator) taints() {
	if g.Facts == nil {
		return
	}
	seen := map[[2]string]bool{}
	for _, n := range g.Facts.Nodes {
		if !g.inPools(&n) {
			continue
		}
		for _, t := range n.Spec.Taints {
			if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
				continue
			}
			if strings.HasPrefix(t.Key, "node.kubernetes.io/") || seen[[2]string{t.Key, string(t.Effect)}] {
				continue
			}
			seen[[2]string{t.Key, string(t.Effect)}] = true
			g.tolerations = append(g.tolerations, corev1.Toleration{Key: t.Key, Operator: corev1.TolerationOpExists, Effect: t.Effect})
		}
	}
	sort.Slice(g.tolerations, func(i, j int) bool {
		a, b := g.tolerations[i], g.tolerations[j]
		return a.Key < b.Key || (a.Key == b.Key && a.Effect < b.Effect)
	})
	if len(g.tolerations) == 0 {
		return
	}
	if h := g.d.Install.Helm; h != nil && h.TolerationsPath == "" {
		var keys []string
		for _, t := range g.tolerations {
			keys = append(keys, t.Key+":"+string(t.Effect))
		}
		g.warnf(RuleDriver, "the pools' nodes are tainted (%s) and kubedra does not know this chart's tolerations value without replacing its defaults: add tolerations for them to phase-2/values.yaml, or kubedra bundle verify reports labelled nodes without a driver.", strings.Join(keys, ", "))
	}
}

// inPools reports whether n belongs to one of the bundle's pools.
func (g *generator) inPools(n *corev1.Node) bool {
	for _, p := range g.man.Pools {
		if p.Selector != "" {
			k, v, _ := strings.Cut(p.Selector, "=")
			if l, ok := n.Labels[k]; ok && l == v {
				return true
			}
		} else if slices.Contains(p.Nodes, n.Name) {
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
