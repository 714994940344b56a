package plan

import (
	"fmt"
	"slices"
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

// KueueSnippet is the Kueue Configuration text that adds mappings.
func KueueSnippet(ms []KueueMapping) string {
	var b strings.Builder
	b.WriteString("resources:\n  deviceClassMappings:\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "  - name: %s\n    deviceClassNames: [%s]\n", m.Name, strings.Join(m.Classes, ", "))
	}
	return b.String()
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
