package files

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/internal/krmtest"
)

// resourceLists are ResourceLists made of the rewrite goldens' and the
// shared corpus's documents as kustomize writes them (items at column 0),
// each also with its items two columns in, as a hand-written list has
// them.
func resourceLists(t *testing.T) map[string][]byte {
	t.Helper()
	fc := yaml.MustParse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  mode: check # why\n")
	out := map[string][]byte{}
	for p, nodes := range krmtest.Documents(t, "../..", false) {
		list := krmtest.List(nodes, fc)
		if list == nil {
			continue
		}
		out[p] = list
		// The same list with its items two columns in.
		var in bytes.Buffer
		inside := false
		for _, l := range strings.SplitAfter(string(list), "\n") {
			switch {
			case l == "items:\n":
				inside = true
			case strings.HasPrefix(l, "functionConfig:"):
				inside = false
			case inside && l != "\n":
				l = "  " + l
			}
			in.WriteString(l)
		}
		out[p+" (indented)"] = in.Bytes()
	}
	return out
}

// TestSplitResourceList: the items of a list SplitResourceList accepts,
// parsed a batch at a time, are the nodes ParseResourceList gives for the
// whole list (kind, style, tag, value, anchor, comments, line and column,
// all the way down), and so are its functionConfig and malformed items,
// whatever the batches.
func TestSplitResourceList(t *testing.T) {
	split := 0
	for name, data := range resourceLists(t) {
		whole, err := ParseResourceList(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		list, ok := SplitResourceList(data)
		if !ok {
			continue
		}
		if _, err := list.Parse(0, list.Len()); err != nil {
			continue // an alias: the caller parses the list whole
		}
		split++
		if d := nodeDiff(whole.FunctionConfig.YNode(), list.FunctionConfig.YNode(), "functionConfig"); d != "" {
			t.Fatalf("%s: %s", name, d)
		}
		for _, size := range []int{1, 3, list.Len()} {
			if err := sameItems(whole, list, size); err != nil {
				t.Fatalf("%s, batches of %d: %v", name, size, err)
			}
		}
	}
	t.Logf("%d lists split", split)
	if split < 40 {
		t.Fatalf("only %d lists split", split)
	}
}

// sameItems parses list in batches of size and compares them with whole.
func sameItems(whole *ResourceList, list *ItemsText, size int) error {
	var items []*yaml.Node
	var malformed []MalformedItem
	for from := 0; from < list.Len(); from += size {
		b, err := list.Parse(from, min(from+size, list.Len()))
		if err != nil {
			return err
		}
		for _, n := range b.Items {
			items = append(items, n.YNode())
		}
		malformed = append(malformed, b.Malformed...)
	}
	if len(items) != len(whole.Items) || len(malformed) != len(whole.Malformed) {
		return fmt.Errorf("%d items and %d malformed, want %d and %d", len(items), len(malformed), len(whole.Items), len(whole.Malformed))
	}
	for i, n := range items {
		if d := nodeDiff(whole.Items[i].YNode(), n, fmt.Sprintf("items[%d]", i)); d != "" {
			return fmt.Errorf("%s", d)
		}
	}
	for i, m := range malformed {
		w := whole.Malformed[i]
		if m.Index != w.Index || m.Line != w.Line || m.Err.Error() != w.Err.Error() {
			return fmt.Errorf("malformed %v, want %v", m, w)
		}
		if d := nodeDiff(w.Node, m.Node, "malformed"); d != "" {
			return fmt.Errorf("%s", d)
		}
	}
	return nil
}

// nodeDiff says where two node trees differ ("" when they do not).
func nodeDiff(a, b *yaml.Node, at string) string {
	if (a == nil) != (b == nil) {
		return fmt.Sprintf("%s: %v vs %v", at, a, b)
	}
	if a == nil {
		return ""
	}
	if a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value || a.Anchor != b.Anchor ||
		a.HeadComment != b.HeadComment || a.LineComment != b.LineComment || a.FootComment != b.FootComment ||
		a.Line != b.Line || a.Column != b.Column || len(a.Content) != len(b.Content) {
		return fmt.Sprintf("%s: %+v\nvs %+v", at, *a, *b)
	}
	for i := range a.Content {
		if d := nodeDiff(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", at, i)); d != "" {
			return d
		}
	}
	return ""
}

// TestSplitResourceListForms: a list in a form whose items might not
// parse alone as they do in the list is not split (or its batch does not
// parse), so that the caller parses it whole; forms that do split give
// the whole parse's items.
func TestSplitResourceListForms(t *testing.T) {
	const head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	pod := func(name string) string {
		return "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " + name + "\n"
	}
	for _, tc := range []struct {
		name, list string
		split      bool // SplitResourceList accepts it
		parses     bool // and every batch of one item parses
	}{
		{name: "block at column 0", list: head + "items:\n" + pod("a") + pod("b"), split: true, parses: true},
		{name: "block at column 2", list: head + "items:\n  - apiVersion: v1\n    kind: Pod\n    metadata: {name: a}\n  - {apiVersion: v1, kind: Pod, metadata: {name: b}}\n", split: true, parses: true},
		{name: "functionConfig after", list: head + "items:\n" + pod("a") + "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data: {mode: migrate}\n", split: true, parses: true},
		{name: "functionConfig before", list: head + "functionConfig: {apiVersion: v1, kind: ConfigMap}\nitems: # the items\n" + pod("a"), split: true, parses: true},
		{name: "document markers", list: "---\n" + head + "items:\n" + pod("a") + "...\n", split: true, parses: true},
		{name: "comment inside an item", list: head + "items:\n- apiVersion: v1\n  # the kind\n  kind: Pod\n  metadata: {name: a}\n" + pod("b"), split: true, parses: true},
		{name: "blank lines between items", list: head + "items:\n\n" + pod("a") + "\n\n" + pod("b") + "\n", split: true, parses: true},
		{name: "anchor without alias", list: head + "items:\n- apiVersion: v1\n  kind: Pod\n  metadata: &m {name: a}\n", split: true, parses: true},
		{name: "block scalar", list: head + "items:\n- apiVersion: v1\n  kind: ConfigMap\n  data:\n    run.sh: |\n      # not a comment\n      echo hi\n" + pod("b"), split: true, parses: true},
		{name: "malformed item", list: head + "items:\n- just a string\n" + pod("b") + "- kind: Pod\n", split: true, parses: true},

		{name: "flow items", list: head + "items: [{apiVersion: v1, kind: Pod}]\n"},
		{name: "no items", list: head},
		{name: "empty items", list: head + "items:\n"},
		{name: "comment before the first item", list: head + "items:\n# pods\n" + pod("a")},
		{name: "comment between items", list: head + "items:\n" + pod("a") + "# next\n" + pod("b")},
		{name: "indented comment ending an item", list: head + "items:\n" + pod("a") + "  # end of a\n" + pod("b")},
		{name: "comment after the last item", list: head + "items:\n" + pod("a") + "# end\nfunctionConfig: {}\n"},
		{name: "comment after a tab after the last item", list: head + "items:\n" + pod("a") + "\t# end\nfunctionConfig: {}\n"},
		{name: "comment after a tab between items", list: head + "items:\n" + pod("a") + "  \t# next\n" + pod("b")},
		{name: "two items keys", list: head + "items:\n" + pod("a") + "\"items\": []\n"},
		{name: "items quoted", list: head + "\"items\":\n" + pod("a")},
		{name: "items tagged", list: head + "items: !!seq\n" + pod("a")},
		{name: "tab after the dash", list: head + "items:\n-\tapiVersion: v1\n"},
		{name: "lone CR", list: head + "items:\n" + pod("a") + "- apiVersion: v1\r  kind: Pod\n"},
		{name: "a second document", list: head + "items:\n" + pod("a") + "---\nkind: X\n"},
		{name: "items in a multi-line string", list: "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nnote: \"a\nitems:\n- b\"\n"},
		{name: "more indented key after the items", list: head + "items:\n  - {apiVersion: v1, kind: Pod}\n functionConfig: {}\n"},

		{name: "alias across items", list: head + "items:\n- apiVersion: v1\n  kind: Pod\n  metadata: &m {name: a}\n- apiVersion: v1\n  kind: Pod\n  metadata: *m\n", split: true},
		{name: "alias within an item", list: head + "items:\n- apiVersion: v1\n  kind: Pod\n  metadata: &m {name: a}\n  x: *m\n", split: true},
		{name: "quoted string across items", list: head + "items:\n- apiVersion: v1\n  kind: Pod\n  x: \"a\n- b\"\n", split: true},
		{name: "flow mapping across items", list: head + "items:\n- {apiVersion: v1,\n- kind: Pod}\n", split: true},
		{name: "entry on the next line", list: head + "items:\n-\n  apiVersion: v1\n  kind: Pod\n", split: true, parses: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			list, ok := SplitResourceList([]byte(tc.list))
			if ok != tc.split {
				t.Fatalf("split %v, want %v", ok, tc.split)
			}
			if !ok {
				return
			}
			whole, werr := ParseResourceList([]byte(tc.list))
			parses := true
			for i := range list.Len() {
				if _, err := list.Parse(i, i+1); err != nil {
					parses = false
				}
			}
			if parses != tc.parses {
				t.Fatalf("batches parse: %v, want %v", parses, tc.parses)
			}
			if !parses {
				return
			}
			if werr != nil {
				t.Fatalf("the list splits and parses, the whole does not: %v", werr)
			}
			if err := sameItems(whole, list, 1); err != nil {
				t.Fatal(err)
			}
			if d := nodeDiff(whole.FunctionConfig.YNode(), list.FunctionConfig.YNode(), "functionConfig"); d != "" {
				t.Fatal(d)
			}
		})
	}
}

// TestSplitResourceListComments: comment lines anywhere (any indent, a
// tab before the #, before and after blank lines, in block scalars) never make a batch's
// items differ from the whole parse's: the list is split and parsed as
// the whole is, or not split at all. yaml.v3 gives a comment line
// between two items to either of them, depending on blank lines and
// indents.
func TestSplitResourceListComments(t *testing.T) {
	const items = "items:\n" +
		"- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n    labels: {x: y}\n  spec:\n    containers:\n    - name: c\n      args:\n      - run\n    data: |\n      text\n" +
		"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  data:\n    k: v\n" +
		"- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: c\n"
	const fc = "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data:\n    mode: check\n"
	const head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n"
	shapes := [][]string{strings.SplitAfter(head+items+fc, "\n"), strings.SplitAfter(head+fc+items, "\n")}
	r := rand.New(rand.NewPCG(29, 1))
	split, tried := [2]int{}, 0
	for n := range 8000 {
		lines := shapes[n%2]
		var b strings.Builder
		for i, l := range lines {
			b.WriteString(l)
			if i < 2 || r.IntN(4) != 0 {
				continue
			}
			if r.IntN(3) == 0 {
				b.WriteString("\n")
			}
			tab := ""
			if r.IntN(4) == 0 {
				tab = "\t"
			}
			fmt.Fprintf(&b, "%s%s# c%d\n", strings.Repeat(" ", r.IntN(8)), tab, i)
		}
		data := []byte(b.String())
		whole, err := ParseResourceList(data)
		if err != nil {
			continue // the comment ended a block scalar or broke the list
		}
		tried++

		text, ok := SplitResourceList(data)
		if !ok {
			continue
		}
		if _, err := text.Parse(0, text.Len()); err != nil {
			continue
		}
		split[n%2]++
		for _, size := range []int{1, 2} {
			if err := sameItems(whole, text, size); err != nil {
				t.Fatalf("batches of %d: %v\n%s", size, err, data)
			}
		}
		if d := nodeDiff(whole.FunctionConfig.YNode(), text.FunctionConfig.YNode(), "functionConfig"); d != "" {
			t.Fatalf("%s\n%s", d, data)
		}
	}
	t.Logf("%d of %d lists split (functionConfig after the items, before)", split, tried)
	if split[0] < 100 || split[1] < 100 {
		t.Fatalf("only %d lists split", split)
	}
}
