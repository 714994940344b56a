package action

import (
	"context"
	"fmt"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/rules"
)

// BundleOptions steer Bundle.
type BundleOptions struct {
	// Source is the cluster the bundle is tailored to; nil means none:
	// the catalogue's well-known plugin DaemonSets stand in, and PLAN.md
	// says so.
	Source *ClusterSource
	// Driver is the catalogue name of the DRA driver (bundle.Catalogue).
	Driver string
	// Pools are the values of PoolLabel to move, in order; empty means
	// every pool with nodes of the driver's family.
	Pools     []string
	PoolLabel string
	Target    rules.Version
	Strategy  bundle.Strategy
	// Out is the folder as the user named it: PLAN.md's commands use it.
	// Bundle writes nothing; bundle.Write stores the Result's Tree.
	Out string
}

// Bundle generates the cutover kit of opts.Driver. It reads only what
// bundle needs of the cluster (bundle.Scope), once. An unknown driver is a
// *bundle.UnknownDriverError, an unsafe bundle an *inventory.DiagnosticsError.
func Bundle(ctx context.Context, opts BundleOptions) (*bundle.Result, error) {
	d, err := bundle.Lookup(opts.Driver)
	if err != nil {
		return nil, err
	}
	var facts *bundle.Facts
	if opts.Source != nil {
		if facts, err = bundleFacts(ctx, *opts.Source); err != nil {
			return nil, err
		}
	}
	return bundle.Generate(bundle.Options{
		Driver: d, Pools: opts.Pools, PoolLabel: opts.PoolLabel, Target: opts.Target,
		Strategy: opts.Strategy, Facts: facts, Out: opts.Out,
	})
}

// BundleVerify checks the bundle in dir against the cluster of src: no
// node, as labelled now, for DRA or without the label, may run a device
// plugin and the DRA driver of the bundle's family at once.
func BundleVerify(ctx context.Context, dir string, src ClusterSource) (*bundle.Report, error) {
	m, err := bundle.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	d, err := bundle.Lookup(m.Driver)
	if err != nil {
		return nil, err
	}
	facts, err := bundleFacts(ctx, src)
	if err != nil {
		return nil, err
	}
	return bundle.Verify(m, d, facts), nil
}

// bundleFacts reads src in bundle's scope.
func bundleFacts(ctx context.Context, src ClusterSource) (*bundle.Facts, error) {
	src.Scope = bundle.Scope
	f, err := ReadCluster(ctx, src)
	if err != nil {
		if src.Dump == "" {
			err = fmt.Errorf("reading the cluster: %w", err)
		}
		return nil, err
	}
	return bundle.NewFacts(f, src.String())
}
