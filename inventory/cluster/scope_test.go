package cluster_test

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/cluster/clustertest"
)

var nodesAndDaemonSets = cluster.Scope{Resources: []string{"nodes", "daemonsets.apps", "resourcequotas"}, Objects: true}

// A scoped read lists only its resource types, skips discovery when no
// DRA type is in scope, keeps whole objects, and its dump reads back the
// same.
func TestReaderScope(t *testing.T) {
	fakes, err := clustertest.Load(mixed)
	if err != nil {
		t.Fatal(err)
	}
	var dump bytes.Buffer
	r := fakes.Reader()
	r.Scope, r.Dump = nodesAndDaemonSets, &dump
	live, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, a := range append(fakes.Client.Actions(), fakes.Dynamic.Actions()...) {
		listed = append(listed, a.GetVerb()+" "+a.GetResource().Resource)
	}
	slices.Sort(listed)
	if d := cmp.Diff([]string{"get version", "list daemonsets", "list nodes", "list resourcequotas"}, listed); d != "" {
		t.Errorf("API calls (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"daemonsets.apps", "nodes", "resourcequotas"}, live.Read); d != "" {
		t.Errorf("Read (-want +got):\n%s", d)
	}
	if len(live.Problems) != 0 || live.PluginPods != nil || live.Workloads != nil || live.Slices != nil {
		t.Errorf("out-of-scope facts: problems %v, %d plugin pods, %d workloads", live.Problems, len(live.PluginPods), len(live.Workloads))
	}
	o := live.Objects
	if o == nil || len(o.Nodes) != 5 || len(o.Quotas) != 3 {
		t.Fatalf("objects: %v", o)
	}
	want := []string{"dra-driver-nvidia-gpu/dra-driver-nvidia-gpu-kubelet-plugin", "kube-system/ebs-csi-node", "kube-system/nvidia-device-plugin-daemonset"}
	if d := cmp.Diff(want, daemonSetNames(o)); d != "" {
		t.Errorf("whole DaemonSets, recognised or not (-want +got):\n%s", d)
	}
	if len(live.DaemonSets) != 2 {
		t.Errorf("summaries keep only plugins and drivers: %d", len(live.DaemonSets))
	}
	if strings.Contains(dump.String(), "kind: Pod\n") {
		t.Error("the dump of a scoped read holds pods")
	}

	for name, in := range map[string]*bytes.Buffer{"own dump": &dump, "fixture": readFile(t, mixed)} {
		got, err := cluster.ReadDump(in, nodesAndDaemonSets)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(clustertest.JSON(t, live), clustertest.JSON(t, got)); d != "" {
			t.Errorf("%s: facts (-live +dump):\n%s", name, d)
		}
		if d := cmp.Diff(daemonSetNames(o), daemonSetNames(got.Objects)); d != "" {
			t.Errorf("%s: DaemonSets (-live +dump):\n%s", name, d)
		}
	}

	if _, err := cluster.ReadDump(strings.NewReader(""), cluster.Scope{Resources: []string{"daemonsets"}}); err == nil ||
		!strings.Contains(err.Error(), `unknown resource type "daemonsets"`) {
		t.Errorf("unknown resource type: %v", err)
	}
}

// The zero Scope keeps no objects: audit never holds whole nodes.
func TestNoObjectsByDefault(t *testing.T) {
	if f := readDumpFile(t, mixed); f.Objects != nil {
		t.Errorf("objects kept without Scope.Objects: %d nodes", len(f.Objects.Nodes))
	}
}

func daemonSetNames(o *cluster.Objects) []string {
	if o == nil {
		return nil
	}
	var out []string
	for _, ds := range o.DaemonSets {
		out = append(out, ds.Namespace+"/"+ds.Name)
	}
	slices.Sort(out)
	return out
}

func readFile(t *testing.T, path string) *bytes.Buffer {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewBuffer(b)
}
