// Package helm proves kubedra on real Helm charts against a real control
// plane: every chart in ../shared/corpus/dev (every Chart.yaml) and the
// vendored ones in testdata/charts is rendered with the Helm SDK as `helm
// template` renders it (with the values that make it request devices,
// stated per chart), the real kubedra binary migrates the render as Helm's
// post-renderer would (`kubedra migrate -` over manifests and hooks), and
// both renders are server-side dry-run. A chart that cannot be rendered, or
// a kind no vendored CRD serves, is listed with its reason and asserted
// exactly. TestHelmInstall installs a chart with real helm 3 and helm 4
// binaries (hack/tools, skipped until built) and kubedra as their
// post-renderer.
package helm
