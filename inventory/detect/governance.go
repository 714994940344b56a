package detect

import (
	"bytes"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// Quota keys of DRA (k8s.io/kubernetes v1.37.2
// pkg/quota/v1/evaluator/core/resource_claims.go: ClaimObjectCountName,
// V1ResourceByDeviceClass with corev1.ResourceClaimsPerClass, and
// corev1.ResourceImplicitExtendedClaimsPerClass).
const (
	// ClaimCountKey counts ResourceClaim objects.
	ClaimCountKey = "count/resourceclaims.resource.k8s.io"
	// ClassDevicesSuffix follows a DeviceClass name in the key that counts
	// the devices claims request from that class.
	ClassDevicesSuffix = ".deviceclass.resource.k8s.io/devices"
	// ImplicitClassPrefix is the key that counts a class's devices under
	// its KEP-5004 implicit extended-resource name.
	ImplicitClassPrefix = "requests." + DRABackedPrefix
)

// VolcanoDRAKey reports whether a resource name is one of Volcano's DRA
// queue keys, deviceclass/<class> or <dim>.deviceclass/<class> (volcano
// v1.15 pkg/scheduler/plugins/capacity), not an extended resource.
func VolcanoDRAKey(name string) bool {
	return strings.HasPrefix(name, "deviceclass/") || strings.Contains(name, ".deviceclass/")
}

// KueueConfigKey is the ConfigMap data key that holds Kueue's
// Configuration in its manifests and Helm chart (kueue-manager-config).
const KueueConfigKey = "controller_manager_config.yaml"

// governKinds are the words a document's text must hold to be one
// governance detection reads (a byte filter like MayRequest): the kinds,
// and the group of Kueue's Configuration (a ConfigMap embeds it). Volcano's
// Queue is "Queue", which ClusterQueue holds too.
var governKinds = [][]byte{[]byte("ResourceQuota"), []byte("LimitRange"), []byte("Queue"), []byte("ResourceFlavor"),
	[]byte("config.kueue.x-k8s.io"), []byte("NodePool")}

// MayGovern reports whether a document's text can be an object that
// counts or governs devices.
func MayGovern(doc []byte) bool {
	for _, k := range governKinds {
		if bytes.Contains(doc, k) {
			return true
		}
	}
	return hidesText(doc)
}

// GovernanceDocuments returns the governance findings of all documents.
func GovernanceDocuments(docs []*inventory.Document) []inventory.GovFinding {
	var out []inventory.GovFinding
	for _, d := range docs {
		out = append(out, Governance(d)...)
	}
	return out
}

// Governance returns what a document holds that counts, limits or queues
// extended device resources: ResourceQuota hard keys, LimitRange limits,
// Kueue ClusterQueues, ResourceFlavors and Configurations (also embedded
// in a ConfigMap), Karpenter NodePool limits and Volcano Queues.
func Governance(doc *inventory.Document) []inventory.GovFinding {
	if doc == nil || doc.Node == nil {
		return nil
	}
	root := deref(doc.Node.YNode())
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	g := newGov(doc, root)
	if read, ok := govReaders[govKind{group: g.group(), kind: g.base.Kind}]; ok {
		read(g)
	}
	return g.out
}

// govKind is an object kind that governance detection reads, by API group
// ("" for core) and kind.
type govKind struct{ group, kind string }

// govReaders are the readers of the kinds that count, limit or queue
// devices.
var govReaders = map[govKind]func(*gov){
	{"", "ResourceQuota"}:                      (*gov).quota,
	{"", "LimitRange"}:                         (*gov).limitRange,
	{"kueue.x-k8s.io", "ClusterQueue"}:         (*gov).clusterQueue,
	{"kueue.x-k8s.io", "ResourceFlavor"}:       (*gov).resourceFlavor,
	{"config.kueue.x-k8s.io", "Configuration"}: (*gov).kueueConfig,
	{"", "ConfigMap"}:                          (*gov).kueueConfigMap,
	{"karpenter.sh", "NodePool"}:               (*gov).nodePool,
	{"scheduling.volcano.sh", "Queue"}:         (*gov).volcanoQueue,
}

// gov is one document being read for governance findings.
type gov struct {
	root, spec *yaml.Node
	// line is the document's line, for findings at a node without one.
	line int
	// base is what every finding of the document starts from.
	base inventory.GovFinding
	out  []inventory.GovFinding
}

// newGov reads the object's identity and ignore annotation into the base
// finding.
func newGov(doc *inventory.Document, root *yaml.Node) *gov {
	meta := get(root, "metadata")
	g := &gov{root: root, spec: get(root, "spec"), line: doc.Origin.Line,
		base: inventory.GovFinding{Origin: doc.Origin, APIVersion: scalar(get(root, "apiVersion")), Kind: scalar(get(root, "kind")),
			Namespace: scalar(get(meta, "namespace")), Name: scalar(get(meta, "name"))}}
	if why := annotation(meta, IgnoreAnnotation); why != nil {
		g.base.Ignore = *why
	}
	return g
}

// group is the object's API group, "" for core (an apiVersion without a
// slash).
func (g *gov) group() string {
	group, _, ok := strings.Cut(g.base.APIVersion, "/")
	if !ok {
		return ""
	}
	return group
}

// add appends f, placed at node n (or at the document's line when n has
// no position).
func (g *gov) add(f inventory.GovFinding, n *yaml.Node) {
	if n != nil && n.Line > 0 {
		f.Line, f.Column = n.Line, n.Column
	} else {
		f.Line = g.line
	}
	g.out = append(g.out, f)
}

// resources reports each extended resource of a resource list (not the
// DRA-backed names nor Volcano's DRA keys).
func (g *gov) resources(what inventory.GovWhat, m *yaml.Node, field string) {
	var keys []string
	eachPair(m, func(k, _ *yaml.Node) { keys = append(keys, k.Value) })
	eachPair(m, func(k, v *yaml.Node) {
		if !IsExtendedResource(k.Value) || strings.HasPrefix(k.Value, DRABackedPrefix) || VolcanoDRAKey(k.Value) {
			return
		}
		f := g.base
		f.What, f.Field, f.Key, f.Resource, f.Quantity, f.Keys = what, field, k.Value, k.Value, quantity(v), keys
		g.add(f, k)
	})
}

// quota reads a core/v1 ResourceQuotaSpec: hard, scopes, scopeSelector.
func (g *gov) quota() {
	hard := get(g.spec, "hard")
	var keys []string
	eachPair(hard, func(k, _ *yaml.Node) { keys = append(keys, k.Value) })
	scoped := len(seqItems(get(g.spec, "scopes"))) > 0 || get(g.spec, "scopeSelector") != nil
	eachPair(hard, func(k, v *yaml.Node) {
		class, resource, ok := quotaKey(k.Value)
		if !ok {
			return
		}
		f := g.base
		f.What, f.Field, f.Key, f.Quantity, f.Keys, f.Scoped = inventory.GovQuota, "spec.hard", k.Value, quantity(v), keys, scoped
		f.Class, f.Resource = class, resource
		g.add(f, k)
	})
}

// quotaKey decides whether a quota's hard key counts devices: a DRA key
// (the claim count, or a class's devices, then class is set) or an
// extended resource, bare or after requests. or limits. (then resource is
// set).
func quotaKey(key string) (class, resource string, ok bool) {
	switch {
	case key == ClaimCountKey:
		return "", "", true
	case strings.HasSuffix(key, ClassDevicesSuffix):
		return strings.TrimSuffix(key, ClassDevicesSuffix), "", true
	case strings.HasPrefix(key, ImplicitClassPrefix):
		return strings.TrimPrefix(key, ImplicitClassPrefix), "", true
	}
	name := key
	if rest, ok := strings.CutPrefix(key, "requests."); ok {
		name = rest
	} else if rest, ok := strings.CutPrefix(key, "limits."); ok {
		name = rest
	}
	if !IsExtendedResource(name) {
		return "", "", false
	}
	return "", name, true
}

// limitRange reads the core/v1 LimitRangeItems: default, defaultRequest,
// max, min, maxLimitRequestRatio.
func (g *gov) limitRange() {
	for i, it := range seqItems(get(g.spec, "limits")) {
		g.base.LimitType = scalar(get(it, "type"))
		for _, fld := range []string{"default", "defaultRequest", "max", "min", "maxLimitRequestRatio"} {
			g.resources(inventory.GovLimitRange, get(it, fld), "spec.limits["+strconv.Itoa(i)+"]."+fld)
		}
	}
}

// clusterQueue reads kueue apis/kueue/v1beta2 ClusterQueueSpec.ResourceGroups[]:
// coveredResources, flavors[].resources[].{name, nominalQuota,
// borrowingLimit, lendingLimit}.
func (g *gov) clusterQueue() {
	for i, rg := range seqItems(get(g.spec, "resourceGroups")) {
		var covered []string
		for _, c := range seqItems(get(rg, "coveredResources")) {
			covered = append(covered, scalar(c))
		}
		for _, c := range seqItems(get(rg, "coveredResources")) {
			name := scalar(c)
			if !IsExtendedResource(name) || strings.HasPrefix(name, DRABackedPrefix) {
				continue
			}
			f := g.base
			f.What, f.Field, f.Key, f.Resource, f.Keys = inventory.GovClusterQueue, "spec.resourceGroups["+strconv.Itoa(i)+"]", name, name, covered
			f.Quantity = nominalQuotas(rg, name)
			g.add(f, c)
		}
	}
}

// nominalQuotas lists a resource group's nominal quotas of a resource,
// flavor=quantity, comma-separated.
func nominalQuotas(rg *yaml.Node, name string) string {
	var quotas []string
	for _, fl := range seqItems(get(rg, "flavors")) {
		for _, r := range seqItems(get(fl, "resources")) {
			if scalar(get(r, "name")) == name {
				quotas = append(quotas, scalar(get(fl, "name"))+"="+quantity(get(r, "nominalQuota")))
			}
		}
	}
	return strings.Join(quotas, ",")
}

// resourceFlavor reads a Kueue ResourceFlavorSpec: nodeLabels,
// nodeTaints[], tolerations[]; one finding when any of them names devices.
func (g *gov) resourceFlavor() {
	var keys []string
	eachPair(get(g.spec, "nodeLabels"), func(k, _ *yaml.Node) {
		if DeviceLabel(k.Value) {
			keys = append(keys, k.Value)
		}
	})
	for _, fld := range []string{"nodeTaints", "tolerations"} {
		for _, t := range seqItems(get(g.spec, fld)) {
			if DeviceToleration(scalar(get(t, "key")), scalar(get(t, "value"))) {
				keys = append(keys, scalar(get(t, "key")))
			}
		}
	}
	if len(keys) > 0 {
		f := g.base
		f.What, f.Field, f.Key = inventory.GovResourceFlavor, "spec", strings.Join(keys, ",")
		g.add(f, keyOf(g.root, "kind"))
	}
}

// kueueConfig reads a Kueue Configuration object.
func (g *gov) kueueConfig() {
	f := g.base
	f.What, f.Mappings = inventory.GovKueueConfig, mappings(g.root)
	g.add(f, keyOf(g.root, "kind"))
}

// kueueConfigMap reads the Kueue Configuration a ConfigMap embeds under
// KueueConfigKey, when it holds one that parses.
func (g *gov) kueueConfigMap() {
	data := get(g.root, "data")
	s := scalar(get(data, KueueConfigKey))
	if s == "" || !strings.Contains(s, "config.kueue.x-k8s.io") {
		return
	}
	var cfg yaml.Node
	if err := yaml.Unmarshal([]byte(s), &cfg); err != nil {
		return
	}
	c := deref(&cfg)
	if c == nil || scalar(get(c, "kind")) != "Configuration" {
		return
	}
	f := g.base
	f.What, f.Mappings, f.ConfigKey, f.Field = inventory.GovKueueConfig, mappings(c), KueueConfigKey, "data"
	g.add(f, keyOf(data, KueueConfigKey))
}

// nodePool reads karpenter.sh/v1 NodePoolSpec.Limits (a ResourceList).
func (g *gov) nodePool() {
	g.resources(inventory.GovNodePool, get(g.spec, "limits"), "spec.limits")
}

// volcanoQueue reads a scheduling.volcano.sh/v1beta1 QueueSpec: capability,
// deserved (ResourceLists) and guarantee.resource.
func (g *gov) volcanoQueue() {
	g.resources(inventory.GovVolcanoQueue, get(g.spec, "capability"), "spec.capability")
	g.resources(inventory.GovVolcanoQueue, get(g.spec, "deserved"), "spec.deserved")
	g.resources(inventory.GovVolcanoQueue, get(get(g.spec, "guarantee"), "resource"), "spec.guarantee.resource")
}

// mappings reads resources.deviceClassMappings of a Kueue Configuration
// (kueue apis/config/v1beta2 Resources.DeviceClassMappings: name,
// deviceClassNames); an empty, non-nil map when there are none.
func mappings(cfg *yaml.Node) map[string][]string {
	out := map[string][]string{}
	for _, m := range seqItems(get(get(cfg, "resources"), "deviceClassMappings")) {
		name := scalar(get(m, "name"))
		for _, c := range seqItems(get(m, "deviceClassNames")) {
			out[name] = append(out[name], scalar(c))
		}
		if _, ok := out[name]; !ok {
			out[name] = []string{}
		}
	}
	return out
}
