package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Gate is what fails `kubedra check`.
type Gate string

// Gates (--fail-on).
const (
	// FailOnAny fails on every device-plugin request that is not ignored,
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

// gateNames lists the gates for messages.
func gateNames() string {
	return "any, unmapped or lossy"
}

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
func (g Gate) Fails(it plan.Item) bool {
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
	if st == rules.HelmValues {
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

// CheckOptions steer Check. The scan is always strict: a gate must fail
// on a broken document even when it names no device.
type CheckOptions struct {
	ScanOptions
	FailOn Gate
	// SkipsFail counts inputs skipped by design (templates, symlinks) as
	// inputs that could not be checked (--strict).
	SkipsFail bool
	// AllowEmpty lets an input without any manifest pass; otherwise it is
	// an error (ErrNoManifests): a failed `helm template` piped without
	// pipefail must not pass the gate.
	AllowEmpty bool
}

// ErrNoManifests is Check's error for an input without a single document.
var ErrNoManifests = errors.New("no manifests found: the input holds no Kubernetes document (did a command before the pipe fail?); pass --allow-empty if that is expected")

// CheckResult is a scan with the gate's verdict on each finding.
type CheckResult struct {
	*ScanResult
	FailOn Gate
	// Failing is parallel to Report.Findings: true when the finding fails
	// the gate.
	Failing []bool
	// Failures counts the findings that fail the gate.
	Failures int
	// FailedInputs counts the inputs that could not be checked.
	FailedInputs int
	// Err is ErrNoManifests for an empty input without AllowEmpty; the
	// result is still complete (and renders as an empty report).
	Err error
}

// Check scans the input and gates on the result.
func Check(ctx context.Context, in Input, opts CheckOptions) (*CheckResult, error) {
	if opts.FailOn == "" {
		opts.FailOn = FailOnAny
	}
	sopts := opts.ScanOptions
	sopts.Strict = true
	sr, err := Scan(ctx, in, sopts)
	if err != nil {
		return nil, err
	}
	r := &CheckResult{ScanResult: sr, FailOn: opts.FailOn, Failing: make([]bool, len(sr.Report.Findings)), FailedInputs: sr.Failed}
	for i, it := range sr.Report.Findings {
		if opts.FailOn.Fails(it) {
			r.Failing[i] = true
			r.Failures++
		}
	}
	if opts.SkipsFail {
		r.FailedInputs = len(sr.Report.Skipped)
	}
	if !opts.AllowEmpty && sr.Report.Summary.Documents == 0 && r.FailedInputs == 0 && len(sr.Report.Skipped) == 0 {
		r.Err = ErrNoManifests
	}
	return r, nil
}
