// Package chart renders Helm charts as `helm template` would and traces
// what it rendered back to the chart: the template file and line that
// produced a device request, and the values key that fed it.
//
// It is the only importer of the Helm SDK (helm.sh/helm/v3), which pulls a
// large dependency tree (registry, kube client); depcheck_test.go keeps it
// here so that detection, rules and rewriting never depend on it. It reads
// charts and values files; it never writes.
package chart
