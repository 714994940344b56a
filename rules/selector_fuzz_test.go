package rules

import (
	"regexp"
	"slices"
	"strconv"
	"testing"

	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubedra/kubedra/internal/fuzzstat"
	"github.com/kubedra/kubedra/inventory"
)

// FuzzSelectors (issue 14 item 13): whatever a node label's operator and
// values, the selector the rules generate for it compiles with the API
// server's CEL compiler within its cost and length limits, is a bool, and
// is the same every time. The rules and the hint labels with their
// drivers are built once; seeds are the built-in hint labels with values
// seen in real manifests.
func FuzzSelectors(f *testing.F) {
	set := Default()
	type pair struct{ label, driver string }
	var pairs []pair
	for _, h := range set.hints {
		for _, d := range h.Drivers {
			if !slices.Contains(pairs, pair{h.Label, d}) {
				pairs = append(pairs, pair{h.Label, d})
			}
		}
	}
	if len(pairs) == 0 {
		f.Fatal("no hint rules")
	}
	seenShape := map[string]bool{}
	ops := []string{"", "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}
	// Three seeds: each is a round trip to the worker carrying the whole
	// coverage map (about 60 ms in this package's binary, where 72 seeds
	// took a quarter of a 16 s run); the first byte picks the label, and
	// the fuzzer mutates it, the operator and the values from there.
	for i, v := range []string{"NVIDIA-H100-80GB-HBM3", "80", `a"b\c`} {
		f.Add(uint8(i), uint8(1), v, "x")
	}
	// The verdict of the API server's compiler on a shape, which many
	// inputs share: a compile costs about 1 ms instrumented.
	shapes := map[string]error{}
	f.Fuzz(func(t *testing.T, which, op uint8, v1, v2 string) {
		fuzzstat.Count()
		p := pairs[int(which)%len(pairs)]
		h := inventory.Hint{Kind: inventory.HintNodeAffinity, Key: p.label, Operator: ops[int(op)%len(ops)], Values: []string{v1, v2}}
		if h.Operator == "" {
			h.Kind, h.Values = inventory.HintNodeSelector, []string{v1}
		}
		x, ok := set.translate(h, p.driver)
		again, ok2 := set.translate(h, p.driver)
		if ok != ok2 || x != again {
			t.Fatalf("not deterministic: %+v / %+v", x, again)
		}
		if !ok || x.expr == "" {
			return
		}
		if len(x.expr) > resourceapi.CELSelectorExpressionMaxLength {
			t.Fatalf("selector of %d characters: %.200s", len(x.expr), x.expr)
		}
		// The API server's compiler on the expression's shape (string
		// literals masked: their text does not change types or cost
		// beyond the length checked above), and on the first expression
		// of each shape; every literal must be a well-formed quoted
		// string (CEL's escapes are Go's: strconv.Quote writes them).
		// Parsing every expression costs 0.6 ms, which would hold the
		// fuzzer to a few hundred runs a second.
		shape := literalRE.ReplaceAllStringFunc(x.expr, func(lit string) string {
			if digitsRE.MatchString(lit) {
				return `"0"` // int("..."): a number stays a number
			}
			return `"s"`
		})
		err, ok := shapes[shape]
		if !ok {
			err = checkCEL(shape, DefaultTarget)
			shapes[shape] = err
		}
		if err != nil {
			t.Fatalf("hint %+v for %s: selector %q: %v", h, p.driver, x.expr, err)
		}
		for _, lit := range literalRE.FindAllString(x.expr, -1) {
			if _, err := strconv.Unquote(lit); err != nil {
				t.Fatalf("hint %+v for %s: selector %q: literal %s: %v", h, p.driver, x.expr, lit, err)
			}
		}
		if !seenShape[shape] {
			seenShape[shape] = true
			if err := checkCEL(x.expr, DefaultTarget); err != nil {
				t.Fatalf("hint %+v for %s: selector %q: %v", h, p.driver, x.expr, err)
			}
		}
	})
}

// digitsRE matches a literal of digits (an argument of int()).
var digitsRE = regexp.MustCompile(`^"[0-9]+"$`)

// literalRE matches a CEL double-quoted string literal.
var literalRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
