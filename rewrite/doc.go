// Package rewrite is the only package that changes YAML. It applies a
// plan.FilePlan to the Documents inventory/files read from a file (or from
// one batch of a large file):
//
// Reading: nothing is read or split again. Each Document carries its node,
// the decoded YAML document it belongs to (Root, with its comments) and
// the byte span of that document in the file; DocPlans find their document
// by its index.
//
// Modifying: Document applies one DocPlan with kyaml filters (Lookup,
// LookupCreate, SetField, FieldClearer): extended-resource keys leave
// limits and requests, containers gain resources.claims, the pod spec gains
// resourceClaims, and hints that became CEL selectors are removed with the
// empty containers they leave. Every edit checks what it edits first (the
// document's kind and name, the hint's key), and is a no-op when already
// done, so a second run changes nothing.
//
// Writing: File returns the text as Pieces: each touched document is
// encoded in the text's own style (indent width, sequence indentation;
// JSON stays JSON) and checked to parse, between the untouched bytes, which
// are kept exactly. New objects follow their workload (a `kind: List` gains
// them as items) or are returned for a claims file (AppendObjects;
// AddEntry lists the file in a kustomization). Apply edits documents
// without text (a KRM function's items).
//
// rewrite does no I/O and makes no decisions: names, placement and what is
// left alone were decided by package plan.
package rewrite
