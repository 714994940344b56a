package rewrite_test

import (
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// changedLines counts the lines of a diff of old and new that are
// removed or added.
func changedLines(old, new []byte) (removed, added []string) {
	for _, l := range strings.Split(string(diff.Diff("a", old, "b", new)), "\n") {
		switch {
		case strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++"):
		case strings.HasPrefix(l, "-"):
			removed = append(removed, l[1:])
		case strings.HasPrefix(l, "+"):
			added = append(added, l[1:])
		}
	}
	return removed, added
}

const podHead = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"

// TestOnlyEditedLinesChange (issue 14 item 5): in a migrated document, only
// the lines the edit needs change: line ends, a BOM, quoting, flow style,
// spacing, multi-line scalars, an end marker, block scalars that look
// like sequences and unchanged lists all stay as they were.
func TestOnlyEditedLinesChange(t *testing.T) {
	t.Parallel()
	gpu := "  - name: c\n    image: x\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
	tests := []struct {
		name, in string
		removed  []string // exactly the lines removed
	}{
		{name: "crlf", in: strings.ReplaceAll(podHead+"  tolerations: [{key: a,operator: Exists}]\n  containers:\n"+gpu, "\n", "\r\n"),
			removed: []string{"      limits:\r", "        nvidia.com/gpu: 1\r"}},
		{name: "bom", in: "\xef\xbb\xbf" + podHead + "  containers:\n" + gpu,
			removed: []string{"      limits:", "        nvidia.com/gpu: 1"}},
		{name: "flow and quoting", in: podHead + "  nodeSelector: {'a': \"b\",c: d}\n  args: [a,b]   \n  containers:\n" + gpu,
			removed: []string{"      limits:", "        nvidia.com/gpu: 1"}},
		{name: "multi-line double-quoted", in: podHead + "  hostname: \"a\n    b\n    c\"\n  containers:\n" + gpu,
			removed: []string{"      limits:", "        nvidia.com/gpu: 1"}},
		// The new resourceClaims go after the last line of the pod spec: the
		// lines between the edit and there keep their layout too.
		{name: "multi-line flow after the edit", in: podHead + "  containers:\n" + gpu + "  - name: side\n    command: [\n      \"sh\", \"-c\"\n    ]\n" +
			"  tolerations: [{key: a,\n                 operator: Exists}]   # kept\n",
			removed: []string{"      limits:", "        nvidia.com/gpu: 1"}},
		{name: "multi-line flow before a foot comment", in: podHead + "  containers:\n" + gpu + "  args: [a,\n    b]\n# foot\n",
			removed: []string{"      limits:", "        nvidia.com/gpu: 1"}},
		{name: "end marker", in: podHead + "  containers:\n" + gpu + "...\n",
			removed: []string{"      limits:", "        nvidia.com/gpu: 1"}},
		{name: "block scalar with dashes", in: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  env: |\n    pip:\n    - torch\n    - ray\n---\n" +
			podHead + "  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n  containers:\n" + gpu,
			removed: []string{"      limits:", "        nvidia.com/gpu: 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, "pod.yaml", []byte(tt.in), plan.Options{})
			if r.failed {
				t.Fatalf("failed: %s", diagnostics(r.res))
			}
			removed, added := changedLines([]byte(tt.in), r.out)
			if strings.Join(removed, "\n") != strings.Join(tt.removed, "\n") {
				t.Errorf("removed lines:\n%s\nwant:\n%s\noutput:\n%s", strings.Join(removed, "\n"), strings.Join(tt.removed, "\n"), r.out)
			}
			if len(added) == 0 || len(added) > 30 {
				t.Errorf("%d lines added:\n%s", len(added), r.out)
			}
			if strings.Contains(tt.name, "crlf") {
				for _, l := range added {
					if !strings.HasSuffix(l, "\r") {
						t.Errorf("an LF line in a CRLF file: %q", l)
					}
				}
			}
			if strings.HasPrefix(tt.in, "\xef\xbb\xbf") && !strings.HasPrefix(string(r.out), "\xef\xbb\xbf") {
				t.Error("the BOM was dropped")
			}
		})
	}
}

// TestCommentsMove (issue 14 item 4): comments of removed lines move to
// the claims entry (a request's) or to the claim template's request (a
// node label's); a foot comment stays at the document's end.
func TestCommentsMove(t *testing.T) {
	t.Parallel()
	in := podHead + "  nodeSelector:\n    # the model\n    nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB  # A100 only\n  containers:\n  - name: c\n    image: x\n    resources:\n      limits:\n" +
		"        # one GPU per replica, do not raise without a capacity review\n        nvidia.com/gpu: 1  # per replica\n# [END gke_pod_gpu]\n"
	r := run(t, "pod.yaml", []byte(in), plan.Options{})
	if r.failed {
		t.Fatalf("failed: %s", diagnostics(r.res))
	}
	out := string(r.out)
	for _, want := range []string{
		"    resources:\n      claims:\n      # one GPU per replica, do not raise without a capacity review\n      # per replica\n      - name: gpu\n",
		"# [END gke_pod_gpu]\n---\n",
		"      requests:\n      # the model\n      # A100 only\n      - name: gpu\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no\n%s\nin\n%s", want, out)
		}
	}
	for _, c := range []string{"# the model", "# A100 only", "# one GPU per replica", "# per replica", "# [END gke_pod_gpu]"} {
		if n := strings.Count(out, c); n != 1 {
			t.Errorf("%q %d times in\n%s", c, n, out)
		}
	}
}

// TestFlowDocumentBytes (issue 28 item 3): a document written in flow
// style (`{apiVersion: v1, kind: Pod, ...}`, YAML that is not JSON) keeps
// every byte the edit does not need: its quoting, its spacing and its line
// breaks. JSON stays JSON.
func TestFlowDocumentBytes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string // want: the migrated document, before its new objects
	}{
		{name: "one line",
			in:   `{apiVersion: v1, kind: Pod, metadata: {name: 'fl', labels: {"a": b}}, spec: {containers: [{name: c, image: "x:1", resources: {limits: {nvidia.com/gpu: 1}}}]}}` + "\n",
			want: `{apiVersion: v1, kind: Pod, metadata: {name: 'fl', labels: {"a": b}}, spec: {containers: [{name: c, image: "x:1", resources: {claims: [{name: gpu}]}}], resourceClaims: [{name: gpu, resourceClaimTemplateName: fl-gpu}]}}` + "\n"},
		{name: "one line, the request beside a cpu limit",
			in:   `{apiVersion: v1, kind: Pod, metadata: {name: fl}, spec: {containers: [{name: c, resources: {limits: {cpu: "1", nvidia.com/gpu: 1}}}]}}` + "\n",
			want: `{apiVersion: v1, kind: Pod, metadata: {name: fl}, spec: {containers: [{name: c, resources: {limits: {cpu: "1"}, claims: [{name: gpu}]}}], resourceClaims: [{name: gpu, resourceClaimTemplateName: fl-gpu}]}}` + "\n"},
		{name: "several lines",
			in:   "{apiVersion: v1, kind: Pod,\n  metadata: {name: 'fl'},   # the pod\n  spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}\n",
			want: "{apiVersion: v1, kind: Pod,\n  metadata: {name: 'fl'},   # the pod\n  spec: {containers: [{name: c, resources: {claims: [{name: gpu}]}}], resourceClaims: [{name: gpu, resourceClaimTemplateName: fl-gpu}]}}\n"},
		{name: "a BOM and CRLF",
			in:   "\xef\xbb\xbf{apiVersion: v1, kind: Pod,\r\n  metadata: {name: fl}, spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}\r\n",
			want: "\xef\xbb\xbf{apiVersion: v1, kind: Pod,\r\n  metadata: {name: fl}, spec: {containers: [{name: c, resources: {claims: [{name: gpu}]}}], resourceClaims: [{name: gpu, resourceClaimTemplateName: fl-gpu}]}}\r\n"},
		{name: "json stays json",
			in:   `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fl"}, "spec": {"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}` + "\n",
			want: `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fl"}, "spec": {"containers": [{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}], "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "fl-gpu"}]}}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, "pod.yaml", []byte(tt.in), plan.Options{})
			if r.failed {
				t.Fatalf("failed: %s", diagnostics(r.res))
			}
			doc, _, _ := strings.Cut(string(r.out), "---")
			if doc != tt.want {
				t.Errorf("got\n%s\nwant\n%s", doc, tt.want)
			}
		})
	}
}

// TestMovedCommentsInOrder (issue 28): comments that move to a new entry
// keep the order they had in the text, the removed map's own comment
// before its entries'.
func TestMovedCommentsInOrder(t *testing.T) {
	t.Parallel()
	in := podHead + "  containers:\n  - name: c\n    image: x\n    resources:\n      # one\n      limits:\n        # two\n        nvidia.com/gpu: 2 # three\n" +
		"        # four\n        vpc.amazonaws.com/efa: 1 # five\n"
	r := run(t, "pod.yaml", []byte(in), plan.Options{})
	if r.failed {
		t.Fatalf("failed: %s", diagnostics(r.res))
	}
	if want := "      # one\n      # two\n      # three\n      # four\n      # five\n"; !strings.Contains(string(r.out), want) {
		t.Errorf("no\n%s\nin\n%s", want, r.out)
	}
}
