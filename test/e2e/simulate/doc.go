// Package simulate checks `kubedra simulate` against the real
// kube-scheduler: for each scenario (a NodeInventory and manifests written
// for device plugins) it asks simulate for its verdict and placement, then
// builds both worlds in the e2e control plane from the very Nodes and
// ResourceSlices simulate assumed (`kubedra simulate --emit-nodes
// before|after`), creates the manifests as given in the device-plugin world
// and what migrate made of them (or the scenario's after manifests) in the
// DRA world, and asserts that the pods the scheduler bound, pool by pool,
// are those simulate placed.
//
// Each world lives in a harness.Sandbox, so scenarios run in parallel. A
// scenario has one workload, or workloads whose pods can only go to one
// pool, so that the scheduler's scoring (which simulate does not model:
// it packs first-fit) cannot change the counts per pool.
package simulate
