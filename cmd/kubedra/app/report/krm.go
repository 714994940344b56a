package report

import (
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// KRMResults are diagnostics as KRM function results (kyaml's
// framework.Result), in order: the rule id as tags.rule, the fix appended to
// the message, the field path, and the file and index of the item a
// diagnostic is about, looked up in where (an object's origin among the
// function's items).
func KRMResults(diags inventory.Diagnostics, where map[inventory.ObjectRef]inventory.Origin) framework.Results {
	out := make(framework.Results, 0, len(diags))
	for _, d := range diags {
		out = append(out, krmResult(d, where))
	}
	return out
}

// krmResult is one diagnostic as a KRM result.
func krmResult(d inventory.Diagnostic, where map[inventory.ObjectRef]inventory.Origin) *framework.Result {
	r := &framework.Result{Message: d.Message, Severity: framework.Severity(d.Severity)}
	if d.Fix != "" {
		r.Message += ". Fix: " + d.Fix
	}
	if d.Rule != "" {
		r.Tags = map[string]string{"rule": d.Rule}
	}
	if d.Field != "" {
		r.Field = &framework.Field{Path: d.Field}
	}
	if o := d.Object; o != nil {
		r.ResourceRef = resourceRef(o.APIVersion, o.Kind, o.Namespace, o.Name)
		if at, ok := where[*o]; ok && at.Path != "" {
			r.File = &framework.File{Path: at.Path, Index: at.Index}
		}
	}
	return r
}

// CheckKRMResults are check's findings as KRM results, in order, and those
// of them that fail the gate: a failing finding is an error, an ignored one
// info with its reason, one already served by DRA info, any other a
// warning; each has its rule id, field path, and file and index when known.
func CheckKRMResults(c Check) (results, failing framework.Results) {
	results = make(framework.Results, 0, len(c.Report.Findings))
	for i, it := range c.Report.Findings {
		r := &framework.Result{
			Message:     it.Message(),
			Severity:    framework.Severity(c.severity(i)),
			ResourceRef: resourceRef(it.APIVersion, it.Kind, it.Namespace, it.Name),
			Field:       &framework.Field{Path: it.FieldPath()},
			Tags:        map[string]string{"rule": it.RuleID()},
		}
		if it.File != "" {
			r.File = &framework.File{Path: it.File, Index: it.Index}
		}
		switch {
		case c.failing(i):
			failing = append(failing, r)
		case it.Ignored != "":
			r.Message += " (ignored: " + it.Ignored + ")"
		}
		if it.IgnoreInvalid {
			r.Message += "; " + plan.IgnoreReasonMessage
		}
		results = append(results, r)
	}
	return results, failing
}

func resourceRef(apiVersion, kind, namespace, name string) *yaml.ResourceIdentifier {
	return &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: apiVersion, Kind: kind}, NameMeta: yaml.NameMeta{Name: name, Namespace: namespace}}
}

// krmResultList is check -o krm: a KRM ResourceList without items, whose
// results are what `kubedra fn` would report on the same manifests.
type krmResultList struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Items      []any             `yaml:"items"`
	Results    framework.Results `yaml:"results"`
}

// KRM writes c as a config.kubernetes.io/v1 ResourceList with no items and
// one result per finding (CheckKRMResults), in the YAML kyaml writes.
func KRM(w io.Writer, c Check) error {
	results, _ := CheckKRMResults(c)
	b, err := yaml.Marshal(krmResultList{APIVersion: "config.kubernetes.io/v1", Kind: "ResourceList", Items: []any{}, Results: results})
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
