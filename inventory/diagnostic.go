package inventory

import (
	"fmt"
	"strings"
)

// Severity of a Diagnostic, as in kyaml's fn/framework results.
type Severity string

// Severities. An Error means kubedra could not do its job for that input
// (the command exits 1); a Warning is something left undone that the user
// should know about; Info is for the record.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
	Info    Severity = "info"
)

// Rank orders severities, most severe first (Error 0, Warning 1, Info 2).
func (s Severity) Rank() int {
	switch s {
	case Error:
		return 0
	case Warning:
		return 1
	}
	return 2
}

// Diagnostic is what any stage says about an input it read, planned or
// rewrote, in one shape for every command: where (file, line, object,
// field path), what (severity, a stable rule id, a message) and what to do
// (fix). It follows kyaml's framework.Result (kyaml/fn/framework/result.go):
// `kubedra fn` turns each Diagnostic into one Result.
//
// Stages append Diagnostics to their result as they go; nothing edits a
// Diagnostic after it is made.
type Diagnostic struct {
	Severity Severity `json:"severity" yaml:"severity"`
	// Rule is a stable id for the kind of diagnostic, e.g. "input/not-yaml"
	// or "migrate/lossy" (docs/diagnostics.md lists them), so that CI
	// tooling can group and filter.
	Rule string `json:"rule,omitempty" yaml:"rule,omitempty"`
	// File is the input file as the user named it ("-" for stdin), "" when
	// the diagnostic is about no file.
	File string `json:"file" yaml:"file"`
	// Line is the 1-based line in File, 0 when unknown.
	Line int `json:"line,omitempty" yaml:"line,omitempty"`
	// Object is the object the diagnostic is about, when there is one.
	Object    *ObjectRef `json:"object,omitempty" yaml:"object,omitempty"`
	Container string     `json:"container,omitempty" yaml:"container,omitempty"`
	// Resource is the extended resource a request names (nvidia.com/gpu),
	// or the resource type a cluster read is about (resourcequotas,
	// resourceslices.resource.k8s.io).
	Resource string `json:"resource,omitempty" yaml:"resource,omitempty"`
	// Field is the kyaml field path in the object, e.g.
	// spec.template.spec.containers[name=cuda].resources.limits.
	Field string `json:"field,omitempty" yaml:"field,omitempty"`
	// Message says what happened and why; Fix what the user can do.
	Message string `json:"message" yaml:"message"`
	Fix     string `json:"fix,omitempty" yaml:"fix,omitempty"`
}

// ObjectRef names a Kubernetes object (kyaml's yaml.ResourceIdentifier,
// framework.Result's ResourceRef).
type ObjectRef struct {
	APIVersion string `json:"apiVersion,omitempty" yaml:"apiVersion,omitempty"`
	Kind       string `json:"kind" yaml:"kind"`
	Namespace  string `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	Name       string `json:"name" yaml:"name"`
}

// String is "Kind/name", or "Kind/namespace/name" in a namespace.
func (r ObjectRef) String() string {
	if r.Kind == "" {
		// A Helm values key or a document without kind: its name alone.
		if r.Namespace != "" {
			return r.Namespace + "/" + r.Name
		}
		return r.Name
	}
	if r.Namespace != "" {
		return r.Kind + "/" + r.Namespace + "/" + r.Name
	}
	return r.Kind + "/" + r.Name
}

// Location is "file:line", the file alone, or "" when there is no file.
func (d Diagnostic) Location() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d", d.File, d.Line)
	}
	return d.File
}

// String is the diagnostic in an error message: "file:line: message", or
// the message alone when it is about no file.
func (d Diagnostic) String() string {
	if loc := d.Location(); loc != "" {
		return loc + ": " + d.Message
	}
	return d.Message
}

// Diagnostics is what a stage reports, in the order it found it.
type Diagnostics []Diagnostic

// Err is ds as a *DiagnosticsError, or nil when ds is empty.
func (ds Diagnostics) Err() error {
	if len(ds) == 0 {
		return nil
	}
	return &DiagnosticsError{Diagnostics: ds}
}

// DiagnosticsError is what a stage returns when it cannot make its result
// at all (a bundle that would be unsafe, a NodeInventory that does not
// parse): the Diagnostics that stopped it, each with its rule id and
// position, for callers that take them out with errors.As.
type DiagnosticsError struct{ Diagnostics Diagnostics }

// Error is the one diagnostic, or "N problems:" and one line each.
func (e *DiagnosticsError) Error() string {
	if len(e.Diagnostics) == 1 {
		return e.Diagnostics[0].String()
	}
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return fmt.Sprintf("%d problems:\n  - %s", len(lines), strings.Join(lines, "\n  - "))
}
