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
// Every output document of a core (v1), apps, batch or resource.k8s.io kind
// is created with a server-side dry run and strict field validation (what
// `kubectl apply --dry-run=server` does), after creating the namespaces the
// documents name. A rejection fails the test with the server's message,
// unless the unchanged input document is rejected too for the same reason
// (kustomize patches, removed API versions, typos in the corpus: not
// migrate's doing). Documents of other kinds (CRDs such as TrainJob or
// RayCluster) are checked structurally: each pod spec embedded in them must
// decode strictly into a core/v1 PodSpec. For all documents, container claim
// references must name a pod-level resourceClaim, and each
// resourceClaimTemplateName must name a ResourceClaimTemplate in the output
// whose requests include the requests containers name.
package validate
