// Package simulate answers "will the workloads still fit after the move?":
// it packs pod templates onto nodes twice, in a world where the node pools
// serve devices through device plugins and in one where DRA drivers do, and
// compares workload by workload.
//
// It has a home of its own because it is neither detection nor an audit:
// it models nodes (NodeInventory files and the built-in shapes catalogue,
// or nodes and ResourceSlices read from a cluster), and it schedules. The
// device-plugin fit is Kubernetes' own arithmetic (component-helpers'
// effective requests, node affinity and taints); the DRA fit is the
// allocator of k8s.io/dynamic-resource-allocation/structured, the code
// kube-scheduler runs, with the features of the target version. Pods are
// packed greedily (first fit, node order) the same way in both worlds.
//
//	Inventory (Worlds) or ClusterNodes (ClusterWorlds) -> World (before, after)
//	Manifests (before, after)                          -> Run -> Result (verdicts, reasons, pools)
//
// It never reads files, migrates or reaches a cluster: action.Simulate
// reads the manifests, migrates them in memory with action.Migrate (or
// reads --after), reads the cluster or dump through inventory/cluster and
// hands the documents and nodes here.
package simulate
