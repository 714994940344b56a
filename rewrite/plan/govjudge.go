package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// govJudge judges governance findings; it resolves each resource once.
type govJudge struct {
	opts  GovOptions
	cache map[string]rules.Decision
	// needs are the deviceClassMappings Kueue needs for the ClusterQueues
	// of the input: their covered resource -> the class it moves to.
	needs []KueueMapping
	// mapped are the names the input's Kueue Configurations map each
	// class to.
	mapped map[string][]string
}

func newGovJudge(fs []inventory.GovFinding, opts GovOptions) *govJudge {
	j := &govJudge{opts: opts, cache: map[string]rules.Decision{}, mapped: map[string][]string{}}
	for _, f := range fs {
		if f.What != inventory.GovKueueConfig {
			continue
		}
		for name, cs := range f.Mappings {
			for _, c := range cs {
				if !slices.Contains(j.mapped[c], name) {
					j.mapped[c] = append(j.mapped[c], name)
				}
			}
		}
	}
	for _, ns := range j.mapped {
		sort.Strings(ns)
	}
	j.needs = j.kueueNeeds(fs)
	return j
}

// decision is what migrate decides for one device of resource in a pod
// with no hints (what a quota or queue names).
func (j *govJudge) decision(resource string) rules.Decision {
	if d, ok := j.cache[resource]; ok {
		return d
	}
	d := rules.Decision{Status: rules.Unmapped, Claim: -1}
	if j.opts.Resolver != nil {
		pod := rules.Pod{Requests: []rules.PodRequest{{Container: "quota", ContainerType: inventory.Container, Resource: resource, Quantity: "1"}}}
		func() {
			defer func() { _ = recover() }()
			res, err := j.opts.Resolver.Resolve(pod, rules.Options{Target: j.opts.Target, AllowLossy: j.opts.AllowLossy,
				Share: j.opts.Share, ConsumableShares: j.opts.ConsumableShares})
			if err == nil && len(res.Decisions) == 1 {
				d = res.Decisions[0]
			}
		}()
	}
	j.cache[resource] = d
	return d
}

// migrates reports whether workloads requesting resource move to claims
// of a class (and which), or why not.
func (j *govJudge) migrates(resource string) (rules.Decision, bool, string) {
	d := j.decision(resource)
	switch {
	case d.Status == rules.Unmapped || d.Status == rules.DRABacked || d.DeviceClass == "":
		return d, false, "no rule maps " + resource + " to a DeviceClass: its workloads stay on the device plugin"
	case d.Status == rules.Lossy && !j.opts.AllowLossy:
		return d, false, "its mapping is lossy and migrate leaves its workloads as they are without --allow-lossy"
	case j.opts.Strategy == ExtendedResource:
		return d, false, "--strategy extended-resource leaves the pods' " + resource + " requests as they are"
	case j.opts.Strategy == Auto && d.ExtendedResource && !j.opts.Target.Less(ExtendedResourceGA):
		return d, false, "--strategy auto serves a plain count of " + resource + " through KEP-5004 and leaves the pods' requests as they are"
	}
	return d, true, ""
}

// keepsCounting reports whether claims of d's class count under
// requests.<resource> at the target: the class declares that
// extendedResourceName and DRAExtendedResource is on (resource_claims.go
// addExtendedResourceQuota).
func (j *govJudge) keepsCounting(resource string, d rules.Decision) bool {
	return d.ClassDeclares && d.ExtendedResourceName == resource && !j.opts.Target.Less(ExtendedResourceGA)
}

// kueueNeeds are the mappings the input's ClusterQueues need: each
// covered device resource whose workloads move to claims, named as the
// ClusterQueue names it, so that the ClusterQueues stay as they are: a
// mapping name is any label key, so nvidia.com/gpu is one (kueue v0.19.2
// pkg/config/validation.go validateDeviceClassMappings: IsLabelKey, names
// unique, a class in one mapping only, at most 16 mappings of at most 8
// classes).
func (j *govJudge) kueueNeeds(fs []inventory.GovFinding) []KueueMapping {
	var out []KueueMapping
	seen := map[string]bool{}
	for _, f := range fs {
		if f.What != inventory.GovClusterQueue || f.Ignore != "" || seen[f.Resource] {
			continue
		}
		seen[f.Resource] = true
		if d, ok, _ := j.migrates(f.Resource); ok {
			out = append(out, KueueMapping{Name: f.Resource, Classes: []string{d.DeviceClass}})
		}
	}
	// The classes of queued workloads join the mapping of their resource;
	// a class goes into one mapping only (Kueue refuses it in two).
	if j.opts.Strategy != ExtendedResource {
		have := map[string]bool{}
		for _, m := range out {
			for _, c := range m.Classes {
				have[c] = true
			}
		}
		queued := slices.Clone(j.opts.Queued) // in a stable order: the prepass is concurrent
		slices.SortFunc(queued, func(a, b KueueMapping) int {
			return strings.Compare(a.Name+"\x00"+strings.Join(a.Classes, ","), b.Name+"\x00"+strings.Join(b.Classes, ","))
		})
		for _, q := range queued {
			for _, c := range q.Classes {
				if have[c] {
					continue
				}
				have[c] = true
				i := slices.IndexFunc(out, func(m KueueMapping) bool { return m.Name == q.Name })
				if i < 0 {
					out = append(out, KueueMapping{Name: q.Name})
					i = len(out) - 1
				}
				out[i].Classes = append(out[i].Classes, c)
			}
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// missing are the mappings of needs a Configuration with the mappings
// have does not hold: a class already mapped under any name counts.
func missing(needs []KueueMapping, have map[string][]string) []KueueMapping {
	mapped := map[string]bool{}
	for _, cs := range have {
		for _, c := range cs {
			mapped[c] = true
		}
	}
	var out []KueueMapping
	for _, n := range needs {
		var cs []string
		for _, c := range n.Classes {
			if !mapped[c] {
				cs = append(cs, c)
			}
		}
		if len(cs) > 0 {
			out = append(out, KueueMapping{Name: n.Name, Classes: cs})
		}
	}
	return out
}

// govVerdict is the judgement of one finding.
type govVerdict struct {
	g      rules.Govern
	class  string
	reason string
	fix    string
	// edit for migrate
	addKey   string
	mappings []KueueMapping
}

// judge decides one governance finding. hasConfig tells whether the input
// holds a Kueue Configuration.
func (j *govJudge) judge(f inventory.GovFinding, hasConfig bool) govVerdict {
	v := govVerdict{g: rules.Govern{What: string(f.What), Key: f.Key}}
	switch f.What {
	case inventory.GovQuota:
		return j.judgeQuota(f, v)
	case inventory.GovLimitRange:
		return j.judgeLimitRange(f, v)
	case inventory.GovClusterQueue:
		return j.judgeClusterQueue(f, v, hasConfig)
	case inventory.GovKueueConfig:
		return j.judgeKueueConfig(f, v)
	case inventory.GovResourceFlavor:
		v.reason = "ResourceFlavor selects or taints device-plugin nodes (" + f.Key + "): Kueue adds these to admitted pods; DRA nodes must carry the same labels and taints, or the flavor must change"
		return v
	case inventory.GovNodePool:
		return j.judgeNodePool(f, v)
	case inventory.GovVolcanoQueue:
		return j.judgeVolcanoQueue(f, v)
	}
	return v
}

// judgeQuota decides a ResourceQuota key: one that counts claims, one that
// limits nothing, or one on a device resource.
func (j *govJudge) judgeQuota(f inventory.GovFinding, v govVerdict) govVerdict {
	q := f.Quantity
	switch {
	case f.Key == "count/resourceclaims.resource.k8s.io" || f.Class != "":
		return j.judgeClaimQuota(f, v)
	case !strings.HasPrefix(f.Key, "requests."):
		v.reason = fmt.Sprintf("quota %s: %s limits nothing, before or after migration: the API server counts extended resources only as requests.%s", f.Key, q, f.Resource)
		v.fix = "write it as requests." + f.Resource
		return v
	}
	d, ok, why := j.migrates(f.Resource)
	v.class = d.DeviceClass
	if !ok {
		v.reason = fmt.Sprintf("quota %s: %s keeps counting: %s", f.Key, q, why)
		return v
	}
	return j.judgeMovedQuota(f, v, d)
}

// judgeClaimQuota decides a quota key that counts claims or their devices
// (DRA), which counts only without scopes and, for the implicit
// extended-resource name, only with DRAExtendedResource on.
func (j *govJudge) judgeClaimQuota(f inventory.GovFinding, v govVerdict) govVerdict {
	q := f.Quantity
	v.class = f.Class
	what := "ResourceClaim objects"
	if f.Class != "" {
		what = "the devices claims request from class " + f.Class
	}
	v.g.Done = true
	v.reason = fmt.Sprintf("quota %s: %s counts %s (DRA)", f.Key, q, what)
	if strings.HasPrefix(f.Key, "requests.deviceclass.resource.kubernetes.io/") && j.opts.Target.Less(ExtendedResourceGA) {
		// The claim evaluator matches the implicit name only with
		// DRAExtendedResource on (resource_claims.go MatchingResources).
		v.g.Done, v.g.Breaks, v.g.Action = false, true, GovWarn
		v.reason = fmt.Sprintf("quota %s: %s counts nothing at target %s: the implicit extended-resource name counts claims only with DRAExtendedResource on (1.36+)", f.Key, q, j.opts.Target)
		v.fix = "count the class's devices as " + ClassDevicesKey(f.Class)
		return v
	}
	if f.Scoped {
		v.g.Done, v.g.Breaks, v.g.Action = false, true, GovWarn
		v.reason += ", but a quota with scopes or a scopeSelector never matches ResourceClaims (the claim evaluator has no scopes), so it counts nothing"
		v.fix = "move the key to a ResourceQuota without scopes"
	}
	return v
}

// judgeMovedQuota decides a quota key on a device resource whose workloads
// move to claims of d's class.
func (j *govJudge) judgeMovedQuota(f inventory.GovFinding, v govVerdict, d rules.Decision) govVerdict {
	q := f.Quantity
	dra := ClassDevicesKey(d.DeviceClass)
	switch {
	case j.keepsCounting(f.Resource, d) && !f.Scoped:
		v.reason = fmt.Sprintf("quota %s: %s keeps counting: class %s declares extendedResourceName %s and DRAExtendedResource is on at target %s, so claims of the class count under it", f.Key, q, d.DeviceClass, f.Resource, j.opts.Target)
		return v
	case f.Scoped:
		v.g.Breaks, v.g.Action = true, GovWarn
		v.reason = fmt.Sprintf("quota %s: %s stops counting the migrated workloads: they request claims of class %s, and a quota with scopes or a scopeSelector never matches ResourceClaims", f.Key, q, d.DeviceClass)
		v.fix = fmt.Sprintf("add a ResourceQuota without scopes in namespace %s with %s: %s", orDefault(f.Namespace), dra, q)
		return v
	case slices.Contains(f.Keys, dra):
		v.g.Done = true
		v.reason = fmt.Sprintf("quota %s: %s is for workloads still on the device plugin; %s counts the claims of class %s", f.Key, q, dra, d.DeviceClass)
		return v
	case d.Count != 1:
		v.g.Breaks, v.g.Action = true, GovWarn
		v.reason = fmt.Sprintf("quota %s: %s stops counting the migrated workloads, and one %s is not one device of class %s, so kubedra cannot write the DRA key", f.Key, q, f.Resource, d.DeviceClass)
		v.fix = fmt.Sprintf("add %s with the number of devices the quota should allow", dra)
		return v
	}
	v.g.Breaks, v.g.Action, v.addKey = true, GovAddKey, dra
	v.reason = fmt.Sprintf("quota %s: %s no longer limits the migrated workloads: they request claims of class %s, which count as %s", f.Key, q, d.DeviceClass, dra)
	v.fix = fmt.Sprintf("run `kubedra migrate`: it adds %s: %s (and keeps %s for pods still on the device plugin)", dra, q, f.Key)
	return v
}

// judgeLimitRange decides a LimitRange entry on a device resource: migrate
// removes it when the workloads move to claims.
func (j *govJudge) judgeLimitRange(f inventory.GovFinding, v govVerdict) govVerdict {
	q := f.Quantity
	d, ok, why := j.migrates(f.Resource)
	v.class = d.DeviceClass
	field := lastSegment(f.Field)
	if !ok {
		v.reason = fmt.Sprintf("LimitRange %s %s: %s stays: %s", field, f.Resource, q, why)
		return v
	}
	v.g.Breaks, v.g.Action = true, GovRemove
	// LimitRanger (k8s.io/kubernetes v1.37.2
	// plugin/pkg/admission/limitranger) sets a Container item's default
	// and defaultRequest on containers that lack them; the API server
	// defaults them from max and min (pkg/apis/core/v1
	// SetDefaults_LimitRangeItem). max, min and ratios check every
	// container (or pod), and fail when the resource is absent.
	v.reason = limitRangeReason(f, field)
	v.fix = "run `kubedra migrate`: it removes " + f.Resource + " from " + field + "; DRA has no per-container limit (limit claims with a quota on " + ClassDevicesKey(d.DeviceClass) + ")"
	return v
}

// limitRangeReason says why a LimitRange entry at field breaks the migrated
// workloads.
func limitRangeReason(f inventory.GovFinding, field string) string {
	q := f.Quantity
	container := f.LimitType == "Container"
	switch {
	case container && (field == "default" || field == "defaultRequest"):
		return fmt.Sprintf("LimitRange %s %s: %s: the LimitRanger admission plugin sets %s on every container that does not, so each migrated container would ask the device plugin for it besides its claim", field, f.Resource, q, f.Resource)
	case container && field == "max":
		return fmt.Sprintf("LimitRange max %s: %s: the API server defaults a Container item's default (and defaultRequest) to its max, so the LimitRanger admission plugin sets %s: %s on every container that does not, each migrated container included", f.Resource, q, f.Resource, q)
	case container && field == "min":
		return fmt.Sprintf("LimitRange min %s: %s: the API server defaults a Container item's defaultRequest to its min, so the LimitRanger admission plugin puts a request for %s on every migrated container", f.Resource, q, f.Resource)
	default:
		return fmt.Sprintf("LimitRange %s %s %s: %s: the LimitRanger admission plugin rejects every %s without %s, which every migrated one is", f.LimitType, field, f.Resource, q, strings.ToLower(f.LimitType), f.Resource)
	}
}

// judgeClusterQueue decides a device resource a ClusterQueue covers: Kueue
// counts the migrated claims under it only through a deviceClassMappings
// entry of its Configuration.
func (j *govJudge) judgeClusterQueue(f inventory.GovFinding, v govVerdict, hasConfig bool) govVerdict {
	q := f.Quantity
	d, ok, why := j.migrates(f.Resource)
	v.class = d.DeviceClass
	if !ok {
		v.reason = fmt.Sprintf("ClusterQueue covers %s (%s) and keeps counting: %s", f.Resource, q, why)
		return v
	}
	if names := j.mapped[d.DeviceClass]; len(names) > 0 && !slices.Contains(names, f.Resource) {
		if slices.Contains(f.Keys, names[0]) {
			v.g.Done = true
			v.reason = fmt.Sprintf("ClusterQueue covers %s (%s) for pods on the device plugin and %s, under which Kueue's deviceClassMappings count the migrated claims of class %s", f.Resource, q, names[0], d.DeviceClass)
			return v
		}
		// Kueue's Configuration maps the class under another name:
		// the claims count there, which the queue must cover too.
		v.g.Breaks, v.g.Action, v.addKey = true, GovAddCovered, names[0]
		v.reason = fmt.Sprintf("ClusterQueue covers %s (%s), but Kueue's deviceClassMappings count the migrated workloads' claims of class %s under %s, which it does not cover", f.Resource, q, d.DeviceClass, names[0])
		v.fix = fmt.Sprintf("run `kubedra migrate`: it adds %s to the resource group with the quotas of %s", names[0], f.Resource)
		return v
	}
	v.reason = fmt.Sprintf("ClusterQueue covers %s (%s): Kueue counts the migrated workloads' claims of class %s under %s only with a deviceClassMappings entry {name: %s, deviceClassNames: [%s]} in its Configuration", f.Resource, q, d.DeviceClass, f.Resource, f.Resource, d.DeviceClass)
	if !hasConfig {
		v.g.Action = GovWarn
		v.fix = "add to Kueue's Configuration (ConfigMap kueue-manager-config, controller_manager_config.yaml) and restart Kueue:\n" + KueueSnippet([]KueueMapping{{Name: f.Resource, Classes: []string{d.DeviceClass}}})
	}
	return v
}

// judgeKueueConfig decides a Kueue Configuration: whether its
// deviceClassMappings hold every class the ClusterQueues need.
func (j *govJudge) judgeKueueConfig(f inventory.GovFinding, v govVerdict) govVerdict {
	miss := missing(j.needs, f.Mappings)
	if len(miss) == 0 {
		v.g.Done = len(j.needs) > 0
		v.reason = "Kueue Configuration: deviceClassMappings hold every class the migrated workloads of its ClusterQueues use"
		if len(j.needs) == 0 {
			v.reason = "Kueue Configuration: no ClusterQueue in the input covers a device resource that moves to claims"
		}
		return v
	}
	var names []string
	for _, m := range miss {
		names = append(names, m.Name+" -> "+strings.Join(m.Classes, ","))
	}
	v.g.Breaks, v.g.Action, v.mappings = true, GovAddMapping, miss
	v.reason = "Kueue Configuration: the migrated workloads' claims are inadmissible (a DeviceClass missing from resources.deviceClassMappings) until it maps " + strings.Join(names, "; ")
	v.fix = "run `kubedra migrate`: it adds the deviceClassMappings; restart Kueue after applying (it reads the Configuration at start)"
	return v
}

// judgeNodePool decides a Karpenter NodePool's limit on a device resource,
// which kubedra cannot rewrite.
func (j *govJudge) judgeNodePool(f inventory.GovFinding, v govVerdict) govVerdict {
	q := f.Quantity
	d, ok, _ := j.migrates(f.Resource)
	v.class = d.DeviceClass
	v.reason = fmt.Sprintf("NodePool limits %s: %s: Karpenter counts it from the capacity of the instance types it launches, not from pods", f.Resource, q)
	if ok {
		v.g.Action = GovWarn
		v.reason += fmt.Sprintf("; migrated pods request claims of class %s, which Karpenter provisions for only with its DRA support on (IGNORE_DRA_REQUESTS=false, default true up to 1.14) and device templates from the provider", d.DeviceClass)
		v.fix = "kubedra cannot rewrite NodePool limits: check your Karpenter version and provider for DRA, and keep the limit on the instance-type resource"
	}
	return v
}

// judgeVolcanoQueue decides a Volcano Queue's resource list entry on a
// device resource.
func (j *govJudge) judgeVolcanoQueue(f inventory.GovFinding, v govVerdict) govVerdict {
	q := f.Quantity
	// Volcano's capacity plugin (v1.15+, with
	// capacity.DynamicResourceAllocationEnable) counts claims' devices
	// under deviceclass/<class> in a Queue's resource lists
	// (volcano pkg/scheduler/plugins/capacity DeviceClassCountPrefix,
	// docs/design/capacity-dra-support.md).
	d, ok, why := j.migrates(f.Resource)
	v.class = d.DeviceClass
	field := lastSegment(f.Field)
	if !ok {
		v.reason = fmt.Sprintf("Volcano Queue %s %s: %s keeps counting: %s", field, f.Resource, q, why)
		return v
	}
	key := VolcanoClassKey(d.DeviceClass)
	if slices.Contains(f.Keys, key) {
		v.g.Done = true
		v.reason = fmt.Sprintf("Volcano Queue %s %s: %s is for pods on the device plugin; %s counts the claims of class %s (capacity plugin)", field, f.Resource, q, key, d.DeviceClass)
		return v
	}
	if d.Count != 1 {
		v.g.Breaks, v.g.Action = true, GovWarn
		v.reason = fmt.Sprintf("Volcano Queue %s %s: %s stops counting the migrated pods, and one %s is not one device of class %s", field, f.Resource, q, f.Resource, d.DeviceClass)
		v.fix = "add " + key + " with the number of devices the queue should allow"
		return v
	}
	v.g.Breaks, v.g.Action, v.addKey = true, GovAddKey, key
	v.reason = fmt.Sprintf("Volcano Queue %s %s: %s counts the pods' resource requests; the migrated pods request claims of class %s, which Volcano counts only as %s", field, f.Resource, q, d.DeviceClass, key)
	v.fix = fmt.Sprintf("run `kubedra migrate`: it adds %s: %s; Volcano counts it with the capacity plugin and capacity.DynamicResourceAllocationEnable (v1.15+)", key, q)
	return v
}

// orDefault names a quota's namespace in a fix, "of the quota" when unset.
func orDefault(ns string) string {
	if ns == "" {
		return "of the quota"
	}
	return ns
}

// lastSegment is the last dot-separated part of a field path.
func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}
