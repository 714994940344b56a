// Package validate holds the validation suite: everything `kubedra migrate`
// writes must be accepted by a real kube-apiserver.
//
// Inputs: the rewrite golden fixtures (rewrite/testdata/<case>/input.yaml or
// input.json, with the case's flags file), the realistic manifests under
// testdata/manifests when present, and all of ../shared/corpus/dev (skipped
// with a message when ../shared is not beside the clone). Each is migrated
// by the binary at $KUBEDRA_BIN with --target-version set to the cluster's
// minor, stdin mode for fixtures and --out DIR for the trees.
//
// Before the first test, the CRDs of the frameworks whose kinds migrate
// rewrites are installed from testdata/crds (KubeRay, Kubeflow training
// operator v1, Trainer and the MPI operator, JobSet, LeaderWorkerSet,
// KServe, Argo Workflows, Volcano, Knative Serving, the Spark operator and
// NVIDIA's ComputeDomain; vendored gzipped with each project's LICENSE and
// a NOTICE naming repository, commit and paths; vendor.sh updates them).
// KUBEDRA_E2E_NO_CRDS=1 skips them, for comparison with a bare server.
//
// Every output document of a kind the server serves (built-in or one of
// those CRDs) is created with a server-side dry run and strict field
// validation (what `kubectl apply --dry-run=server` does), after creating
// the namespaces the documents name. The tree tests log how many of the
// files migrate changed hold documents the server could not dry-run. A
// rejection fails the test with the server's message, unless the unchanged
// input document is rejected too for the same reason (kustomize patches,
// removed API versions, typos in the corpus: not migrate's doing).
// Documents of other kinds are checked structurally: each pod spec
// embedded in them must decode strictly into a core/v1 PodSpec. For all documents, container claim
// references must name a pod-level resourceClaim, and each
// resourceClaimTemplateName must name a ResourceClaimTemplate in the output
// (or the channel template of a ComputeDomain there, which NVIDIA's
// controller creates) whose requests include the requests containers name.
package validate
