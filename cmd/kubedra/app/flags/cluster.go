package flags

import (
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/iostreams"
)

// Cluster says where audit, bundle and simulate read a cluster from: a
// dump (--from-dump), or the cluster of kubectl's connection flags.
type Cluster struct {
	FromDump    string
	ConfigFlags *genericclioptions.ConfigFlags
}

// Bind binds --from-dump (fromDump is its help) and every kubectl
// connection flag (--context, --kubeconfig, -n, --as, ...).
func (c *Cluster) Bind(f *pflag.FlagSet, fromDump string) {
	c.ConfigFlags = genericclioptions.NewConfigFlags(true)
	c.ConfigFlags.AddFlags(f)
	f.StringVar(&c.FromDump, "from-dump", "", fromDump)
}

// BindKubeconfig binds --from-dump, and of kubectl's flags only
// --kubeconfig and --context.
func (c *Cluster) BindKubeconfig(f *pflag.FlagSet, fromDump string) {
	c.ConfigFlags = genericclioptions.NewConfigFlags(true)
	f.StringVar(&c.FromDump, "from-dump", "", fromDump)
	f.StringVar(c.ConfigFlags.KubeConfig, "kubeconfig", "", "path to the kubeconfig file")
	f.StringVar(c.ConfigFlags.Context, "context", "", "kubeconfig context to use")
}

// ClusterSource is the cluster the flags name, as action reads it.
func (c *Cluster) ClusterSource(streams iostreams.IOStreams) action.ClusterSource {
	// client-go reads --kubeconfig from the process's working folder.
	if kc := c.ConfigFlags.KubeConfig; kc != nil {
		*kc = streams.Path(*kc)
	}
	return action.ClusterSource{Dump: c.FromDump, Stdin: streams.In, Dir: streams.Dir(), Getter: c.ConfigFlags, Context: *c.ConfigFlags.Context}
}
