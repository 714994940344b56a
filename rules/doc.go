// Package rules knows what maps to what: how each device-plugin extended
// resource becomes a DRA DeviceClass, device request, CEL selectors, topology
// constraints and opaque configuration.
//
// The built-in rules are embedded YAML files, one per vendor (builtin/*.yaml);
// users add or override mappings with files of the same schema (kind: Rules,
// apiVersion: kubedra.dev/v1alpha1), and user rules win. Every CEL expression,
// built in, user-written or generated, is compiled and cost-checked with the
// API server's own compiler (rules/selector) when it is loaded or generated,
// so an expression the API server would reject never leaves kubedra.
//
// Resolve is the entry point for scan and migrate: given the device requests
// and scheduling hints of one pod template, it returns a Decision per request
// and the ResourceClaim specs that express them. It never reads manifests or
// files other than rules files.
package rules
