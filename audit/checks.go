package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rules"
)

// Check ids: stable, documented in docs/audit.md.
const (
	CheckAPIReadiness     = "api-readiness"
	CheckNodeConflict     = "node-conflict"
	CheckDaemonSetOverlap = "daemonset-overlap"
	CheckClassNameClash   = "class-name-clash"
	CheckPluginAdvertises = "plugin-still-advertises"
	CheckNodeSupport      = "node-support"
	CheckGPUOperatorMode  = "gpu-operator-mode"
	CheckQuotaCounting    = "quota-stops-counting"
	CheckStaleNodeLabels  = "stale-node-labels"
	CheckPluginWorkloads  = "plugin-workloads"
)

// Check is one audit check.
type Check struct {
	ID       string
	Title    string
	Severity Severity
	// Needs are the resource types the check reads (as in the Resource of
	// a cluster.Problem): when one could not be read the check is skipped.
	Needs []string
	run   func(*env) []Finding
}

// Checks returns every check, in report order.
func Checks() []Check {
	return []Check{
		{CheckAPIReadiness, "server version and resource.k8s.io API", Error, []string{"discovery"}, checkAPI},
		{CheckNodeConflict, "device plugin and DRA driver serve the same devices on a node", Error,
			[]string{"nodes", "resourceslices"}, checkNodeConflict}, // pods add evidence: see checkNodeConflict
		{CheckDaemonSetOverlap, "device-plugin and DRA-driver DaemonSets would share nodes", Error,
			[]string{"nodes", "daemonsets"}, checkDaemonSetOverlap},
		{CheckClassNameClash, "DeviceClasses claim the same extendedResourceName", Warning,
			[]string{"deviceclasses"}, checkClassClash},
		{CheckPluginAdvertises, "a DRA-mapped name is still advertised by a device plugin", Warning,
			[]string{"nodes", "deviceclasses"}, checkPluginAdvertises},
		{CheckNodeSupport, "node types where DRA is not supported or needs care", Warning,
			[]string{"nodes"}, checkNodeSupport},
		{CheckGPUOperatorMode, "GPU Operator ClusterPolicy and GPUCluster together", Error,
			[]string{"clusterpolicies.nvidia.com", "gpuclusters.nvidia.com"}, checkGPUOperator},
		{CheckQuotaCounting, "quotas that stop counting after migration", Warning,
			[]string{"resourcequotas", "deviceclasses"}, checkQuotas},
		{CheckStaleNodeLabels, "device labels and taints left on DRA-only nodes", Warning,
			[]string{"nodes", "pods", "resourceslices"}, checkStaleLabels},
		{CheckPluginWorkloads, "workloads still on device plugins", Info,
			[]string{"pods"}, checkWorkloads},
	}
}

func checkAPI(e *env) []Finding {
	served := e.f.ResourceAPIVersions
	v1 := slices.Contains(served, "v1")
	var out []Finding
	switch {
	case len(served) == 0:
		out = append(out, Finding{Message: "resource.k8s.io is not served by this cluster: DRA is off",
			Fix: "upgrade the control plane to Kubernetes 1.34+ (resource.k8s.io/v1, DRA on by default)"})
	case e.serverOK && e.server.Less(rules.Version{Major: 1, Minor: 32}):
		out = append(out, Finding{Message: fmt.Sprintf("Kubernetes %s serves only alpha DRA (%s)", e.f.ServerVersion, strings.Join(served, ", ")),
			Fix: "upgrade to Kubernetes 1.34+; kubedra targets 1.32 to 1.38"})
	case !v1 && e.serverOK && e.server.AtLeast(rules.Version{Major: 1, Minor: 34}):
		out = append(out, Finding{Message: fmt.Sprintf("Kubernetes %s does not serve resource.k8s.io/v1 (served: %s)", e.f.ServerVersion, strings.Join(served, ", ")),
			Fix: "enable resource.k8s.io/v1 (--runtime-config) on the API server"})
	case !v1:
		out = append(out, Finding{Severity: Warning, Message: fmt.Sprintf("only beta DRA is served (%s): DynamicResourceAllocation is beta and off by default before 1.34", strings.Join(served, ", ")),
			Fix: "upgrade to 1.34+ for resource.k8s.io/v1, or make sure the DynamicResourceAllocation gate is on in every component"})
	}
	if !e.serverOK {
		out = append(out, Finding{Severity: Info, Message: "server version unknown (a dump without ClusterInfo): version checks were skipped",
			Fix: "use `kubedra audit --dump` to record the server version"})
	} else if e.server.Less(rules.Version{Major: 1, Minor: 36}) && len(served) > 0 {
		out = append(out, Finding{Severity: Info, Message: fmt.Sprintf("Kubernetes %s: DRAExtendedResource (KEP-5004) is off by default before 1.36, so DeviceClass extendedResourceName does not serve unchanged workloads", e.f.ServerVersion),
			Fix: "rewrite workloads to ResourceClaims (kubedra migrate), or upgrade to 1.36+"})
	}
	return out
}

// checkNodeConflict: on one node, a device plugin (allocatable or plugin
// pod) and a DRA driver (ResourceSlices or driver pod) serve the same family.
// Allocatable and ResourceSlices are evidence enough, so the check runs
// when pods were not read (a dump of nodes and slices): it then says so
// instead of calling the plugin and the driver host services.
func checkNodeConflict(e *env) []Finding {
	podsRead := !e.f.Missing("pods")
	type key struct{ pool, family string }
	groups := map[key][]string{}
	evidence := map[key][]string{}
	// host: pools where a node shows the conflict with no plugin or driver
	// pod at all (host services, e.g. Bottlerocket's); first: the first
	// node of each, whose image decides the remediation.
	host := map[key]bool{}
	first := map[key]cluster.Node{}
	for _, n := range e.f.Nodes {
		for fam, pev := range e.plugin[n.Name] {
			dev, ok := e.dra[n.Name][fam]
			if !ok {
				continue
			}
			k := key{n.PoolName(), fam}
			groups[k] = append(groups[k], n.Name)
			if len(evidence[k]) == 0 {
				evidence[k] = []string{n.Name + ": " + strings.Join(pev, ", ") + " and " + strings.Join(dev, ", ")}
				first[k] = n
			}
			if !slices.ContainsFunc(slices.Concat(pev, dev), func(s string) bool { return strings.HasPrefix(s, "pod ") }) {
				host[k] = true
			}
		}
	}
	var out []Finding
	if s := e.f.PluginPodsScope; s != "" {
		out = append(out, Finding{Severity: Warning,
			Message: "device-plugin and DRA-driver pods were read in " + s + ": on other nodes conflicts are seen only through node allocatable and ResourceSlices",
			Fix:     "grant list on pods in all namespaces (docs/rbac.yaml), or audit without -n"})
	}
	for k, nodes := range groups {
		n := first[k]
		msg := fmt.Sprintf("pool %s: a device plugin and a DRA driver both serve %s devices on %d node(s): %s (%s)",
			k.pool, k.family, len(nodes), list(nodes), evidence[k][0])
		if img := n.Image(); img != "" {
			msg += "; node image " + img
		}
		if host[k] {
			switch {
			case !podsRead:
				msg += "; pods were not read: if no plugin or driver pod runs there, both are host services of the node image"
			case hostServices(n):
				msg += "; no plugin or driver pod runs there: both are host services of the node image"
			default:
				msg += "; no plugin or driver pod runs there, and this node image runs neither as a host service"
			}
		}
		out = append(out, Finding{Pool: k.pool, Objects: nodeRefs(nodes), Message: msg,
			Fix: conflictFix(n, k.family, host[k], podsRead)})
	}
	return out
}

// hostServices reports whether the node's image can run a device plugin
// and a DRA driver as host services (dra.md §6.1, §7.1, §7.3): Bottlerocket
// and AKS managed GPU nodes.
func hostServices(n cluster.Node) bool {
	return n.Image() == cluster.ImageBottlerocket || n.Provider == "aks"
}

// conflictFix is how to keep one mechanism per node, for the node's image
// (dra.md §6.1, §7): its own settings where the image runs them, the
// DaemonSets' placement where they are pods.
func conflictFix(n cluster.Node, family string, host, podsRead bool) string {
	const daemonSet = "keep the device plugin's DaemonSet off these nodes (a nodeAffinity NotIn on a label the DRA nodes carry; with the GPU Operator, label them nvidia.com/gpu.deploy.device-plugin=false), or the DRA driver's off the plugin's nodes"
	nvidia := family == "nvidia"
	switch {
	case n.Image() == cluster.ImageAutoMode:
		return "EKS Auto Mode runs the NVIDIA DRA driver in its node runtime (Kubernetes 1.36+) and must not also run a device plugin: keep your device-plugin DaemonSet off Auto Mode nodes (nodeAffinity eks.amazonaws.com/compute-type NotIn [auto]), and run what needs the plugin on a managed node group"
	case n.Image() == cluster.ImageBottlerocket && nvidia:
		return "disable the node image's device plugin on these nodes (Bottlerocket: settings.kubelet-device-plugins.nvidia.enabled=false, which also lets its DRA unit start), or its DRA driver (settings.kubelet-dra-drivers.nvidia.enabled=false)"
	case n.Image() == cluster.ImageBottlerocket:
		return "Bottlerocket runs its device plugins as host services: turn this family's off in the node's settings (settings.kubelet-device-plugins), or keep the DRA driver off these nodes"
	case n.Provider == "gke" && nvidia:
		return "GKE runs the NVIDIA device plugin on its GPU node pools: run DRA on a node pool created with gpu-driver-version=disabled in --accelerator and the node label gke-no-default-nvidia-gpu-device-plugin=true, or keep the DRA driver off this pool"
	case n.Provider == "aks" && nvidia:
		return "AKS managed GPU nodes run the device plugin and the NVIDIA DRA driver as host services (nvidia-device-plugin, dra-driver-nvidia-gpu): set the agent pool to one GPU mode; switching modes can leave both enabled (Azure/AgentBaker#8797), so check both services on the node"
	case host && podsRead:
		img := n.Image()
		if img == "" {
			img = "the node image"
		}
		return "no pod advertises these devices, and " + img + " runs no device plugin as a host service: find what registers them with the kubelet (a plugin run outside Kubernetes, a static pod), stop it, then " + daemonSet
	}
	return daemonSet
}

// checkDaemonSetOverlap evaluates each device-plugin DaemonSet against each
// DRA-driver DaemonSet of the same family on every node.
func checkDaemonSetOverlap(e *env) []Finding {
	var out []Finding
	nodesOf := map[string][]string{}
	family := map[string]string{}
	for _, ds := range e.f.DaemonSets {
		k := ds.Namespace + "/" + ds.Name
		nodesOf[k] = cluster.NodesFor(ds, e.f.Nodes)
		family[k] = ds.Family
		if ds.Family == "" {
			family[k] = e.inferFamily(ds.Role, nodesOf[k])
		}
	}
	for _, p := range e.f.DaemonSets {
		pf := family[p.Namespace+"/"+p.Name]
		if p.Role != cluster.DevicePlugin || pf == "" {
			continue
		}
		for _, d := range e.f.DaemonSets {
			if d.Role != cluster.DRADriver || family[d.Namespace+"/"+d.Name] != pf {
				continue
			}
			var both []string
			for _, n := range nodesOf[p.Namespace+"/"+p.Name] {
				if slices.Contains(nodesOf[d.Namespace+"/"+d.Name], n) {
					both = append(both, n)
				}
			}
			if len(both) == 0 {
				continue
			}
			objs := append([]Ref{
				{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: p.Namespace, Name: p.Name},
				{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: d.Namespace, Name: d.Name},
			}, nodeRefs(both)...)
			out = append(out, Finding{Objects: objs,
				Message: fmt.Sprintf("device-plugin DaemonSet %s/%s and DRA-driver DaemonSet %s/%s (%s) would both run on %d node(s): %s",
					p.Namespace, p.Name, d.Namespace, d.Name, pf, len(both), list(both)),
				Fix: "give the two DaemonSets disjoint nodeSelectors (e.g. a per-pool label), or a taint only the driver tolerates"})
		}
	}
	return out
}

// inferFamily names the family of a DaemonSet no signature knows: the one
// family its role serves on the nodes it schedules onto (allocatable for a
// plugin, ResourceSlices for a driver), or "" when there is not exactly one.
func (e *env) inferFamily(role cluster.Role, nodes []string) string {
	m := e.plugin
	if role == cluster.DRADriver {
		m = e.dra
	}
	fams := map[string]bool{}
	for _, n := range nodes {
		for fam := range m[n] {
			fams[fam] = true
		}
	}
	if len(fams) != 1 {
		return ""
	}
	return keys(fams)[0]
}

func checkClassClash(e *env) []Finding {
	var out []Finding
	for _, name := range keys(e.classByName) {
		dcs := e.classByName[name]
		if len(dcs) < 2 {
			continue
		}
		// Newest creationTimestamp wins; ties go to the smaller name
		// (extendedresourcecache, dra.md §2.2).
		winner := winningClass(dcs)
		var names []string
		var objs []Ref
		for _, dc := range dcs {
			names = append(names, dc.Name)
			objs = append(objs, Ref{APIVersion: dc.APIVersion, Kind: "DeviceClass", Name: dc.Name})
		}
		out = append(out, Finding{Objects: objs,
			Message: fmt.Sprintf("DeviceClasses %s all declare extendedResourceName %s; the scheduler uses %s (newest)", strings.Join(names, ", "), name, winner.Name),
			Fix:     "remove extendedResourceName from all but one class, unless you are moving the name between classes on purpose"})
	}
	return out
}

// winningClass is the class the scheduler uses for a name: newest
// creationTimestamp, ties to the smaller name (extendedresourcecache,
// dra.md §2.2).
func winningClass(dcs []cluster.DeviceClass) cluster.DeviceClass {
	return slices.MaxFunc(dcs, func(a, b cluster.DeviceClass) int {
		return cmp.Or(cmp.Compare(a.Created, b.Created), cmp.Compare(b.Name, a.Name))
	})
}

func checkPluginAdvertises(e *env) []Finding {
	var out []Finding
	for _, name := range keys(e.classByName) {
		var nodes []string
		for _, n := range e.f.Nodes {
			if q, ok := n.Allocatable[name]; ok && q != "0" {
				nodes = append(nodes, n.Name)
			}
		}
		if len(nodes) == 0 {
			continue
		}
		var classes []string
		for _, dc := range e.classByName[name] {
			classes = append(classes, dc.Name)
		}
		out = append(out, Finding{Objects: nodeRefs(nodes),
			Message: fmt.Sprintf("%s is mapped to DRA by DeviceClass %s but a device plugin still advertises it on %d node(s): %s; requests land on the plugin there",
				name, strings.Join(classes, ", "), len(nodes), list(nodes)),
			Fix: "remove the device plugin from these nodes once their workloads can use DRA"})
	}
	return out
}

// checkNodeSupport applies the managed-Kubernetes nuances of dra.md §7 to
// device nodes (nodes served by a plugin or a driver), per pool.
func checkNodeSupport(e *env) []Finding {
	s := nodeSupport{groups: map[nodeSupportKey][]string{}}
	for _, n := range e.f.Nodes {
		d := nodeDevices{dra: e.dra[n.Name], plugin: e.plugin[n.Name]}
		if len(d.dra) == 0 && len(d.plugin) == 0 {
			continue
		}
		s.eksAutoMode(e, n, d)
		if n.Karpenter && !n.EKSAutoMode {
			sev, msg, fix := e.karpenter()
			s.add(n, sev, msg, fix)
		}
		s.bottlerocket(e, n, d)
		s.gke(n, d)
		s.kubelet(n, d)
	}
	return s.findings()
}

// nodeDevices are the device families DRA drivers and device plugins serve
// on one node, with their evidence.
type nodeDevices struct{ dra, plugin map[string][]string }

// onDRA reports whether a DRA driver serves family on the node.
func (d nodeDevices) onDRA(family string) bool { _, ok := d.dra[family]; return ok }

// neuron reports whether a driver or a plugin serves Neuron devices.
func (d nodeDevices) neuron() bool { _, ok := d.plugin["neuron"]; return ok || d.onDRA("neuron") }

// nodeSupport collects node-support findings, grouping the nodes of a pool
// that share one.
type nodeSupport struct{ groups map[nodeSupportKey][]string }

type nodeSupportKey struct {
	pool, msg, fix string
	sev            Severity
}

// add records that msg (and fix) applies to n.
func (s *nodeSupport) add(n cluster.Node, sev Severity, msg, fix string) {
	k := nodeSupportKey{n.PoolName(), msg, fix, sev}
	s.groups[k] = append(s.groups[k], n.Name)
}

// findings are the groups, one finding each.
func (s *nodeSupport) findings() []Finding {
	var out []Finding
	for k, nodes := range s.groups {
		out = append(out, Finding{Severity: k.sev, Pool: k.pool, Objects: nodeRefs(nodes),
			Message: fmt.Sprintf("pool %s (%d node(s): %s): %s", k.pool, len(nodes), list(nodes), k.msg), Fix: k.fix})
	}
	return out
}

// eksAutoMode: Auto Mode serves DRA from 1.36 on, never Neuron's, and brings
// its own drivers.
func (s *nodeSupport) eksAutoMode(e *env, n cluster.Node, d nodeDevices) {
	switch {
	case n.EKSAutoMode && e.serverOK && e.server.Less(rules.Version{Major: 1, Minor: 36}):
		sev := Warning
		if len(d.dra) > 0 {
			sev = Error
		}
		s.add(n, sev, "EKS Auto Mode nodes support DRA only on Kubernetes 1.36+ (NVIDIA and EFA drivers built in)",
			"keep device plugins on Auto Mode until 1.36, or move these workloads to managed node groups")
	case n.EKSAutoMode && d.neuron():
		sev := Warning
		if d.onDRA("neuron") {
			sev = Error
		}
		s.add(n, sev, "EKS Auto Mode does not support the Neuron DRA driver", "keep the Neuron device plugin on Auto Mode nodes")
	case n.EKSAutoMode:
		s.add(n, Info, "EKS Auto Mode installs the NVIDIA DRA driver and DRANET itself and forbids a plugin and a driver for one device type on a node",
			"do not install your own DRA driver on Auto Mode nodes")
	}
}

// bottlerocket: its NVIDIA variants run the driver as a host service and
// pre-bake the plugin; Neuron DRA is documented for AL2023 only.
func (s *nodeSupport) bottlerocket(e *env, n cluster.Node, d nodeDevices) {
	if !n.Bottlerocket {
		return
	}
	if d.onDRA("nvidia") && !e.driverPodOn(n.Name, "nvidia") {
		s.add(n, Info, "Bottlerocket runs the NVIDIA DRA driver as a host service (settings.kubelet-dra-drivers.nvidia.enabled): no driver pod, and no DeviceClass unless you create one",
			"create the gpu.nvidia.com DeviceClass (kubedra bundle --driver nvidia writes it) and keep settings.kubelet-device-plugins.nvidia.enabled=false on these nodes")
	}
	if d.neuron() {
		s.add(n, Warning, "Bottlerocket with Neuron: earlier AWS docs list the Neuron DRA driver for AL2023 only",
			"verify Bottlerocket support for the Neuron DRA driver, or use AL2023 nodes")
	} else if len(d.plugin) > 0 {
		s.add(n, Info, "Bottlerocket NVIDIA variants ship the device plugin pre-baked",
			"check that the node image lets you disable the device plugin before installing a DRA driver")
	}
}

// gke: the NVIDIA DRA driver needs GKE's own device plugin disabled.
func (s *nodeSupport) gke(n cluster.Node, d nodeDevices) {
	if n.Provider == "gke" && d.onDRA("nvidia") && n.Labels["gke-no-default-nvidia-gpu-device-plugin"] != "true" {
		s.add(n, Error, "GKE node runs the NVIDIA DRA driver without gke-no-default-nvidia-gpu-device-plugin=true: the GKE-managed device plugin is not disabled",
			"recreate the node pool with gpu-driver-version=disabled and the label gke-no-default-nvidia-gpu-device-plugin=true")
	}
}

// kubelet: DRA is beta before 1.34, and Neuron DRA needs 1.34.2+.
func (s *nodeSupport) kubelet(n cluster.Node, d nodeDevices) {
	kv, kpatch, ok := parseServer(n.KubeletVersion)
	if !ok || len(d.dra) == 0 {
		return
	}
	if kv.Less(rules.Version{Major: 1, Minor: 34}) {
		s.add(n, Warning, fmt.Sprintf("kubelet %s is older than 1.34: DRA is beta there and must be enabled", n.KubeletVersion),
			"upgrade the node pool to 1.34+")
	}
	if d.onDRA("neuron") && kv == (rules.Version{Major: 1, Minor: 34}) && kpatch < 2 {
		s.add(n, Error, "Neuron DRA needs kubelet 1.34.2+ (kubernetes/kubernetes#133920)", "upgrade the node pool to 1.34.2+")
	}
}

func checkGPUOperator(e *env) []Finding {
	var cps, gcs []cluster.OperatorPolicy
	for _, o := range e.f.Operators {
		if o.Kind == "ClusterPolicy" {
			cps = append(cps, o)
		} else {
			gcs = append(gcs, o)
		}
	}
	if len(cps) == 0 || len(gcs) == 0 {
		return nil
	}
	var objs []Ref
	for _, o := range append(cps, gcs...) {
		objs = append(objs, Ref{APIVersion: o.APIVersion, Kind: o.Kind, Name: o.Name})
	}
	return []Finding{{Objects: objs,
		Message: fmt.Sprintf("GPU Operator ClusterPolicy %s and GPUCluster %s both exist: the operator refuses to reconcile", cps[0].Name, gcs[0].Name),
		Fix:     "keep one: a ClusterPolicy (device plugin) or a GPUCluster (DRA driver, greenfield only)"}}
}

// checkQuotas: requests.<X> keeps counting after migration only when a
// DeviceClass maps X and the cluster has DRAExtendedResource (dra.md §2.4).
func checkQuotas(e *env) []Finding {
	var out []Finding
	kep5004 := e.serverOK && e.server.AtLeast(rules.Version{Major: 1, Minor: 36})
	for _, q := range e.f.Quotas {
		for _, k := range keys(q.Hard) {
			res, ok := strings.CutPrefix(k, "requests.")
			if !ok || strings.HasPrefix(res, "deviceclass.resource.kubernetes.io/") {
				continue
			}
			ref := Ref{APIVersion: "v1", Kind: "ResourceQuota", Namespace: q.Namespace, Name: q.Name}
			classes := e.classByName[res]
			switch {
			case len(classes) == 0:
				out = append(out, Finding{Objects: []Ref{ref},
					Message: fmt.Sprintf("ResourceQuota %s/%s limits %s=%s; no DeviceClass maps %s, so devices claimed through DRA will not count",
						q.Namespace, q.Name, k, q.Hard[k], res),
					Fix: "add <class>.deviceclass.resource.k8s.io/devices to the quota, or set extendedResourceName on the DeviceClass"})
			case !kep5004:
				out = append(out, Finding{Objects: []Ref{ref},
					Message: fmt.Sprintf("ResourceQuota %s/%s limits %s=%s; DeviceClass %s maps it, but claims count against it only with DRAExtendedResource (1.36+ default)",
						q.Namespace, q.Name, k, q.Hard[k], winningClass(classes).Name),
					Fix: fmt.Sprintf("add %s.deviceclass.resource.k8s.io/devices to the quota, or enable DRAExtendedResource", winningClass(classes).Name)})
			}
		}
	}
	return out
}

// checkStaleLabels: on nodes where only DRA serves a family, labels from
// feature discovery and device taints keep steering workloads.
func checkStaleLabels(e *env) []Finding {
	// Labels that DRA-driver DaemonSets select on are in use, not stale.
	used := map[string]bool{}
	for _, ds := range e.f.DaemonSets {
		if ds.Role != cluster.DRADriver {
			continue
		}
		for k := range ds.Placement.NodeSelector {
			used[k] = true
		}
		if a := ds.Placement.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
			for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				for _, r := range t.MatchExpressions {
					used[r.Key] = true
				}
			}
		}
	}
	type key struct{ pool, family string }
	labels := map[key]map[string]bool{}
	nodes := map[key][]string{}
	taints, tainted := map[key][]string{}, map[key][]string{}
	for _, n := range e.f.Nodes {
		for fam := range e.dra[n.Name] {
			if _, plug := e.plugin[n.Name][fam]; plug {
				continue
			}
			k := key{n.PoolName(), fam}
			var stale []string
			for l := range n.Labels {
				if featureLabel(l, fam) && !used[l] {
					stale = append(stale, "label "+l)
				}
			}
			for _, t := range n.Taints {
				if detect.FamilyOfResource(t.Key) == fam && detect.DeviceToleration(t.Key, t.Value) && t.Effect != corev1.TaintEffectPreferNoSchedule {
					taints[k] = appendNew(taints[k], t.Key+":"+string(t.Effect))
					tainted[k] = appendNew(tainted[k], n.Name)
				}
			}
			if len(stale) == 0 {
				continue
			}
			if labels[k] == nil {
				labels[k] = map[string]bool{}
			}
			for _, s := range stale {
				labels[k][s] = true
			}
			nodes[k] = append(nodes[k], n.Name)
		}
	}
	var out []Finding
	for k, ns := range nodes {
		out = append(out, Finding{Pool: k.pool, Objects: nodeRefs(ns),
			Message: fmt.Sprintf("pool %s: %d DRA-only node(s) for %s still carry %s (%s)", k.pool, len(ns), k.family,
				strings.Join(keys(labels[k]), ", "), list(ns)),
			Fix: "select devices with CEL in claims instead of node labels; remove device-plugin-era labels once no workload selects them"})
	}
	// A device taint (nvidia.com/gpu:NoSchedule) is not stale on a DRA
	// node: it still keeps other pods off, NVIDIA's chart tolerates it for
	// its kubelet plugin and its DRA demos tolerate it in pods. What
	// changes is who tolerates it: the ExtendedResourceToleration admission
	// plugin adds the toleration only to pods that request the extended
	// resource, and kubedra migrate keeps a manifest's tolerations without
	// adding one, so claim-only pods need it written.
	for k, ns := range tainted {
		out = append(out, Finding{Severity: Info, Pool: k.pool, Objects: nodeRefs(ns),
			Message: fmt.Sprintf("pool %s: %d DRA-only node(s) for %s keep the taint %s (%s); expected on DRA nodes, but pods that ask for devices through ResourceClaims only run there if they tolerate it",
				k.pool, len(ns), k.family, strings.Join(taints[k], ", "), list(ns)),
			Fix: "keep the taint and give migrated workloads the toleration in their manifests (the ExtendedResourceToleration admission plugin adds it only to pods that request the extended resource; kubedra migrate keeps existing tolerations and adds none)"})
	}
	return out
}

func appendNew(s []string, v string) []string {
	if slices.Contains(s, v) {
		return s
	}
	return append(s, v)
}

// featureLabel: a device feature-discovery label of a family (GFD/NFD
// device labels), not a label that DRA driver DaemonSets select on.
func featureLabel(l, family string) bool {
	switch {
	case strings.HasSuffix(l, ".present"), strings.Contains(l, ".deploy."), strings.HasPrefix(l, "feature.node.kubernetes.io/"):
		return false
	}
	return detect.DeviceLabel(l) && detect.FamilyOfResource(l) == family
}

// karpenter says what Karpenter does with pods that request devices through
// ResourceClaims, from its controller pod when one was read (peers.md §1.5:
// IGNORE_DRA_REQUESTS defaults to true, so they do not make it provision).
func (e *env) karpenter() (Severity, string, string) {
	fix := "keep nodes in this pool before moving its workloads to ResourceClaims (static capacity), keep them on extended resources (KEP-5004, 1.36+), or run Karpenter 1.15+ with IGNORE_DRA_REQUESTS=false and a cloud provider that publishes device templates"
	var ks []cluster.Autoscaler
	for _, a := range e.f.Autoscalers {
		if a.Kind == "karpenter" {
			ks = append(ks, a)
		}
	}
	if len(ks) == 0 {
		return Warning, "provisioned by Karpenter, whose controller was not among the pods read (version and IGNORE_DRA_REQUESTS unknown): by default Karpenter ignores DRA requests, so pods that ask for devices through ResourceClaims do not make it add nodes to this pool", fix
	}
	k := ks[0]
	ver := k.Version
	if ver == "" {
		ver = "(untagged " + k.Image + ")"
	}
	where := fmt.Sprintf("Karpenter %s (pod %s/%s)", ver, k.Namespace, k.Pod)
	switch k.IgnoreDRARequests {
	case "false":
		return Info, where + " runs with IGNORE_DRA_REQUESTS=false: it simulates DRA requests, but provisions for them only where its cloud provider publishes device templates (the AWS provider has none for GPUs yet: aws/karpenter-provider-aws#9519)",
			"check that the provider publishes templates for this pool's instance types before relying on it"
	case "unknown":
		return Warning, where + " sets IGNORE_DRA_REQUESTS from a ConfigMap or Secret: if it is true (the default), pods that ask for devices through ResourceClaims do not make it add nodes to this pool", fix
	}
	setting := "IGNORE_DRA_REQUESTS=true"
	if k.IgnoreDRARequests == "default" {
		setting = "IGNORE_DRA_REQUESTS unset, default true"
	}
	return Warning, where + " ignores DRA requests (" + setting + "): pods that ask for devices through ResourceClaims do not make it add nodes to this pool; pods with extended-resource requests still do", fix
}

// driverPodOn reports whether a DRA-driver pod of family runs on node.
func (e *env) driverPodOn(node, family string) bool {
	return slices.ContainsFunc(e.f.PluginPods, func(p cluster.PluginPod) bool {
		return p.Node == node && p.Role == cluster.DRADriver && p.Family == family
	})
}
