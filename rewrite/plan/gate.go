package plan

import (
	"fmt"

	"github.com/kubedra/kubedra/rules"
)

// Gate is what fails `kubedra check`.
type Gate string

// Gates (--fail-on).
const (
	// FailOnAny fails on every device-plugin request that is not ignored
	// and asks for a device (no gate fails on a request of zero),
	// and on everything written for an earlier DRA (dra-upgrade); DRA-backed
	// names (KEP-5004) never fail. Every gate fails on what the target does
	// not serve at all (classic DRA, removed versions, removed gates).
	// Governance items (quotas, LimitRanges, queues) fail it only when the
	// object would stop counting or limiting the devices after migration
	// (rules.Govern.Breaks); no narrower gate fails on them.
	FailOnAny Gate = "any"
	// FailOnLossy fails on requests that cannot move without loss: lossy
	// or unmapped.
	FailOnLossy Gate = "lossy"
	// FailOnUnmapped fails on requests no rule maps.
	FailOnUnmapped Gate = "unmapped"
)

// Gates lists the gates, the default first.
var Gates = []Gate{FailOnAny, FailOnLossy, FailOnUnmapped}

// ParseGate checks a gate's name.
func ParseGate(s string) (Gate, error) {
	switch g := Gate(s); g {
	case FailOnAny, FailOnLossy, FailOnUnmapped:
		return g, nil
	}
	return "", fmt.Errorf("--fail-on %q: use any, unmapped or lossy", s)
}

// Fails reports whether an item fails the gate. Ignored items never fail;
// an ignore annotation without a reason always does, whatever the gate,
// because it does not ignore anything.
func (g Gate) Fails(it Item) bool {
	if it.IgnoreInvalid {
		return true
	}
	if it.Ignored != "" {
		return false
	}
	if u := it.Mapping.Upgrade; u != nil && u.Serving == rules.NotServed {
		// The target refuses it as written: worse than any mapping loss.
		return true
	}
	if gv := it.Mapping.Govern; gv != nil {
		// An object that would stop counting or limiting the devices
		// after migration fails the default gate; one that keeps
		// counting, or has its DRA form already, never fails.
		return g == FailOnAny && gv.Breaks
	}
	st := it.Status
	if st == rules.NoDevice {
		// Zero asks for no device: nothing to move, nothing to fail.
		return false
	}
	if st == rules.HelmValues || st == rules.CustomResource {
		// migrate leaves it: the default gate fails, the narrow gates
		// judge its mapping as for a workload.
		if g == FailOnAny {
			return true
		}
		st = it.Mapping.Status
	}
	switch g {
	case FailOnUnmapped:
		return st == rules.Unmapped
	case FailOnLossy:
		return st == rules.Unmapped || st == rules.Lossy
	default:
		return st != rules.DRABacked
	}
}
