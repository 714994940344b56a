package bundle

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

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
	// others are the catalogue's drivers of the other families, whose
	// requests step 7 leaves as they are (migrateConfig).
	others []Driver
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
	if err := g.migrateConfig(); err != nil {
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
