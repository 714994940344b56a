package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// A dump's v1 ResourceSlices are kept by node (those without one are left
// out) and its v1 DeviceClasses as they are; an object that does not
// decode is a BadObject at its line; other versions and kinds are skipped.
func TestReadDumpDevices(t *testing.T) {
	dir := t.TempDir()
	dump := strings.Join([]string{
		"apiVersion: v1\nkind: Node\nmetadata: {name: n}\n",
		"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec: {driver: gpu.nvidia.com, nodeName: n, pool: {name: n}}\n",
		"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: shared}\nspec: {driver: dra.net, allNodes: true, pool: {name: p}}\n",
		"apiVersion: resource.k8s.io/v1beta1\nkind: ResourceSlice\nmetadata: {name: old}\nspec: {driver: gpu.nvidia.com, nodeName: n}\n",
		"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: broken}\nspec: {devices: nope}\n",
		"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec: {selectors: [{cel: {expression: 'true'}}]}\n",
		"apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: brokenclass}\nspec: {selectors: 7}\n",
	}, "---\n")
	if err := os.WriteFile(filepath.Join(dir, "dump.yaml"), []byte(dump), 0o644); err != nil {
		t.Fatal(err)
	}
	got := cluster.ReadDumpDevices(context.Background(), "dump.yaml", dir)
	slices := map[string][]string{}
	for node, l := range got.Slices {
		for _, s := range l {
			slices[node] = append(slices[node], s.Name)
		}
	}
	if d := cmp.Diff(map[string][]string{"n": {"s"}}, slices); d != "" {
		t.Errorf("slices (-want +got):\n%s", d)
	}
	if len(got.Classes) != 1 || got.Classes[0].Name != "c" {
		t.Errorf("classes %+v", got.Classes)
	}
	bad := map[string]int{}
	for _, b := range got.Bad {
		bad[b.Doc.Node.GetName()] = b.Doc.Origin.Line
		if b.Err == nil {
			t.Errorf("%s: no error", b.Doc.Node.GetName())
		}
	}
	if d := cmp.Diff(map[string]int{"broken": 20, "brokenclass": 30}, bad); d != "" {
		t.Errorf("bad objects at lines (-want +got):\n%s", d)
	}
}
