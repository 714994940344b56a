// Package upgrade holds the end-to-end tests of DRA written for earlier
// releases (issue 16): classic DRA (resource.k8s.io/v1alpha2 with NVIDIA's
// GpuClaimParameters and MigDeviceClaimParameters) and the beta layouts,
// migrated by the binary at $KUBEDRA_BIN with --target-version 1.38.
//
// TestDryRun: every document migrate writes for the classic examples of
// ../shared/corpus/dra-reference and for the quick-start set of
// rewrite/testdata/dra-classic-quickstart is accepted by a server-side dry
// run with strict field validation, and none of the input's earlier-DRA
// documents is (so the test can fail).
//
// TestPlacement: the migrated quick-start set runs on the real
// kube-scheduler against ResourceSlices shaped like the NVIDIA driver's, and
// lands where the classic manifests meant it to: two pods with an exclusive
// GPU each get two different GPUs; two pods sharing a time-sliced claim get
// the same GPU on the same node; the MIG claim gets a MIG device of its
// profile, not a full GPU.
package upgrade
