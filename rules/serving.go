package rules

import (
	"fmt"
	"strings"
)

// ResourceGroup is the DRA API group.
const ResourceGroup = "resource.k8s.io"

// Serving is how a kube-apiserver of one release serves one
// resource.k8s.io version of one kind (dra.md section 1.1).
type Serving string

// How a version is served.
const (
	// ServedByDefault: the version is on without flags (v1 from 1.34).
	ServedByDefault Serving = "served"
	// ServedWhenEnabled: the release has the version, but only
	// --runtime-config=resource.k8s.io/<version>=true turns it on (alpha
	// and beta versions).
	ServedWhenEnabled Serving = "runtime-config"
	// NotServed: the release does not have the version (not yet, or no
	// more).
	NotServed Serving = "not-served"
)

// Lifecycle is when a resource.k8s.io version of a kind appeared, was
// deprecated and stops being served; a zero Version is "not (yet)".
type Lifecycle struct {
	Introduced, Deprecated, Removed Version
	// Planned is true when Removed is a plan, not a release that shipped
	// (v1beta2's removal in 1.39).
	Planned bool
	// Default is true for a version served without --runtime-config.
	Default bool
}

// Serves says how release v serves this version.
func (l Lifecycle) Serves(v Version) Serving {
	switch {
	case v.Less(l.Introduced), l.Removed != (Version{}) && v.AtLeast(l.Removed):
		return NotServed
	case l.Default:
		return ServedByDefault
	}
	return ServedWhenEnabled
}

// The classic DRA kinds (dra.md section 1.9): they exist only in
// v1alpha1/v1alpha2, with no conversion to the structured API.
var classicKinds = map[string]bool{
	"ResourceClass": true, "PodScheduling": true, "PodSchedulingContext": true,
	"ResourceClaimParameters": true, "ResourceClassParameters": true,
}

// IsClassicKind reports whether kind is a classic-DRA resource.k8s.io kind.
func IsClassicKind(kind string) bool { return classicKinds[kind] }

// ResourceLifecycle is the lifecycle of resource.k8s.io/<version> for kind
// (dra.md section 1.1), and false for a version or kind the group never
// had.
func ResourceLifecycle(version, kind string) (Lifecycle, bool) {
	v := func(minor int) Version { return Version{1, minor} }
	switch version {
	case "v1alpha1":
		return Lifecycle{Introduced: v(26), Removed: v(27)}, true
	case "v1alpha2":
		return Lifecycle{Introduced: v(27), Removed: v(31)}, true
	case "v1alpha3":
		switch kind {
		case "PodSchedulingContext":
			return Lifecycle{Introduced: v(31), Removed: v(32)}, true
		case "DeviceTaintRule":
			return Lifecycle{Introduced: v(33), Deprecated: v(36)}, true
		case "ResourcePoolStatusRequest":
			return Lifecycle{Introduced: v(36)}, true
		}
		return Lifecycle{Introduced: v(31), Removed: v(34)}, true
	case "v1beta1":
		return Lifecycle{Introduced: v(32), Deprecated: v(35), Removed: v(38)}, true
	case "v1beta2":
		if kind == "DeviceTaintRule" {
			return Lifecycle{Introduced: v(36), Removed: v(42), Planned: true}, true
		}
		return Lifecycle{Introduced: v(33), Deprecated: v(36), Removed: v(39), Planned: true}, true
	case "v1":
		if kind == "DeviceTaintRule" {
			return Lifecycle{Introduced: v(37), Default: true}, true
		}
		return Lifecycle{Introduced: v(34), Default: true}, true
	}
	return Lifecycle{}, false
}

// resourceVersions orders the group's versions, oldest first.
var resourceVersions = []string{"v1alpha1", "v1alpha2", "v1alpha3", "v1beta1", "v1beta2", "v1"}

// Upgrade is what check reports about a resource.k8s.io object, a pod's
// claim reference or a feature-gate setting written for an earlier DRA, and
// what migrate makes of it. It is pluto's deprecated/removed record for DRA.
type Upgrade struct {
	// Rule identifies the kind of finding (docs/diagnostics.md):
	// api-version, classic, parameters, pod-claim-source, feature-gate.
	Rule string `json:"rule"`
	// From is what the manifest says: an apiVersion, a field, a gate.
	From string `json:"from"`
	// To is what migrate writes instead ("" when nothing replaces it).
	To string `json:"to,omitempty"`
	// Serving is how the target serves From.
	Serving Serving `json:"serving,omitempty"`
	// DeprecatedIn and RemovedIn are the releases that deprecated From
	// and stop serving it ("" when none).
	DeprecatedIn string `json:"deprecatedIn,omitempty"`
	RemovedIn    string `json:"removedIn,omitempty"`
	// Planned marks a RemovedIn that has not shipped yet.
	Planned bool `json:"removalPlanned,omitempty"`
}

// Upgrade rule ids (Upgrade.Rule).
const (
	UpgradeAPIVersion = "api-version"
	UpgradeClassic    = "classic"
	UpgradeParameters = "parameters"
	UpgradePodSource  = "pod-claim-source"
	UpgradeGate       = "feature-gate"
)

// UpgradeTarget is the resource.k8s.io version migrate writes for kind on
// target: ResourceAPIVersion, except for kinds the group serves in fewer
// versions.
func UpgradeTarget(kind string, target Version) string {
	if kind == "DeviceTaintRule" {
		switch {
		case target.AtLeast(Version{1, 37}):
			return ResourceGroup + "/v1"
		case target.AtLeast(Version{1, 36}):
			return ResourceGroup + "/v1beta2"
		}
		return ResourceGroup + "/v1alpha3"
	}
	return ResourceAPIVersion(target)
}

// ResourceUpgrade judges a resource.k8s.io object of apiVersion and kind
// against target: nil when it is what target wants, else the finding. A
// classic kind or layout is always one.
func ResourceUpgrade(apiVersion, kind string, classic bool, target Version) *Upgrade {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok || group != ResourceGroup {
		return nil
	}
	if kind == "ResourcePoolStatusRequest" {
		return nil // only ever v1alpha3
	}
	to := UpgradeTarget(kind, target)
	_, toVersion, _ := strings.Cut(to, "/")
	u := &Upgrade{Rule: UpgradeAPIVersion, From: apiVersion, To: to, Serving: NotServed}
	if classic || IsClassicKind(kind) {
		u.Rule = UpgradeClassic
	}
	lc, known := ResourceLifecycle(version, kind)
	if known {
		u.Serving = lc.Serves(target)
		if lc.Deprecated != (Version{}) {
			u.DeprecatedIn = lc.Deprecated.String()
		}
		if lc.Removed != (Version{}) {
			u.RemovedIn = lc.Removed.String()
			u.Planned = lc.Planned
		}
	}
	if u.Rule == UpgradeAPIVersion && known && !newer(toVersion, version) {
		return nil // already the version migrate writes, or newer
	}
	if kind == "PodSchedulingContext" || kind == "PodScheduling" {
		u.To = "" // never user-written; nothing replaces it
	}
	return u
}

// newer reports whether version a is newer than b.
func newer(a, b string) bool {
	ia, ib := -1, -1
	for i, v := range resourceVersions {
		if v == a {
			ia = i
		}
		if v == b {
			ib = i
		}
	}
	return ia > ib
}

// GateUpgrade judges a feature-gate setting (gate=value) for a Kubernetes
// component against target: nil when the component accepts it, else why it
// breaks or goes (dra.md section 4).
func GateUpgrade(gate, value string, target Version) *Upgrade {
	u := &Upgrade{Rule: UpgradeGate, From: gate + "=" + value}
	switch gate {
	case "DynamicResourceAllocation":
		u.RemovedIn = "1.38"
		if target.AtLeast(Version{1, 38}) {
			u.Serving = NotServed
			return u
		}
		if target.AtLeast(Version{1, 35}) {
			// Locked to true: =false is refused; =true is accepted but
			// does nothing, and the component refuses to start with it
			// from 1.38, as a version served until its removal is
			// reported (dra.md section 4).
			u.Serving = ServedByDefault
			return u
		}
	case "DRAControlPlaneController":
		u.RemovedIn = "1.32"
		u.Serving = NotServed
		return u
	}
	return nil
}

// Describe says in one sentence what an Upgrade means on target.
func (u *Upgrade) Describe(target Version) string {
	var b strings.Builder
	switch u.Rule {
	case UpgradeGate:
		gate, value, _ := strings.Cut(u.From, "=")
		if u.Serving == NotServed {
			fmt.Fprintf(&b, "the %s feature gate is removed in %s: a %s component refuses to start with %s set (\"unrecognized feature gate\")", gate, u.RemovedIn, target, u.From)
		} else if strings.EqualFold(value, "true") {
			fmt.Fprintf(&b, "the %s feature gate is locked to true from 1.35: %s=%s does nothing, and it is removed in %s, where a component started with it refuses to start; remove the setting", gate, gate, value, u.RemovedIn)
		} else {
			fmt.Fprintf(&b, "the %s feature gate is locked to true from 1.35: %s=%s is refused (\"cannot set feature gate\"); it is removed in %s", gate, gate, value, u.RemovedIn)
		}
		return b.String()
	case UpgradePodSource:
		return fmt.Sprintf("%s is the claim reference of Kubernetes 1.30 and older: from 1.31 the API server does not know `source` and rejects the entry", u.From)
	}
	fmt.Fprintf(&b, "%s", u.From)
	if u.Rule == UpgradeClassic {
		b.WriteString(" is classic DRA (1.26-1.30; no conversion to the structured API exists)")
	}
	if u.DeprecatedIn != "" {
		fmt.Fprintf(&b, ", deprecated in %s", u.DeprecatedIn)
	}
	if u.RemovedIn != "" {
		if u.Planned {
			fmt.Fprintf(&b, ", removal planned for %s", u.RemovedIn)
		} else {
			fmt.Fprintf(&b, ", not served from %s", u.RemovedIn)
		}
	}
	switch u.Serving {
	case NotServed:
		fmt.Fprintf(&b, "; Kubernetes %s does not serve it", target)
	case ServedWhenEnabled:
		fmt.Fprintf(&b, "; Kubernetes %s serves it only with --runtime-config", target)
	}
	return b.String()
}
