// Package harness runs kubedra's end-to-end tests against a real Kubernetes
// control plane built from Go modules: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler on 127.0.0.1, with no kubelet
// and no containers. Pods are bound to fake Node objects whose status the
// test writes; DRA devices are ResourceSlices the test publishes.
//
// # Building
//
// The binaries (plus kubectl) are built from a wrapper module per Kubernetes
// minor, test/e2e/lcp/v<minor>/ (regenerate with lcp/gen-gomod.sh), which
// requires k8s.io/kubernetes and replaces its staging modules with the
// published k8s.io/* versions. It is a nested module, so neither kubedra's
// go.mod nor this module's ever requires k8s.io/kubernetes. Binaries are
// cached outside the clone in ${XDG_CACHE_HOME:-~/.cache}/kubedra-lcp/bin/
// <version>-<hash of the wrapper module> (the same key as
// ../shared/cluster/up.sh); builds take a file lock there, so parallel test
// binaries share one build. A cold build is ~27 CPU-minutes (15-40 min on 2
// cores); with a warm Go build cache it is a ~50 s relink; cached binaries
// start at once. `go run ./cmd/lcp build` (run by make e2e first) builds with
// live progress, since go test buffers the output of test binaries.
//
// The version comes from Options.Version, else $K8S_VERSION ("1.37",
// "1.34.x", "v1.37.2"), else 1.37. Version.TargetVersion is the matching
// `kubedra migrate --target-version`.
//
// # A cluster per test binary
//
// Start one control plane per test binary (per package) in TestMain; Main
// does it and always stops it, also on failure and on SIGINT/SIGTERM. Child
// processes run in their own session with PR_SET_PDEATHSIG, so even a test
// binary killed by go test -timeout takes them down:
//
//	var cluster *harness.Cluster
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }
//
//	func TestSomething(t *testing.T) {
//		ns := cluster.NewNamespace(t)                    // deleted at cleanup, pods force-deleted
//		cluster.CreateNode(t, harness.NodeSpec{          // deleted at cleanup
//			Name: "gpu-node", Resources: map[string]string{"nvidia.com/gpu": "8"},
//		})
//		objs, _ := harness.DecodeYAML(manifest)
//		if err := cluster.CreateAll(ctx, objs, harness.CreateOptions{Namespace: ns}); err != nil { ... }
//		pod, err := cluster.WaitPodScheduled(ctx, ns, "app", harness.DefaultWait)
//	}
//
// `go test -short` skips everything (Main returns 0 without starting).
//
// The Cluster carries Kubeconfig (admin, client certificate), Kubectl (the
// path of the matching kubectl), APIServerURL, CAFile, Token, RESTConfig,
// Clientset, Dynamic and Mapper. Env() gives an environment with KUBECONFIG
// for running kubectl or kubedra (RunKubedra runs $KUBEDRA_BIN).
//
// # Fake nodes and devices
//
// CreateNode writes a Ready node with status.allocatable (cpu 64, memory
// 512Gi, pods 110, plus NodeSpec.Resources, e.g. device-plugin extended
// resources); nothing ever changes it (the node-lifecycle controller does not
// run, and the TaintNodesByCondition and ServiceAccount admission plugins are
// off, see DefaultDisabledAdmission). DeviceClasses returns the real drivers'
// classes (gpu.nvidia.com, mig.nvidia.com, neuron.aws.com,
// efa.networking.k8s.aws) for EnsureDeviceClasses; NvidiaGPU, NvidiaMIG,
// NeuronDevice and EFADevice build devices shaped like the drivers'
// (attributes, capacities, names), Slice and CreateResourceSlice publish them
// for a node.
//
// Mind KEP-5004: on 1.36+ the gpu.nvidia.com class maps nvidia.com/gpu
// (extendedResourceName), so a pod that asks for nvidia.com/gpu can be bound
// to a node without that allocatable but with gpu.nvidia.com devices, and it
// takes one of them. Keep device-plugin nodes and DRA nodes in separate
// sandboxes when that matters.
//
// UserKubeconfig issues a client certificate for another user (and groups)
// and writes a kubeconfig for it, for tests with restricted RBAC.
//
// Tests that run in parallel in one cluster use a Sandbox: its nodes carry a
// label and a NoSchedule taint with the sandbox ID, and Sandbox.Confine adds
// the matching nodeSelector and toleration to a workload's pod template, so
// no test sees another's nodes or devices.
//
// # Waiting
//
// Nothing sleeps without a condition. Poll waits for a condition with a bound
// and its timeout error names what was awaited and what was last seen.
// WaitPodScheduled waits for spec.nodeName (never Ready: nothing runs the
// pod), WaitPodUnschedulable for the scheduler's PodScheduled=False/
// Unschedulable verdict (how "stays pending" is observed), WaitPodSettled for
// either. PodClaims and AllocatedDevices read a pod's ResourceClaims and the
// allocated devices joined with their ResourceSlice attributes.
//
// Deleting a bound pod never completes gracefully without a kubelet: use
// ForceDeletePods (grace period 0); namespace cleanup does.
package harness
