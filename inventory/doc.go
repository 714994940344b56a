// Package inventory holds kubedra's document model: what exists, before any
// decision is made about it.
//
// Sources turn bytes into Documents: inventory/files reads manifests from
// paths, directories and stdin; inventory/cluster reads a live cluster (or a
// dump of one). inventory/detect turns Documents into Findings: one per
// extended-resource request of one container, with its field path and the
// scheduling hints (device node labels, tolerations, runtimeClassName) of the
// same pod template.
//
// The types here are plain data. This package must not import cobra,
// client-go or lipgloss, and it makes no mapping decisions (package rules
// and rewrite/plan do).
package inventory
