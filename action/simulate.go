package action

import (
	"context"
	"fmt"
	"os"
	"slices"

	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
	"github.com/kubedra/kubedra/simulate"
)

// SimulateOptions steer Simulate.
type SimulateOptions struct {
	// After are the migrated manifests (files and folders); nil migrates
	// the input in memory with Rules and Plan, as migrate would.
	After []string
	// Nodes is a NodeInventory file; "" reads the cluster of Cluster.
	Nodes   string
	Cluster ClusterSource
	// Target is the Kubernetes version of the after world: its allocator
	// features and CEL environment; zero means rules.DefaultTarget.
	Target rules.Version
	Rules  *rules.Set
	Plan   plan.Options
}

// SimulateResult is a simulation and the inputs it could not use.
type SimulateResult struct {
	*simulate.Result
	// Before and After are the worlds simulated (simulate --emit-nodes).
	Before, After *simulate.World
	// Diagnostics are inputs that could not be read (file:line); every
	// other input was still simulated.
	Diagnostics inventory.Diagnostics
}

// Failed reports whether an input could not be read (an error among the
// Diagnostics).
func (r *SimulateResult) Failed() bool {
	return slices.ContainsFunc(r.Diagnostics, func(d inventory.Diagnostic) bool { return d.Severity == inventory.Error })
}

// Simulate packs the workloads of in onto the nodes before the move (the
// manifests as given, pools on device plugins) and after it (the migrated
// manifests, pools on DRA), with the scheduler's DRA allocator, and
// compares. It fails only when there are no nodes to simulate on.
func Simulate(ctx context.Context, in Input, opts SimulateOptions) (*SimulateResult, error) {
	if opts.Target == (rules.Version{}) {
		opts.Target = rules.DefaultTarget
	}
	res := &SimulateResult{Diagnostics: inventory.Diagnostics{}}
	set := loadRules(opts.Rules)
	dopts := detect.Options{TemplatePaths: set.TemplatePaths()}
	copts := chartOptions{target: opts.Target, set: set, dopts: dopts, render: true}
	before, err := in.documents(ctx, copts, &res.Diagnostics)
	if err != nil {
		return nil, err
	}
	var after []*inventory.Document
	if opts.After != nil {
		if after, err = (Input{Paths: opts.After, Dir: in.Dir, Charts: in.Charts}).documents(ctx, copts, &res.Diagnostics); err != nil {
			return nil, err
		}
	} else {
		opts.Plan.Target = opts.Target
		m, err := Migrate(ctx, Input{Documents: before}, MigrateOptions{Rules: set, Plan: opts.Plan})
		if err != nil {
			return nil, fmt.Errorf("migrating in memory: %w", err)
		}
		for i, n := range m.Documents {
			after = append(after, &inventory.Document{Node: n, Origin: inventory.Origin{Path: "(migrated)", Index: i, ListIndex: -1}})
		}
	}
	bm, am := simulate.Collect(before, dopts), simulate.Collect(after, dopts)
	res.Diagnostics = append(append(res.Diagnostics, bm.Diagnostics...), am.Diagnostics...)
	catalogue, err := bundle.CatalogueClasses()
	if err != nil {
		return nil, err
	}
	var bw, aw *simulate.World
	if opts.Nodes != "" {
		inv, err := readInventory(in.Dir, opts.Nodes)
		if err != nil {
			return nil, err
		}
		bw, aw = simulate.Worlds(inv, opts.Target, simulate.MergeClasses(catalogue, bm.Classes), simulate.MergeClasses(catalogue, am.Classes))
	} else if bw, aw, err = clusterWorlds(ctx, opts.Cluster, opts.Target, catalogue, bm, am, res); err != nil {
		return nil, err
	}
	r, err := simulate.Run(ctx, bw, aw, bm, am)
	if err != nil {
		return nil, err
	}
	res.Result, res.Before, res.After = r, bw, aw
	return res, nil
}

// readInventory reads and parses the NodeInventory file path.
func readInventory(dir, path string) (*simulate.Inventory, error) {
	data, err := os.ReadFile(inventory.Resolve(dir, path))
	if err != nil {
		return nil, fmt.Errorf("reading node inventory: %w", err)
	}
	return simulate.ParseInventory(path, data)
}

// clusterWorlds builds the worlds from the nodes of a cluster (or a dump)
// with simulate.ClusterWorlds: a dump's DeviceClasses join the catalogue's,
// its ResourceSlices go with their nodes, and its objects that do not
// decode are simulate/bad-input at their line.
func clusterWorlds(ctx context.Context, src ClusterSource, target rules.Version, catalogue []*resourceapi.DeviceClass, bm, am *simulate.Manifests, res *SimulateResult) (*simulate.World, *simulate.World, error) {
	if src.Dump == "" {
		// A live cluster: only what the worlds are made of, whole (its own
		// ResourceSlices and DeviceClasses, not the built-in shapes'),
		// read-only.
		src.Scope = SimulateScope
	}
	facts, err := ReadCluster(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	if len(facts.Nodes) == 0 {
		return nil, nil, fmt.Errorf("%s has no nodes to simulate on", src)
	}
	dump := &cluster.DumpDevices{}
	switch {
	case src.Dump == "" && facts.Objects != nil:
		dump = liveDevices(facts.Objects)
	case src.Dump != "" && src.Dump != "-":
		dump = cluster.ReadDumpDevices(ctx, src.Dump, src.Dir)
	}
	for _, b := range dump.Bad {
		res.Diagnostics = append(res.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: simulate.RuleBadInput, File: src.Dump,
			Line: b.Doc.Origin.Line, Object: objectOf(b.Doc.Node), Message: b.Err.Error()})
	}
	nodes := make([]simulate.ClusterNode, 0, len(facts.Nodes))
	for _, n := range facts.Nodes {
		nodes = append(nodes, simulate.ClusterNode{Name: n.Name, Pool: n.PoolName(), InstanceType: n.InstanceType, Labels: n.Labels, Taints: n.Taints,
			Allocatable: n.AllocatableCounts(), Slices: dump.Slices[n.Name], Unschedulable: n.Unschedulable})
	}
	cat := simulate.MergeClasses(catalogue, dump.Classes)
	bw, aw, diags := simulate.ClusterWorlds(nodes, target, simulate.MergeClasses(cat, bm.Classes), simulate.MergeClasses(cat, am.Classes))
	res.Diagnostics = append(res.Diagnostics, diags...)
	return bw, aw, nil
}

// SimulateScope is what simulate reads of a live cluster: its nodes, and
// its resource.k8s.io/v1 ResourceSlices and DeviceClasses, whole.
var SimulateScope = cluster.Scope{Resources: []string{"nodes", "deviceclasses.resource.k8s.io", "resourceslices.resource.k8s.io"}, Objects: true}

// liveDevices gives a live cluster's ResourceSlices (by node) and
// DeviceClasses as a dump's are given.
func liveDevices(o *cluster.Objects) *cluster.DumpDevices {
	d := &cluster.DumpDevices{Slices: map[string][]*resourceapi.ResourceSlice{}}
	for i := range o.ResourceSlices {
		s := &o.ResourceSlices[i]
		if s.Spec.NodeName != nil {
			d.Slices[*s.Spec.NodeName] = append(d.Slices[*s.Spec.NodeName], s)
		}
	}
	for i := range o.DeviceClasses {
		d.Classes = append(d.Classes, &o.DeviceClasses[i])
	}
	return d
}
