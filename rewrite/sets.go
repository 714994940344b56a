package rewrite

import (
	"fmt"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// setFields applies a DocPlan's Sets: each map is found (or created under
// its existing parent) and the field added unless it is there already
// (or replaced, when the set says so).
func setFields(root *yaml.RNode, sets []plan.FieldSet) error {
	for _, fs := range sets {
		parts := parsePath(fs.Map)
		if len(parts) == 0 {
			return fmt.Errorf("no map to set %s in", fs.Field)
		}
		chain := walk(root.YNode(), parts[:len(parts)-1])
		if chain == nil || chain[len(chain)-1].Kind != yaml.MappingNode {
			return fmt.Errorf("%s not found", fs.Map)
		}
		m, err := yaml.NewRNode(chain[len(chain)-1]).Pipe(yaml.LookupCreate(yaml.MappingNode, parts[len(parts)-1]))
		if err != nil || m == nil || m.YNode().Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a map", fs.Map)
		}
		if m.Field(fs.Field) != nil && !fs.Replace {
			continue
		}
		v := yaml.NewStringRNode(fs.Value)
		v.YNode().Style = yaml.DoubleQuotedStyle
		if err := m.PipeE(yaml.SetField(fs.Field, v)); err != nil {
			return err
		}
	}
	return nil
}
