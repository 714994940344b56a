package report

import (
	"encoding/json"
	"io"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// PlanFormats are migrate --plan's formats.
var PlanFormats = NewFormats("yaml", "json")

// Plan writes migrate's plan in format: YAML (the default) or JSON, two
// spaces indented, with every list present.
func Plan(w io.Writer, format Format, p *plan.Plan) error {
	if format == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	}
	return yaml.NewEncoder(w).Encode(p)
}
