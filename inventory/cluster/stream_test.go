package cluster_test

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// A List item that is not an object is an error naming the item, in YAML
// and in JSON, not "not an object: map[string]interface {}".
func TestDumpItemNotObject(t *testing.T) {
	for name, in := range map[string]string{
		"yaml": "apiVersion: v1\nkind: List\nitems: [1, {apiVersion: v1, kind: Node, metadata: {name: n}}]\n",
		"json": `{"apiVersion":"v1","kind":"List","items":[1,{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"}}]}`,
	} {
		_, err := cluster.ReadDump(strings.NewReader(in), cluster.Scope{})
		if err == nil || !strings.Contains(err.Error(), "document 1, items[0]: a number, not an object") {
			t.Errorf("%s: err = %v", name, err)
		}
	}
}

// An object a field of which has the wrong type is an error naming the
// item, the object and the field's path (issue 28), whatever the kind.
func TestDumpDecodeErrorNamesField(t *testing.T) {
	for _, tc := range []struct{ item, want string }{
		{"{apiVersion: v1, kind: Pod, metadata: {name: p, namespace: ml}, spec: {terminationGracePeriodSeconds: '30', containers: [{name: c, image: x}]}}",
			"items[1]: Pod/ml/p: spec.terminationGracePeriodSeconds: a string where int64 is wanted"},
		{"{apiVersion: v1, kind: Node, metadata: {name: n2, labels: {a: [1]}}}",
			"items[1]: Node/n2: metadata.labels: an array where string is wanted"},
	} {
		in := "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n- " + tc.item + "\n"
		_, err := cluster.ReadDump(strings.NewReader(in), cluster.Scope{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}

// The same object twice (two kubectl runs, a List and a file repeating an
// item) is read once; two different copies are an error naming both.
func TestDumpDuplicates(t *testing.T) {
	node := func(rv, gpus string) string {
		return fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","resourceVersion":"%s"},"status":{"allocatable":{"nvidia.com/gpu":"%s"},"conditions":[{"type":"Ready","lastHeartbeatTime":"2026-01-0%sT00:00:00Z"}]}}`, rv, gpus, rv)
	}
	same := `{"apiVersion":"v1","kind":"List","items":[` + node("1", "8") + `]}` + "\n" + node("2", "8")
	f, err := cluster.ReadDump(strings.NewReader(same), cluster.Scope{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 1 {
		t.Errorf("nodes = %d, want 1", len(f.Nodes))
	}
	differ := "---\n" + node("1", "8") + "\n---\n" + node("2", "4") + "\n"
	_, err = cluster.ReadDump(strings.NewReader(differ), cluster.Scope{})
	if err == nil || !strings.Contains(err.Error(), "Node n1 is in the dump twice and the copies differ: document 1 and document 2") {
		t.Errorf("err = %v", err)
	}
}

// podList generates a kubectl -o json List of n padded pods on the fly, so
// the test's input is never in memory whole.
type podList struct {
	n, i int
	buf  []byte
	size int
}

func (p *podList) Read(b []byte) (int, error) {
	for len(p.buf) == 0 {
		switch {
		case p.i == 0:
			p.buf = []byte(`{"apiVersion":"v1","items":[`)
		case p.i <= p.n:
			sep := ","
			if p.i == 1 {
				sep = ""
			}
			p.buf = fmt.Appendf(nil, `%s{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d","namespace":"ns","annotations":{"pad":"%s"}},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"busybox"}]}}`, sep, p.i, strings.Repeat("x", 2000))
		case p.i == p.n+1:
			p.buf = []byte(`],"kind":"List","metadata":{"resourceVersion":""}}`)
		default:
			return 0, io.EOF
		}
		p.i++
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	p.size += n
	return n, nil
}

// A JSON dump is streamed: the heap stays far below the size of a List of
// many pods (decoded whole, it took several times the dump's size).
func TestDumpJSONStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 60 MB dump")
	}
	in := &podList{n: 30000}
	var peak uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	runtime.GC()
	f, err := cluster.ReadDump(in, cluster.Scope{})
	close(done)
	<-stopped
	if err != nil {
		t.Fatal(err)
	}
	if !f.Missing("nodes") || f.Missing("pods") {
		t.Errorf("problems: %+v", f.Problems)
	}
	if peak > uint64(in.size)/2 {
		t.Errorf("heap peaked at %d MB for a %d MB dump: not streamed", peak>>20, in.size>>20)
	}
	t.Logf("heap peak %d MB for a %d MB dump", peak>>20, in.size>>20)
}
