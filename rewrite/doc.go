// Package rewrite is the only package that changes YAML. It applies a
// plan.Plan to the bytes of a file:
//
// Reading: File cuts the file into documents at "---" lines and parses only
// the documents the plan touches, with kyaml (go.yaml.in/yaml/v3 nodes), so
// comments, key order and quoting are kept.
//
// Modifying: Document applies one DocPlan with kyaml filters (Lookup,
// LookupCreate, SetField, FieldClearer): extended-resource keys leave
// limits and requests, containers gain resources.claims, the pod spec gains
// resourceClaims, and hints that became CEL selectors are removed with the
// empty containers they leave. Every edit checks what it edits first (the
// document's kind and name, the hint's key), and is a no-op when already
// done, so a second run changes nothing.
//
// Writing: each touched document is encoded in the file's own style
// (indent width, sequence indentation; JSON stays JSON) and spliced back
// between the untouched documents, which keep their exact bytes. New
// objects follow their workload (a `kind: List` gains them as items) or are
// returned for a claims file (AppendObjects, AddResource).
//
// rewrite does no I/O and makes no decisions: names, placement and what is
// left alone were decided by package plan.
package rewrite
