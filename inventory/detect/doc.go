// Package detect turns Documents into Findings: one per extended-resource
// request of one container, with its position, field path and the
// device-related scheduling hints of the same pod template.
//
// # What is found
//
// Documents walks the pod specs of every kind it knows (see kinds.go: core,
// apps and batch workloads, Kubeflow, Ray, JobSet, LeaderWorkerSet, KServe,
// Argo Workflows, Volcano, Knative, Spark), of the kinds users describe with
// Options.TemplatePaths, and then, for any kind, every remaining
// `containers` / `initContainers` / `ephemeralContainers` list and every
// container-shaped map (name, image and resources) anywhere in the
// document; those come with Finding.Generic set and the path of the map
// holding them. In each container, every key of resources.limits and
// resources.requests that IsExtendedResource is reported, once per
// (container, resource) with both quantities as written.
//
// Argo templates (container, script, containerSet, initContainers,
// sidecars), KServe model specs (predictor.model and friends) and Spark
// driver/executor `gpu` fields are containers too; a Spark gpu field is
// reported as a limit.
//
// # Hints and ignores
//
// Hints are nodeSelector entries, node-affinity expressions (required and
// preferred) whose key is a device feature-discovery label (DeviceLabel),
// tolerations of device taints (DeviceToleration) and a runtimeClassName
// naming nvidia. Paths use kyaml PathGetter syntax relative to the
// document: list items are [name=value] when they have a name, else [i],
// and dots inside keys are escaped (nvidia\.com/gpu\.product).
//
// The annotation kubedra.io/ignore on the workload (or on the pod template's
// own metadata) sets Finding.Ignore to its value; an empty value sets
// IgnoreInvalid, because an ignore must say why.
//
// # Device families
//
// FamilyOfResource and FamilyOfDriver put extended-resource names and DRA
// driver names into device families (nvidia, neuron, efa, amd, ...):
// audit, the cluster reader and simulate find a plugin and a driver that
// serve the same devices by them.
//
// # Prefilter
//
// MayRequest tells, from a document's bytes alone, whether it can contain a
// request. It never says no to a document holding one: every request has a
// `limits` or `requests` key (or is a Spark gpu field) and a domain-prefixed
// name written as a mapping key, unless the text uses escapes, anchors or
// explicit keys, in which case MayRequest says yes.
//
// The package is pure: it does not import rules or client-go and never
// mutates nodes.
package detect
