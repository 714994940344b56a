// Package cluster is kubedra's cluster source: it reads a live cluster (or a
// dump of one) and reduces what it reads to Facts, the plain data that the
// audit checks and the bundle generator work from.
//
// # Reading
//
// Reader takes kubernetes.Interface, dynamic.Interface and a discovery
// client, so that client-go fakes fit in tests (package clustertest);
// NewReaderFor builds one from kubectl's connection flags. It only gets and
// lists (docs/rbac.yaml is the matching ClusterRole). Lists are paginated with
// Limit/Continue and each page is folded into a Collector as it arrives:
// a pod becomes a few strings (its node, its top-level owner, its
// extended-resource requests), never a retained object, so 50,000 pods cost
// little more memory than 500.
//
// A Scope limits a read to some resource types (bundle needs nodes,
// DaemonSets and quotas, not 50,000 pods) and can keep those whole
// (Facts.Objects), for callers that copy fields the summaries drop.
//
// A resource type that is forbidden, not served or fails to list is recorded
// as a Problem, an inventory.Diagnostic with the resource type and the rule
// cluster/unreadable ("could not read resourcequotas: ..."), and the read
// goes on: the audit reports what it could not see instead of crashing.
//
// # Dumps
//
// With Reader.Dump set, every object read is also written as a YAML document
// (managedFields removed), followed by a ClusterInfo document
// (kubedra.dev/v1alpha1) that records the server version, the served
// resource.k8s.io versions, the resource types read and the problems met.
// ReadDump folds such a stream through the same Collector, so the Facts of a
// dump equal the Facts of the live read with the same Scope. ReadDump also accepts the output of
// `kubectl get nodes,daemonsets,pods,deviceclasses,resourceslices -A -o yaml`
// (a kind: List); what such a dump does not hold is reported as a Problem
// with the rule cluster/not-in-dump.
//
// # Placement
//
// CanSchedule evaluates nodeSelector, required node affinity and
// taints/tolerations of a pod spec against a node, the way the DaemonSet
// controller does (DaemonSetCanSchedule adds the tolerations that controller
// adds to every daemon pod).
//
// # Detection of device plugins and DRA drivers
//
// ClassifyPod and ClassifyDaemonSet recognise device plugins and DRA kubelet
// plugins by image, well-known labels and names (reference dra.md §6.1) and
// by hostPath mounts of the kubelet's device-plugin and plugin directories.
// detect.FamilyOfResource and detect.FamilyOfDriver put extended-resource
// names and DRA driver names into device families (nvidia, neuron, efa, amd,
// ...), so that a plugin and a driver serving the same devices can be found
// on one node.
//
// This is the only kubedra package that imports client-go.
package cluster
