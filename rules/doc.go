// Package rules knows what maps to what: how each device-plugin extended
// resource becomes a DRA DeviceClass, device request, CEL selectors, topology
// constraints and opaque configuration.
//
// # Rules files
//
// The built-in rules are embedded YAML files, one per vendor (builtin/*.yaml);
// users add or override mappings with files of the same schema (File: kind:
// Rules, apiVersion: kubedra.dev/v1alpha1; docs/rules.md documents it).
// Load reads the built-ins and the user files in order; later files win, a
// rule with the same id replaces the earlier one, and `enable`/`disable`
// switch rules by id. Decoding is strict: unknown fields, bad regular
// expressions and bad CEL are LoadErrors with file and line.
//
// Every CEL expression, built in, user-written or generated, is compiled and
// cost-checked with the API server's own compiler (rules/selector) when it is
// loaded or generated, so an expression the API server would reject never
// leaves kubedra.
//
// # Resolving
//
// (*Set).Resolve is the entry point for scan and migrate (it implements
// plan.Resolver): given the device requests and scheduling hints of one pod
// template, it returns a Decision per request and the ResourceClaim specs
// that express the mapped ones. Each container request gets its own
// DeviceRequest in one per-pod claim; sharing resources get a shared named
// claim when Options.Share asks for it; accelerators and network devices of
// one container get a matchAttribute constraint. Device labels in
// nodeSelector and required affinity become selectors (Resolution.UsedHints);
// node-level labels stay.
//
// # Encoding
//
// EncodeClaimTemplate and EncodeClaim turn a Claim into the
// resource.k8s.io version the target Kubernetes release serves (v1 from
// 1.34, v1beta2 on 1.33, v1beta1 on 1.32) and refuse fields whose feature
// gate is off by default there (GateError). (*Set).DeviceClass builds the
// DeviceClass with extendedResourceName for the KEP-5004 strategy. The
// package never reads manifests or files other than rules files.
package rules
