// Package bundle builds the cutover kit: the files an operator applies to move
// node pools from a device plugin to a DRA driver without ever letting both
// serve one device family on the same node.
//
// It is a stage of its own, after audit and beside migrate: its inputs are
// cluster facts (nodes, device-plugin DaemonSets, ResourceQuotas, read from a
// cluster or a dump) and an embedded catalogue of reference DRA drivers
// (drivers/*.yaml, each pinned to a named upstream release); its output is a
// kustomize tree plus PLAN.md. It decides nothing about workloads (that is
// rewrite/plan's job) and reads no cluster itself: callers read one with
// inventory/cluster in bundle's Scope and hand it NewFacts.
//
// # Catalogue
//
// Catalogue returns the reference drivers: install method (Helm chart
// coordinates and the values kubedra writes, or plain manifests for the
// example driver), DeviceClasses, the well-known device-plugin DaemonSets of
// the family, and the settings the cutover needs (e.g. NVIDIA's
// gpuResourcesEnabledOverride).
//
// # Generating
//
// Generate turns Options (driver, pools, strategy, target version) and Facts
// into a Tree: relative path -> file content, plus Warnings that also appear
// in PLAN.md. Problems that would make the bundle unsafe (a plugin DaemonSet
// that cannot be excluded, a pool that matches no node, extended resources on
// a target that cannot serve them) are errors, never silent output. Write
// stores a Tree atomically.
//
// The node label convention is kubedra.io/device-mode=dra. The driver's
// kubelet plugin selects it; every device-plugin DaemonSet gets the inverse
// required node affinity (NotIn [dra]) ANDed into each of its existing node
// selector terms, applied with server-side apply under the field manager
// "kubedra" so that the rollback files restore the original terms exactly.
//
// # Verifying
//
// Verify evaluates DaemonSet placement (node selector, required node
// affinity, taints and tolerations, as the DaemonSet controller does) for
// every node, both as it is labelled now and as it would be after the label
// phase, and reports each node where a plugin DaemonSet and a driver
// DaemonSet of the same family could both run.
package bundle
