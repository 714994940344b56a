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
	meta := get(root, "metadata")
	base := inventory.GovFinding{Origin: doc.Origin, APIVersion: scalar(get(root, "apiVersion")), Kind: scalar(get(root, "kind")),
		Namespace: scalar(get(meta, "namespace")), Name: scalar(get(meta, "name"))}
	if why := annotation(meta, IgnoreAnnotation); why != nil {
		base.Ignore = *why
	}
	at := func(f inventory.GovFinding, n *yaml.Node) inventory.GovFinding {
		if n != nil && n.Line > 0 {
			f.Line, f.Column = n.Line, n.Column
		} else {
			f.Line = doc.Origin.Line
		}
		return f
	}
	group, _, _ := strings.Cut(base.APIVersion, "/")
	if !strings.Contains(base.APIVersion, "/") {
		group = ""
	}
	spec := get(root, "spec")
	var out []inventory.GovFinding
	// resources reports each extended resource of a resource list.
	resources := func(what inventory.GovWhat, m *yaml.Node, field string) {
		var keys []string
		eachPair(m, func(k, _ *yaml.Node) { keys = append(keys, k.Value) })
		eachPair(m, func(k, v *yaml.Node) {
			if !IsExtendedResource(k.Value) || strings.HasPrefix(k.Value, DRABackedPrefix) || VolcanoDRAKey(k.Value) {
				return
			}
			f := base
			f.LimitType = base.LimitType
			f.What, f.Field, f.Key, f.Resource, f.Quantity, f.Keys = what, field, k.Value, k.Value, quantity(v), keys
			out = append(out, at(f, k))
		})
	}
	switch {
	case group == "" && base.Kind == "ResourceQuota":
		// core/v1 ResourceQuotaSpec: hard, scopes, scopeSelector.
		hard := get(spec, "hard")
		var keys []string
		eachPair(hard, func(k, _ *yaml.Node) { keys = append(keys, k.Value) })
		scoped := len(seqItems(get(spec, "scopes"))) > 0 || get(spec, "scopeSelector") != nil
		eachPair(hard, func(k, v *yaml.Node) {
			f := base
			f.What, f.Field, f.Key, f.Quantity, f.Keys, f.Scoped = inventory.GovQuota, "spec.hard", k.Value, quantity(v), keys, scoped
			key := k.Value
			switch {
			case key == ClaimCountKey:
			case strings.HasSuffix(key, ClassDevicesSuffix):
				f.Class = strings.TrimSuffix(key, ClassDevicesSuffix)
			case strings.HasPrefix(key, ImplicitClassPrefix):
				f.Class = strings.TrimPrefix(key, ImplicitClassPrefix)
			default:
				name := key
				if rest, ok := strings.CutPrefix(key, "requests."); ok {
					name = rest
				} else if rest, ok := strings.CutPrefix(key, "limits."); ok {
					name = rest
				}
				if !IsExtendedResource(name) {
					return
				}
				f.Resource = name
			}
			out = append(out, at(f, k))
		})
	case group == "" && base.Kind == "LimitRange":
		// core/v1 LimitRangeItem: default, defaultRequest, max, min,
		// maxLimitRequestRatio.
		for i, it := range seqItems(get(spec, "limits")) {
			base.LimitType = scalar(get(it, "type"))
			for _, fld := range []string{"default", "defaultRequest", "max", "min", "maxLimitRequestRatio"} {
				resources(inventory.GovLimitRange, get(it, fld), "spec.limits["+strconv.Itoa(i)+"]."+fld)
			}
		}
	case group == "kueue.x-k8s.io" && base.Kind == "ClusterQueue":
		// kueue apis/kueue/v1beta2 ClusterQueueSpec.ResourceGroups[]:
		// coveredResources, flavors[].resources[].{name, nominalQuota,
		// borrowingLimit, lendingLimit}.
		for i, rg := range seqItems(get(spec, "resourceGroups")) {
			var covered []string
			for _, c := range seqItems(get(rg, "coveredResources")) {
				covered = append(covered, scalar(c))
			}
			for _, c := range seqItems(get(rg, "coveredResources")) {
				name := scalar(c)
				if !IsExtendedResource(name) || strings.HasPrefix(name, DRABackedPrefix) {
					continue
				}
				f := base
				f.What, f.Field, f.Key, f.Resource, f.Keys = inventory.GovClusterQueue, "spec.resourceGroups["+strconv.Itoa(i)+"]", name, name, covered
				var quotas []string
				for _, fl := range seqItems(get(rg, "flavors")) {
					for _, r := range seqItems(get(fl, "resources")) {
						if scalar(get(r, "name")) == name {
							quotas = append(quotas, scalar(get(fl, "name"))+"="+quantity(get(r, "nominalQuota")))
						}
					}
				}
				f.Quantity = strings.Join(quotas, ",")
				out = append(out, at(f, c))
			}
		}
	case group == "kueue.x-k8s.io" && base.Kind == "ResourceFlavor":
		// ResourceFlavorSpec: nodeLabels, nodeTaints[], tolerations[].
		var keys []string
		eachPair(get(spec, "nodeLabels"), func(k, _ *yaml.Node) {
			if DeviceLabel(k.Value) {
				keys = append(keys, k.Value)
			}
		})
		for _, fld := range []string{"nodeTaints", "tolerations"} {
			for _, t := range seqItems(get(spec, fld)) {
				if DeviceToleration(scalar(get(t, "key")), scalar(get(t, "value"))) {
					keys = append(keys, scalar(get(t, "key")))
				}
			}
		}
		if len(keys) > 0 {
			f := base
			f.What, f.Field, f.Key = inventory.GovResourceFlavor, "spec", strings.Join(keys, ",")
			out = append(out, at(f, keyOf(root, "kind")))
		}
	case group == "config.kueue.x-k8s.io" && base.Kind == "Configuration":
		f := base
		f.What, f.Mappings = inventory.GovKueueConfig, mappings(root)
		out = append(out, at(f, keyOf(root, "kind")))
	case group == "" && base.Kind == "ConfigMap":
		data := get(root, "data")
		v := get(data, KueueConfigKey)
		if s := scalar(v); s != "" && strings.Contains(s, "config.kueue.x-k8s.io") {
			var cfg yaml.Node
			if err := yaml.Unmarshal([]byte(s), &cfg); err != nil {
				return out
			}
			c := deref(&cfg)
			if c == nil || scalar(get(c, "kind")) != "Configuration" {
				return out
			}
			f := base
			f.What, f.Mappings, f.ConfigKey, f.Field = inventory.GovKueueConfig, mappings(c), KueueConfigKey, "data"
			out = append(out, at(f, keyOf(data, KueueConfigKey)))
		}
	case group == "karpenter.sh" && base.Kind == "NodePool":
		// karpenter.sh/v1 NodePoolSpec.Limits (a ResourceList).
		resources(inventory.GovNodePool, get(spec, "limits"), "spec.limits")
	case group == "scheduling.volcano.sh" && base.Kind == "Queue":
		// scheduling.volcano.sh/v1beta1 QueueSpec: capability, deserved
		// (ResourceLists) and guarantee.resource.
		resources(inventory.GovVolcanoQueue, get(spec, "capability"), "spec.capability")
		resources(inventory.GovVolcanoQueue, get(spec, "deserved"), "spec.deserved")
		resources(inventory.GovVolcanoQueue, get(get(spec, "guarantee"), "resource"), "spec.guarantee.resource")
	}
	return out
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
