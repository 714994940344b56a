package plan_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// TestPlanYAMLTags (issue 28): migrate --plan encodes the Plan with YAML
// tags: every field of every type it holds has one (a field without one
// came out under its lower-cased Go name, with its zero value: termrests:
// [], operator: ""), and no scalar is written when empty unless it says
// something (omitempty).
func TestPlanYAMLTags(t *testing.T) {
	t.Parallel()
	seen := map[reflect.Type]bool{}
	var check func(ty reflect.Type, path string)
	check = func(ty reflect.Type, path string) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] || ty.PkgPath() == "" || !strings.HasPrefix(ty.PkgPath(), "github.com/kubedra/") {
			return
		}
		seen[ty] = true
		for i := range ty.NumField() {
			f := ty.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, ok := f.Tag.Lookup("yaml")
			if !ok {
				t.Errorf("%s.%s (%s) has no yaml tag", path, f.Name, ty)
				continue
			}
			if tag == "-" {
				continue
			}
			check(f.Type, path+"."+f.Name)
		}
	}
	check(reflect.TypeOf(plan.Plan{}), "Plan")
}
