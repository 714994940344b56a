package plan

import (
	"fmt"
	"strings"

	"github.com/kubedra/kubedra/inventory"
)

// RuleHelmValues is the rule id of the diagnostic for a request set in a
// Helm values file outside a chart that renders.
const RuleHelmValues = "helm/values"

// RuleCustomResource is the rule id of the diagnostic for a request set in
// a custom resource outside any pod template.
const RuleCustomResource = "migrate/custom-resource"

// customResourceFix is what to do about such a request.
const customResourceFix = "move the operator's profile to resource claims as its documentation says (or add a templatePaths entry in a rules file if the map is a pod template's), and keep it on the device plugin until then"

// valuesFix is what to do about a request in a loose Helm values file.
const valuesFix = "move the chart's templates to resource claims by hand, or render the chart (helm template) and migrate the output"

// knownMap is a device map of a custom resource that kubedra knows: what
// it does to the pods, and how such a request moves to DRA.
type knownMap struct {
	group, kind, prefix string
	message, fix        string
}

// knownMaps are the device maps outside pod templates of the kinds kubedra
// knows.
var knownMaps = []knownMap{{
	group: "trainer.kubeflow.org", kind: "TrainJob", prefix: "spec.trainer.resourcesPerNode.",
	message: "per node in spec.trainer.resourcesPerNode, which replaces the resources of the trainer container of its runtime (spec.runtimeRef); a TrainJob has no field for resource claims (its podTemplateOverrides cannot set them), so migrate does not edit it",
	fix:     "move the devices to the runtime: give the TrainingRuntime's or ClusterTrainingRuntime's trainer node container the device request and migrate it with its TrainJobs among the inputs (a cluster-scoped runtime gets a claim template in each of their namespaces), then drop the device from resourcesPerNode; keep it on the device plugin until then",
}}

// known returns the knownMap a finding's values path is in.
func known(f inventory.Finding) (knownMap, bool) {
	for _, k := range knownMaps {
		if f.Kind == k.kind && apiGroup(f.APIVersion) == k.group && strings.HasPrefix(f.Values, k.prefix) {
			return k, true
		}
	}
	return knownMap{}, false
}

// valuesMessage says why a request in a loose Helm values file stays:
// the chart's templates decide where the value goes, and migrate edits
// neither values files nor templates.
func valuesMessage(f inventory.Finding) string {
	if k, ok := known(f); ok {
		return f.Kind + " " + f.Name + " asks for " + f.Resource + ": " + f.Quantity() + " " + k.message
	}
	if f.Kind != "" {
		return f.Kind + " " + f.Name + " sets " + f.Values + ": " + f.Quantity() + " outside any pod template; the operator that reads it makes the pods, and migrate does not edit it"
	}
	return "Helm values set " + f.Values + ": " + f.Quantity() + "; migrate does not edit values files or chart templates"
}

// ValuesDiagnostic is migrate's warning for such a request (scan lists it
// with the status helm-values, and the same message).
func ValuesDiagnostic(f inventory.Finding) inventory.Diagnostic {
	d := inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleHelmValues, File: f.Origin.Path, Line: f.Line,
		Resource: f.Resource, Field: f.Values, Message: valuesMessage(f), Fix: valuesFix}
	if f.Kind != "" {
		d.Rule, d.Object, d.Fix = RuleCustomResource, f.Object(), customResourceFix
	}
	if k, ok := known(f); ok {
		d.Fix = k.fix
	}
	return d
}

// RuleUnreadParts is the rule id of a request left because its file has
// parts kubedra could not read (a template, a broken document).
const RuleUnreadParts = "migrate/unread-parts"

// unreadFix is what to do about a file kubedra could not read whole.
const unreadFix = "render templates first (helm template, kustomize build) and migrate the output"

// Unread says a request stays because its file has parts kubedra could
// not read.
func Unread(x inventory.Finding) inventory.Diagnostic {
	return inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleUnreadParts,
		File: x.Origin.Path, Line: x.Line, Object: x.Object(), Container: x.Container, Resource: x.Resource, Field: x.FieldPath(),
		Message: "left unchanged: the file has parts kubedra could not read (see above)", Fix: unreadFix}
}

// UnreadParts says a large file is left as it was because a later batch of
// it could not be read, after planned requests in the documents before.
func UnreadParts(path string, planned int) inventory.Diagnostic {
	return inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleUnreadParts, File: path,
		Message: fmt.Sprintf("left unchanged: the file has parts kubedra could not read (see above); device requests in the documents before them: %d", planned),
		Fix:     unreadFix}
}
