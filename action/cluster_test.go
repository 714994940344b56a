package action_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/cluster/clustertest"
)

const (
	mixed          = "../testdata/cluster/mixed.yaml"
	exampleCluster = "../bundle/testdata/example-cluster.yaml"
)

// live returns a ClusterSource whose "live" cluster is client-go fakes
// seeded from file, and the fakes, to see what was asked of them.
func live(t *testing.T, file string) (action.ClusterSource, *clustertest.Fakes) {
	t.Helper()
	fakes, err := clustertest.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return action.ClusterSource{NewReader: func(genericclioptions.RESTClientGetter) (*cluster.Reader, error) {
		return fakes.Reader(), nil
	}}, fakes
}

func TestClusterSourceString(t *testing.T) {
	for _, tt := range []struct {
		src  action.ClusterSource
		want string
	}{
		{action.ClusterSource{Dump: "snap.yaml"}, "dump snap.yaml"},
		{action.ClusterSource{Dump: "-"}, "dump -"},
		{action.ClusterSource{}, "cluster"},
		{action.ClusterSource{Context: "prod"}, "cluster (context prod)"},
	} {
		if got := tt.src.String(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.src, got, tt.want)
		}
	}
}

// A live read with DumpTo and progress, a dump file and the same dump on
// stdin all give the same facts.
func TestReadCluster(t *testing.T) {
	src, _ := live(t, mixed)
	var dump bytes.Buffer
	progress := map[string]int{}
	src.DumpTo = &dump
	src.Progress = func(resource string, n int) { progress[resource] = n }
	fromLive, err := action.ReadCluster(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if progress["nodes"] != 5 || progress["pods"] == 0 {
		t.Errorf("progress: %v", progress)
	}
	fromStdin, err := action.ReadCluster(context.Background(), action.ClusterSource{Dump: "-", Stdin: &dump})
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := action.ReadCluster(context.Background(), action.ClusterSource{Dump: mixed})
	if err != nil {
		t.Fatal(err)
	}
	if clustertest.JSON(t, fromLive) != clustertest.JSON(t, fromStdin) || clustertest.JSON(t, fromLive) != clustertest.JSON(t, fromFile) {
		t.Errorf("live, its dump and the fixture differ:\n%s\n---\n%s\n---\n%s", clustertest.JSON(t, fromLive), clustertest.JSON(t, fromStdin), clustertest.JSON(t, fromFile))
	}
}

func TestReadClusterErrors(t *testing.T) {
	unreachable := errors.New("no route to host")
	tests := []struct {
		name string
		src  action.ClusterSource
		want string
	}{
		{"missing dump", action.ClusterSource{Dump: "/nonexistent.yaml"}, "reading dump: open /nonexistent.yaml"},
		{"broken dump", action.ClusterSource{Dump: "-", Stdin: strings.NewReader("a: [")}, "reading dump -: document 1"},
		{"stdin without a reader", action.ClusterSource{Dump: "-"}, "no standard input"},
		{"unreachable", action.ClusterSource{NewReader: func(genericclioptions.RESTClientGetter) (*cluster.Reader, error) {
			return nil, unreachable
		}}, "no route to host"},
		{"bad kubeconfig", action.ClusterSource{Getter: kubeconfig(t, "not: [yaml")}, "loading kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := action.ReadCluster(context.Background(), tt.src)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// kubeconfig returns kubectl's flags for a kubeconfig file holding text.
func kubeconfig(t *testing.T, text string) *genericclioptions.ConfigFlags {
	t.Helper()
	path := t.TempDir() + "/kubeconfig"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	cf := genericclioptions.NewConfigFlags(false)
	cf.KubeConfig = &path
	return cf
}
