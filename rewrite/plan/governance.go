package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// Rule ids of migrate's diagnostics about objects that count or govern
// devices (docs/diagnostics.md, docs/governance.md).
const (
	RuleGovQuota       = "governance/quota"
	RuleGovScopedQuota = "governance/scoped-quota"
	RuleGovLimitRange  = "governance/limit-range"
	RuleGovKueue       = "governance/kueue"
	RuleGovKueueConfig = "governance/kueue-no-configuration"
	RuleGovFlavor      = "governance/resource-flavor"
	RuleGovKarpenter   = "governance/karpenter"
	RuleGovVolcano     = "governance/volcano"
)

// Governance actions (rules.Govern.Action).
const (
	GovAddKey     = "add-key"
	GovRemove     = "remove"
	GovAddMapping = "add-mapping"
	GovAddCovered = "add-covered"
	GovWarn       = "warn"
)

// GovOptions steer the judgement of governance findings: the same
// resolver and options migrate uses for the workloads, so that a quota
// follows the class the workloads move to.
type GovOptions struct {
	Resolver         Resolver
	Strategy         Strategy
	Target           rules.Version
	AllowLossy       bool
	Share            bool
	ConsumableShares bool
	Ignore           *Ignores
	// Queued are the (resource, class) pairs of the Kueue-managed workloads
	// of the input (KueueQueued): a Kueue Configuration must map their
	// classes too, whatever the ClusterQueues cover.
	Queued []KueueMapping
}

// KueueQueued are the (resource, class) pairs of the items of workloads
// queued by Kueue (label or annotation kueue.x-k8s.io/queue-name) that
// migrate moves to claims: a class a rule picked from node labels (a MIG
// profile) is not the one a ClusterQueue's resource alone resolves to.
func KueueQueued(items []Item, allowLossy bool) []KueueMapping {
	var out []KueueMapping
	seen := map[string]bool{}
	for _, it := range items {
		wl := it.Finding.Workload
		if wl == nil || it.Ignored != "" || it.Mapping.DeviceClass == "" || it.Mapping.Zero {
			continue
		}
		if it.Status != rules.Mappable && !(it.Status == rules.Lossy && allowLossy) {
			continue
		}
		if wl.Labels[KueueQueueLabel] == "" && wl.Annotations[KueueQueueLabel] == "" {
			continue
		}
		k := it.Resource + "\x00" + it.Mapping.DeviceClass
		if !seen[k] {
			seen[k] = true
			out = append(out, KueueMapping{Name: it.Resource, Classes: []string{it.Mapping.DeviceClass}})
		}
	}
	return out
}

// VolcanoClassKey is the Volcano Queue resource that counts the devices
// of class (volcano v1.15+ capacity plugin, DeviceClassCountPrefix).
func VolcanoClassKey(class string) string { return "deviceclass/" + class }

// ClassDevicesKey is the ResourceQuota key that counts the devices claims
// request from class (k8s.io/kubernetes v1.37.2
// pkg/quota/v1/evaluator/core/resource_claims.go V1ResourceByDeviceClass).
func ClassDevicesKey(class string) string { return class + ".deviceclass.resource.k8s.io/devices" }

// KueueMapping is one entry of a Kueue Configuration's
// resources.deviceClassMappings (kueue apis/config/v1beta2
// DeviceClassMapping: name, deviceClassNames).
type KueueMapping struct {
	Name    string   `yaml:"name" json:"name"`
	Classes []string `yaml:"deviceClassNames" json:"deviceClassNames"`
}

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

// KueueSnippet is the Kueue Configuration text that adds mappings.
func KueueSnippet(ms []KueueMapping) string {
	var b strings.Builder
	b.WriteString("resources:\n  deviceClassMappings:\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "  - name: %s\n    deviceClassNames: [%s]\n", m.Name, strings.Join(m.Classes, ", "))
	}
	return b.String()
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

func orDefault(ns string) string {
	if ns == "" {
		return "of the quota"
	}
	return ns
}

func lastSegment(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// GovernanceItems judges governance findings: one Item per finding with
// status governance, in the order of SortItems.
func GovernanceItems(fs []inventory.GovFinding, opts GovOptions) []Item {
	j := newGovJudge(fs, opts)
	hasConfig := slices.ContainsFunc(fs, func(f inventory.GovFinding) bool { return f.What == inventory.GovKueueConfig })
	var items []Item
	for _, f := range fs {
		v := j.judge(f, hasConfig)
		res := f.Resource
		if res == "" {
			res = f.Key
		}
		fd := inventory.Finding{Origin: f.Origin, Line: f.Line, Column: f.Column, APIVersion: f.APIVersion, Kind: f.Kind,
			Namespace: f.Namespace, Name: f.Name, Resource: res, Limit: f.Quantity, PodTemplatePath: f.Field, ContainerIndex: -1, Ignore: f.Ignore}
		g := v.g
		d := rules.Decision{Status: rules.Governance, DeviceClass: v.class, Claim: -1, Reason: v.reason, Fix: v.fix, Govern: &g}
		items = append(items, Item{File: f.Origin.Path, Index: f.Origin.Index, Finding: fd, Mapping: d, Status: rules.Governance,
			Ignored: opts.Ignore.Reason(fd), Group: Key(fd)})
	}
	SortItems(items)
	return items
}

// GovEdit is migrate's edit of one document that governs devices
// (rewrite applies it to the document's nodes, so comments stay).
type GovEdit struct {
	// Index locates the document (Origin.Index); Kind and Name check it.
	Index     int    `yaml:"index" json:"index"`
	Line      int    `yaml:"line" json:"line"`
	Kind      string `yaml:"kind" json:"kind"`
	Name      string `yaml:"name" json:"name"`
	Namespace string `yaml:"namespace,omitempty" json:"namespace,omitempty"`
	// AddKeys are keys a ResourceQuota's spec.hard (or a Volcano Queue's
	// resource list) gains, each right after the key it stands for.
	AddKeys []QuotaKey `yaml:"addKeys,omitempty" json:"addKeys,omitempty"`
	// Remove are keys to remove from the maps at their fields (a
	// LimitRange's default, max, ...); a map left empty goes too.
	Remove []FieldKey `yaml:"remove,omitempty" json:"remove,omitempty"`
	// Mappings are deviceClassMappings a Kueue Configuration gains, in the
	// object or, with ConfigKey, in the ConfigMap's embedded configuration.
	Mappings  []KueueMapping `yaml:"deviceClassMappings,omitempty" json:"deviceClassMappings,omitempty"`
	ConfigKey string         `yaml:"configKey,omitempty" json:"configKey,omitempty"`
	// Covered are resources a ClusterQueue's resource group gains.
	Covered []CoveredEdit `yaml:"covered,omitempty" json:"covered,omitempty"`
}

// CoveredEdit adds Name to the coveredResources of the resource group at
// Group, and to each of its flavors with the quotas of From.
type CoveredEdit struct {
	Group string `yaml:"group" json:"group"`
	From  string `yaml:"from" json:"from"`
	Name  string `yaml:"name" json:"name"`
}

// QuotaKey is one key a resource list gains (a quota's spec.hard, a
// Volcano Queue's capability): Key: Value in the map at Map, after the key
// After.
type QuotaKey struct {
	Map   string `yaml:"map" json:"map"`
	After string `yaml:"after" json:"after"`
	Key   string `yaml:"key" json:"key"`
	Value string `yaml:"value" json:"value"`
}

// FieldKey is one key of the map at Field.
type FieldKey struct {
	Field string `yaml:"field" json:"field"`
	Key   string `yaml:"key" json:"key"`
}

// Governance plans migrate's edits of a batch's governance findings: the
// edits, document by document, and what they did or could not do. all
// are the governance findings of the whole input (the ClusterQueues say
// which mappings a Kueue Configuration needs).
func Governance(fs, all []inventory.GovFinding, opts GovOptions) ([]*GovEdit, inventory.Diagnostics) {
	j := newGovJudge(all, opts)
	hasConfig := slices.ContainsFunc(all, func(f inventory.GovFinding) bool { return f.What == inventory.GovKueueConfig })
	var edits []*GovEdit
	var diags inventory.Diagnostics
	byIndex := map[int]*GovEdit{}
	get := func(f inventory.GovFinding) *GovEdit {
		e := byIndex[f.Origin.Index]
		if e == nil {
			e = &GovEdit{Index: f.Origin.Index, Line: f.Line, Kind: f.Kind, Name: f.Name, Namespace: f.Namespace}
			byIndex[f.Origin.Index] = e
			edits = append(edits, e)
		}
		return e
	}
	diag := func(f inventory.GovFinding, sev inventory.Severity, rule, msg, fix string) {
		diags = append(diags, inventory.Diagnostic{Severity: sev, Rule: rule, File: f.Origin.Path, Line: f.Line, Object: f.Object(),
			Resource: f.Resource, Field: f.Field, Message: msg, Fix: fix})
	}
	cqWarned := false
	for _, f := range fs {
		v := j.judge(f, hasConfig)
		if v.g.Action == "" {
			continue
		}
		if f.Ignore != "" || opts.Ignore.Reason(inventory.Finding{Origin: f.Origin, Kind: f.Kind, Namespace: f.Namespace, Name: f.Name, Resource: f.Resource}) != "" {
			diag(f, inventory.Info, RuleIgnored, "left unchanged: ignored", "")
			continue
		}
		switch v.g.Action {
		case GovAddKey:
			e := get(f)
			e.AddKeys = append(e.AddKeys, QuotaKey{Map: f.Field, After: f.Key, Key: v.addKey, Value: f.Quantity})
			if f.What == inventory.GovVolcanoQueue {
				diag(f, inventory.Warning, RuleGovVolcano, fmt.Sprintf("added %s: %s beside %s in %s: Volcano counts the migrated pods' claims of class %s there", v.addKey, f.Quantity, f.Key, f.Field, v.class),
					"enable the capacity plugin with capacity.DynamicResourceAllocationEnable: true (Volcano v1.15+); the proportion plugin does not count DRA")
				continue
			}
			diag(f, inventory.Info, RuleGovQuota, fmt.Sprintf("added %s: %s beside %s: the migrated workloads' claims of class %s count there", v.addKey, f.Quantity, f.Key, v.class),
				"remove "+f.Key+" once no pod in the namespace uses the device plugin; until then a namespace may use up to the quota on each path")
		case GovRemove:
			e := get(f)
			e.Remove = append(e.Remove, FieldKey{Field: f.Field, Key: f.Key})
			diag(f, inventory.Warning, RuleGovLimitRange, fmt.Sprintf("removed %s from %s: %s", f.Key, f.Field, v.reason),
				"DRA has no per-container device limit: bound claims with a ResourceQuota on "+ClassDevicesKey(v.class))
		case GovAddMapping:
			e := get(f)
			e.Mappings, e.ConfigKey = v.mappings, f.ConfigKey
			var names []string
			for _, m := range v.mappings {
				names = append(names, m.Name+" -> "+strings.Join(m.Classes, ","))
			}
			diag(f, inventory.Warning, RuleGovKueue, "added resources.deviceClassMappings "+strings.Join(names, "; ")+": the ClusterQueues' quotas count the migrated claims under the same names",
				"restart the Kueue controller after applying: it reads its Configuration at start")
		case GovAddCovered:
			e := get(f)
			e.Covered = append(e.Covered, CoveredEdit{Group: f.Field, From: f.Resource, Name: v.addKey})
			diag(f, inventory.Warning, RuleGovKueue, fmt.Sprintf("added %s to %s with the quotas of %s: Kueue counts the migrated claims of class %s under it", v.addKey, f.Field, f.Resource, v.class),
				"until no workload of the queue uses the device plugin, the queue admits up to the quota on each name")
		case GovWarn:
			rule := RuleGovQuota
			switch f.What {
			case inventory.GovQuota:
				if f.Scoped {
					rule = RuleGovScopedQuota
				}
			case inventory.GovClusterQueue:
				rule = RuleGovKueueConfig
				if cqWarned {
					continue
				}
				cqWarned = true
				v.fix = "add to Kueue's Configuration (ConfigMap kueue-manager-config, controller_manager_config.yaml) and restart Kueue:\n" + KueueSnippet(j.needs)
				v.reason = "the input holds ClusterQueues but no Kueue Configuration: Kueue admits the migrated workloads' claims only with deviceClassMappings for their classes"
			case inventory.GovNodePool:
				rule = RuleGovKarpenter
			case inventory.GovVolcanoQueue:
				rule = RuleGovVolcano
			}
			diag(f, inventory.Warning, rule, "left unchanged: "+v.reason, v.fix)
		}
	}
	return edits, diags
}

// FieldPath is the item's field path: for a governance item the key in
// the map that holds it (spec.hard.requests\.nvidia\.com/gpu), for the
// others the request's (inventory.Finding.FieldPath).
func (it Item) FieldPath() string {
	if g := it.Mapping.Govern; g != nil {
		if g.Key == "" || it.PodTemplatePath == "" || g.What == string(inventory.GovResourceFlavor) || g.What == string(inventory.GovKueueConfig) {
			return it.PodTemplatePath
		}
		if strings.HasPrefix(it.PodTemplatePath, "spec.resourceGroups[") {
			return it.PodTemplatePath + ".coveredResources"
		}
		return it.PodTemplatePath + "." + strings.ReplaceAll(g.Key, ".", `\.`)
	}
	return it.Finding.FieldPath()
}
