package action

import (
	"context"
	"io"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// ClusterSource is where Audit, Bundle and BundleVerify read a cluster
// from: a dump, or a live cluster reached through kubectl's connection
// flags. Either way inventory/cluster reads it into the same Facts.
type ClusterSource struct {
	// Dump is a dump file (kubedra audit --dump, or kubectl get -o
	// yaml|json output), or "-" for Stdin; "" reads the live cluster.
	Dump  string
	Stdin io.Reader
	// Dir is the folder a relative Dump is read from ("": the process's
	// working folder); String names the dump as given.
	Dir string
	// Getter reaches the live cluster (a genericclioptions.ConfigFlags).
	Getter genericclioptions.RESTClientGetter
	// Context is the kubeconfig context the user named ("" for the
	// current one). Getter applies it; String names the source with it.
	Context string
	// Namespace scopes pods, workloads, quotas and claims; "" = all.
	Namespace string
	// DumpTo, when set, receives every object of a live read as a dump
	// (audit --dump).
	DumpTo io.Writer
	// Progress, when set, is called after each page of a live read with
	// the resource and the number of its objects read so far.
	Progress func(resource string, n int)
	// Scope is what to read; the zero Scope reads every resource type.
	Scope cluster.Scope
	// NewReader connects to Getter; nil means cluster.NewReaderFor.
	// Tests give client-go fakes here (package clustertest).
	NewReader func(genericclioptions.RESTClientGetter) (*cluster.Reader, error)
}

// String names the source as PLAN.md does: "dump FILE", "cluster" or
// "cluster (context NAME)".
func (s ClusterSource) String() string {
	switch {
	case s.Dump != "":
		return "dump " + s.Dump
	case s.Context != "":
		return "cluster (context " + s.Context + ")"
	}
	return "cluster"
}

// ReadCluster reads src into Facts. A live read fails only when the
// cluster cannot be reached (or the dump not written); what cannot be read
// is a Problem in the Facts.
func ReadCluster(ctx context.Context, src ClusterSource) (*cluster.Facts, error) {
	if src.Dump != "" {
		return cluster.ReadDumpFile(src.Dump, src.Dir, src.Stdin, src.Scope)
	}
	newReader := src.NewReader
	if newReader == nil {
		newReader = cluster.NewReaderFor
	}
	r, err := newReader(src.Getter)
	if err != nil {
		return nil, err
	}
	r.Namespace, r.Scope, r.Dump, r.Progress = src.Namespace, src.Scope, src.DumpTo, src.Progress
	return r.Read(ctx)
}
