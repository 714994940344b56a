package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/simulate"
)

// TestSimulateJSONLists (issue 28): every list of simulate's JSON is there,
// [] when empty: no list field may be omitted, and none is null, whatever
// the result holds.
func TestSimulateJSONLists(t *testing.T) {
	t.Parallel()
	// No field of the document's types that holds a list may be omitted.
	var check func(ty reflect.Type, path string, seen map[reflect.Type]bool)
	check = func(ty reflect.Type, path string, seen map[reflect.Type]bool) {
		for ty.Kind() == reflect.Pointer || ty.Kind() == reflect.Slice || ty.Kind() == reflect.Map {
			ty = ty.Elem()
		}
		if ty.Kind() != reflect.Struct || seen[ty] {
			return
		}
		seen[ty] = true
		for i := range ty.NumField() {
			f := ty.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if (f.Type.Kind() == reflect.Slice || f.Type.Kind() == reflect.Map) && strings.Contains(f.Tag.Get("json"), "omitempty") {
				t.Errorf("%s.%s is omitted when empty", path, name)
			}
			check(f.Type, path+"."+name, seen)
		}
	}
	check(reflect.TypeOf(simulateDoc{}), "SimulateReport", map[reflect.Type]bool{})

	// A result as simulate builds it, one workload with no reasons.
	r := &simulate.Result{Workloads: []simulate.Workload{{TemplateRef: simulate.TemplateRef{Kind: "Pod", Name: "p"}, Before: simulate.Outcome{Fits: true, Pods: 1, Pools: []simulate.PoolCount{{Pool: "a", Pods: 1}}}}}}
	var b bytes.Buffer
	if err := Simulate(&b, r, nil, "json", Style{}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b.Bytes(), []byte("null")) {
		t.Errorf("a list is null:\n%s", b.String())
	}
	var doc struct {
		Workloads []struct {
			Before, After map[string]any
		} `json:"workloads"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for side, o := range map[string]map[string]any{"before": doc.Workloads[0].Before, "after": doc.Workloads[0].After} {
		for _, list := range []string{"pools", "reasons"} {
			if l, ok := o[list].([]any); !ok || (side == "after" && len(l) != 0) {
				t.Errorf("%s.%s = %#v, want a list:\n%s", side, list, o[list], b.String())
			}
		}
	}
}
