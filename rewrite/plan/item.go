package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rules"
)

// Resolver decides how the device requests of one pod template map to DRA.
// *rules.Set implements it.
type Resolver interface {
	Resolve(pod rules.Pod, opts rules.Options) (rules.Resolution, error)
}

// RuleInternal identifies a bug in kubedra met on one pod template: its
// findings are reported as this error instead of items, so that a gate
// never passes or fails on a decision that was not made.
const RuleInternal = "internal/error"

// resolve calls r, turning a panic into a Diagnostic: one pod template
// that trips a bug must not stop the others.
func resolve(r Resolver, pod rules.Pod, opts rules.Options, f inventory.Finding) (res rules.Resolution, bug *inventory.Diagnostic, err error) {
	defer func() {
		if v := recover(); v != nil {
			bug = &inventory.Diagnostic{Severity: inventory.Error, Rule: RuleInternal, File: f.Origin.Path, Line: f.Line, Object: f.Object(),
				Message: fmt.Sprintf("internal error (a bug in kubedra: please report it with this input): %v", v)}
		}
	}()
	res, err = r.Resolve(pod, opts)
	return res, nil, err
}

// Item is one finding with the decision made for it: a row of scan's report
// and the unit check gates on.
type Item struct {
	File string `json:"file"`
	// Index is the document's position in its file.
	Index int `json:"index"`
	inventory.Finding
	// Mapping is what the rules decided (without the status, which is
	// lifted to Status so that reports can filter on it).
	Mapping rules.Decision `json:"mapping"`
	Status  rules.Status   `json:"status"`
	// Ignored is the reason given in a kubedra.io/ignore annotation, if any.
	Ignored string `json:"ignored,omitempty"`
	// Group identifies the pod template the finding belongs to (file, index
	// and path): items with the same Group were resolved together.
	Group string `json:"-"`
}

// Key identifies the pod template a finding belongs to.
func Key(f inventory.Finding) string {
	return f.Origin.Path + "\x00" + strconv.Itoa(f.Origin.Index) + "\x00" + f.PodTemplatePath
}

// ItemOptions steer Items.
type ItemOptions struct {
	Rules rules.Options
	// Ignore opts findings out (nil: only kubedra.io/ignore annotations).
	Ignore *Ignores
}

// Items groups findings by pod template, resolves each group, and returns
// one Item per finding in a deterministic order (file, document, line,
// column). A resolver error for one group marks its findings unmapped with
// the error as the reason; a resolver panic (a bug) drops the group's items
// and returns an error Diagnostic for it instead. Other groups are
// unaffected.
func Items(findings []inventory.Finding, r Resolver, opts ItemOptions) ([]Item, inventory.Diagnostics) {
	type group struct {
		key  string
		idxs []int
	}
	var groups []*group
	byKey := map[string]*group{}
	for i, f := range findings {
		k := Key(f)
		g := byKey[k]
		if g == nil {
			g = &group{key: k}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.idxs = append(g.idxs, i)
	}
	items := make([]Item, 0, len(findings))
	var bugs inventory.Diagnostics
	for _, g := range groups {
		pod := rules.Pod{Hints: findings[g.idxs[0]].Hints}
		for _, i := range g.idxs {
			pod.Requests = append(pod.Requests, podRequest(findings[i]))
		}
		res, bug, err := resolve(r, pod, opts.Rules, findings[g.idxs[0]])
		if bug != nil {
			bugs = append(bugs, *bug)
			continue
		}
		for n, i := range g.idxs {
			f := findings[i]
			d := rules.Decision{Status: rules.Unmapped, Claim: -1}
			switch {
			case err != nil:
				d.Reason = err.Error()
			case n < len(res.Decisions):
				d = res.Decisions[n]
			}
			frameworkItem(f, &d)
			file := f.Origin.Path
			if f.Chart != nil && f.Chart.Template != "" {
				file = f.Chart.Template // the template line, not the render's
			}
			st := d.Status
			switch {
			case d.Zero:
				st = rules.NoDevice // the mapping stays: migrate removes the entry
			case f.Values != "" && f.Kind != "":
				st = rules.CustomResource // the mapping stays, for the narrow gates
			case f.Values != "":
				st = rules.HelmValues
			}
			items = append(items, Item{File: file, Index: f.Origin.Index, Finding: f, Mapping: d, Status: st,
				Ignored: opts.Ignore.Reason(f), Group: g.key})
		}
	}
	SortItems(items)
	return items, bugs
}

// podRequest is what the rules see of a finding.
func podRequest(f inventory.Finding) rules.PodRequest {
	return rules.PodRequest{Container: f.Container, ContainerIndex: f.ContainerIndex, ContainerType: f.ContainerType,
		Resource: f.Resource, Quantity: f.Quantity()}
}

// SortItems orders items by file, document, line and column.
func SortItems(items []Item) {
	slices.SortStableFunc(items, func(a, b Item) int {
		return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Index, b.Index),
			cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), cmp.Compare(a.Resource, b.Resource))
	})
}

// Summary counts items by status.
type Summary struct {
	Files     int `json:"files"`
	Documents int `json:"documents"`
	Findings  int `json:"findings"`
	Mappable  int `json:"mappable"`
	Lossy     int `json:"lossy"`
	Unmapped  int `json:"unmapped"`
	DRABacked int `json:"draBacked"`
	// DRAUpgrade counts objects written for an earlier DRA (dra-upgrade).
	DRAUpgrade int `json:"draUpgrade"`
	// HelmValues counts requests set in Helm values files outside a chart
	// that renders (helm-values): migrate leaves them.
	HelmValues int `json:"helmValues"`
	// CustomResource counts requests set in custom resources outside any
	// pod template (custom-resource): migrate leaves them.
	CustomResource int `json:"customResource"`
	// NoDevice counts requests of zero (no-device): they ask for no
	// device, migrate removes them and no gate fails on them.
	NoDevice int `json:"noDevice"`
	// Governance counts objects that count or govern devices (quotas,
	// LimitRanges, queues); GovernanceBreaks those of them that stop
	// doing so after migration unless migrate or the user acts.
	Governance       int `json:"governance"`
	GovernanceBreaks int `json:"governanceBreaks"`
	Ignored          int `json:"ignored"`
	Skipped          int `json:"skipped"`
}

// Count fills the per-status counters of s from items.
func (s *Summary) Count(items []Item) {
	for _, it := range items {
		s.Findings++
		if it.Ignored != "" {
			s.Ignored++
			continue
		}
		switch it.Status {
		case rules.Mappable:
			s.Mappable++
		case rules.Lossy:
			s.Lossy++
		case rules.Unmapped:
			s.Unmapped++
		case rules.DRABacked:
			s.DRABacked++
		case rules.DRAUpgrade:
			s.DRAUpgrade++
		case rules.HelmValues:
			s.HelmValues++
		case rules.CustomResource:
			s.CustomResource++
		case rules.NoDevice:
			s.NoDevice++
		case rules.Governance:
			s.Governance++
			if g := it.Mapping.Govern; g != nil && g.Breaks {
				s.GovernanceBreaks++
			}
		}
	}
}

// Report is scan's result: the envelope every machine format encodes.
// It is valid and complete when nothing was found (empty lists, not null).
type Report struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Findings   []Item           `json:"findings"`
	Skipped    []inventory.Skip `json:"skipped"`
	// Charts are the Helm charts among the inputs, each with the
	// strategy chosen for it.
	Charts  []ChartChoice `json:"charts"`
	Summary Summary       `json:"summary"`
}

// NewReport builds a report from the items and what the sources could not
// read (each input diagnostic is listed under skipped); nil slices become
// empty ones.
func NewReport(items []Item, inputs inventory.Diagnostics, files, documents int) Report {
	if items == nil {
		items = []Item{}
	}
	skipped := make([]inventory.Skip, 0, len(inputs))
	for _, d := range inputs {
		skipped = append(skipped, inventory.Skip{File: d.File, Line: d.Line, Reason: d.Message, Severity: d.Severity})
	}
	r := Report{APIVersion: "kubedra.dev/v1alpha1", Kind: "ScanReport", Findings: items, Skipped: skipped, Charts: []ChartChoice{}}
	r.Summary.Files, r.Summary.Documents, r.Summary.Skipped = files, documents, len(skipped)
	r.Summary.Count(items)
	return r
}

// Vendor returns the domain of an extended resource name ("nvidia.com" for
// "nvidia.com/gpu"), or the whole name when it has no domain.
func Vendor(resource string) string {
	if d, _, ok := strings.Cut(resource, "/"); ok {
		return d
	}
	return resource
}

// RuleID is the stable identifier of the kind of a finding: its status and
// vendor, e.g. "unmapped/nvidia.com". SARIF uses it as ruleId, so code
// scanning groups alerts by it; "/" makes it hierarchical (SARIF 3.27.5).
func (it Item) RuleID() string {
	if it.Mapping.Upgrade != nil {
		return string(it.Status) + "/" + it.Mapping.Upgrade.Rule
	}
	if g := it.Mapping.Govern; g != nil {
		return string(it.Status) + "/" + g.What
	}
	return string(it.Status) + "/" + Vendor(it.Resource)
}

// IgnoreReasonRuleID identifies the finding that a kubedra.io/ignore
// annotation has no reason.
const IgnoreReasonRuleID = "ignore-without-reason"

// IgnoreReasonMessage is the text of that finding.
const IgnoreReasonMessage = "the kubedra.io/ignore annotation needs a reason, e.g. kubedra.io/ignore: \"migrated by the platform team in Q3\"; the request is checked as if it were not there"

// Workload names the item's object as every report does (ObjectRef's
// form): "Deployment/ml/train".
func (it Item) Workload() string { return it.Object().String() }

// Message says in one sentence what a finding is and what it means.
func (it Item) Message() string {
	if it.Mapping.Upgrade != nil || it.Mapping.Govern != nil {
		return it.objectMessage()
	}
	if it.Values != "" {
		return valuesMessage(it.Finding)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: container %s requests %s", it.Workload(), it.Container, it.Resource)
	if q := it.Quantity(); q != "" {
		fmt.Fprintf(&b, ": %s", q)
	}
	m := it.Mapping
	if m.Zero {
		b.WriteString(", which asks for no device; migrate removes the entry")
		return b.String()
	}
	switch it.Status {
	case rules.Mappable:
		b.WriteString(" (device plugin); it maps to DRA")
		if m.DeviceClass != "" {
			fmt.Fprintf(&b, " DeviceClass %s", m.DeviceClass)
		}
		if m.Rule != nil {
			fmt.Fprintf(&b, " by rule %s", m.Rule.ID)
		}
	case rules.Lossy:
		b.WriteString(" (device plugin); the DRA mapping is lossy")
		if m.Loss != "" {
			fmt.Fprintf(&b, ": %s", m.Loss)
		}
	case rules.Unmapped:
		b.WriteString(" (device plugin) and no rule maps it")
		if m.Reason != "" {
			fmt.Fprintf(&b, ": %s", m.Reason)
		}
	case rules.DRABacked:
		b.WriteString(", " + led(servedByDRA, m.Reason))
	default:
		fmt.Fprintf(&b, " (status %s)", it.Status)
	}
	if m.Fix != "" && it.Status != rules.DRABacked {
		fmt.Fprintf(&b, ". Fix: %s", m.Fix)
	}
	return b.String()
}
