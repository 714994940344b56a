package action_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/rewrite/emit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// repeated returns a run of four words that a message says twice ("left
// unchanged: already served by DRA: already served by DRA ..."), or "".
func repeated(msg string) string {
	words := strings.FieldsFunc(strings.ToLower(msg), func(r rune) bool { return r == ' ' || r == ':' || r == ',' || r == ';' || r == '(' || r == ')' })
	seen := map[string]bool{}
	for i := 0; i+4 <= len(words); i++ {
		run := strings.Join(words[i:i+4], " ")
		if seen[run] {
			return run
		}
		seen[run] = true
	}
	return ""
}

// TestMigrateMessagesSayItOnce (issue 28): what migrate says of a request
// of each built-in rule's example resource, and of one no rule maps,
// never repeats itself, as "already served by DRA: already served by DRA"
// did when a rule's reason began with the words of the message around it.
func TestMigrateMessagesSayItOnce(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	n := 0
	for _, r := range rules.Default().Rules() {
		for _, ex := range append(r.Examples, "example.com/unknown") {
			fmt.Fprintf(&b, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p%d}\nspec:\n  containers:\n  - name: c\n    image: x\n    resources: {limits: {%q: 1}}\n", n, ex)
			n++
		}
	}
	for _, lossy := range []bool{false, true} {
		res, _ := migrate(t, action.Input{Paths: []string{"-"}, Stdin: strings.NewReader(b.String())}, emit.Stream, plan.Options{AllowLossy: lossy})
		if len(res.Diagnostics) == 0 {
			t.Fatal("no diagnostics")
		}
		for _, d := range res.Diagnostics {
			if run := repeated(d.Message); run != "" {
				t.Errorf("%q said twice in %s: %s", run, d.Rule, d.Message)
			}
		}
	}
	// And what scan and check say of each.
	res, err := action.Scan(context.Background(), action.Input{Paths: []string{"-"}, Stdin: strings.NewReader(b.String())}, action.ScanOptions{Target: rules.DefaultTarget})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range res.Report.Findings {
		if run := repeated(it.Message()); run != "" {
			t.Errorf("%q said twice in %s: %s", run, it.RuleID(), it.Message())
		}
	}
}

// TestUnknownKindNamedWithGroup (issue 28): a kind kubedra does not know is
// named with its API group, as kubectl names resources (Service of
// inference.llmaz.io is not the core Service).
func TestUnknownKindNamedWithGroup(t *testing.T) {
	t.Parallel()
	in := "apiVersion: inference.llmaz.io/v1alpha1\nkind: Service\nmetadata: {name: s, namespace: ml}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}\n"
	res, _ := migrate(t, action.Input{Paths: []string{"-"}, Stdin: strings.NewReader(in)}, emit.Stream, plan.Options{})
	var msgs []string
	for _, d := range res.Diagnostics {
		msgs = append(msgs, d.Message)
	}
	if got := strings.Join(msgs, "\n"); !strings.Contains(got, "Service.inference.llmaz.io is not a known workload kind") {
		t.Errorf("diagnostics:\n%s", got)
	}
}
