package action

import (
	"context"
	"errors"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/proof"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// CheckOptions steer Check. The scan is always strict: a gate must fail
// on a broken document even when it names no device.
type CheckOptions struct {
	ScanOptions
	FailOn plan.Gate
	// SkipsFail counts inputs skipped by design (templates, symlinks) as
	// inputs that could not be checked (--strict).
	SkipsFail bool
	// AllowEmpty lets an input without any manifest pass; otherwise it is
	// an error (ErrNoManifests): a failed `helm template` piped without
	// pipefail must not pass the gate.
	AllowEmpty bool
	// Baseline is the repository before a change (a checkout of the base
	// revision): every deployable unit of the input is proved against the
	// same unit there (proveBaseline), and a unit whose pods would get
	// other devices fails the gate.
	Baseline string
}

// ErrNoManifests is Check's error for an input without a single document.
var ErrNoManifests = errors.New("no manifests found: the input holds no Kubernetes document (did a command before the pipe fail?); pass --allow-empty if that is expected")

// CheckResult is a scan with the gate's verdict on each finding.
type CheckResult struct {
	*ScanResult
	FailOn plan.Gate
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
	// Units are the proofs against the baseline (Baseline), and
	// UnitFailures counts those that failed (each fails the gate).
	Units        []proof.Result
	UnitFailures int
	// UnitProblems are the failed units' diagnostics (also in Diagnostics).
	UnitProblems inventory.Diagnostics
}

// Check scans the input and gates on the result.
func Check(ctx context.Context, in Input, opts CheckOptions) (*CheckResult, error) {
	sopts := opts.ScanOptions
	sopts.Strict = true
	sr, err := Scan(ctx, in, sopts)
	if err != nil {
		return nil, err
	}
	return gate(ctx, in, sr, opts)
}

// gate is Check's verdict on the scan sr of in.
func gate(ctx context.Context, in Input, sr *ScanResult, opts CheckOptions) (*CheckResult, error) {
	if opts.FailOn == "" {
		opts.FailOn = plan.FailOnAny
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
	if opts.Baseline != "" {
		units, diags, err := proveBaseline(ctx, in, opts.Baseline)
		if err != nil {
			return nil, err
		}
		r.Units = units
		r.Diagnostics = append(r.Diagnostics, diags...)
		r.UnitProblems = diags
		for _, u := range units {
			if u.Status == proof.Failed {
				r.UnitFailures++
				r.Failures++
			}
		}
	}
	if !opts.AllowEmpty && sr.Report.Summary.Documents == 0 && r.FailedInputs == 0 && len(sr.Report.Skipped) == 0 {
		r.Err = ErrNoManifests
	}
	return r, nil
}
