package action

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/bundle"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/inventory/files"
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

// RuleSimulateCordoned is the rule id of a cordoned node simulate places
// pods on anyway.
const RuleSimulateCordoned = "simulate/cordoned"

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

	before, err := readDocuments(ctx, in, res, chartOptions{target: opts.Target, set: set, dopts: dopts, render: true})
	if err != nil {
		return nil, err
	}
	var after []*inventory.Document
	if opts.After != nil {
		if after, err = readDocuments(ctx, Input{Paths: opts.After, Dir: in.Dir, Charts: in.Charts}, res, chartOptions{target: opts.Target, set: set, dopts: dopts, render: true}); err != nil {
			return nil, err
		}
	} else {
		popts := opts.Plan
		popts.Target = opts.Target
		m, err := Migrate(ctx, Input{Documents: before}, MigrateOptions{Rules: set, Plan: popts})
		if err != nil {
			return nil, fmt.Errorf("migrating in memory: %w", err)
		}
		for i, n := range m.Documents {
			after = append(after, &inventory.Document{Node: n, Origin: inventory.Origin{Path: "(migrated)", Index: i, ListIndex: -1}})
		}
	}
	bm, am := simulate.Collect(before, dopts), simulate.Collect(after, dopts)
	res.Diagnostics = append(append(res.Diagnostics, bm.Diagnostics...), am.Diagnostics...)
	catalogue, err := catalogueClasses()
	if err != nil {
		return nil, err
	}
	var bw, aw *simulate.World
	if opts.Nodes != "" {
		inv, err := readInventory(in.Dir, opts.Nodes)
		if err != nil {
			return nil, err
		}
		bw, aw = simulate.Worlds(inv, opts.Target, classes(catalogue, bm.Classes), classes(catalogue, am.Classes))
	} else {
		if bw, aw, err = clusterWorlds(ctx, opts.Cluster, opts.Target, catalogue, bm, am, res); err != nil {
			return nil, err
		}
	}
	r, err := simulate.Run(ctx, bw, aw, bm, am)
	if err != nil {
		return nil, err
	}
	res.Result, res.Before, res.After = r, bw, aw
	return res, nil
}

// bad records that the object of d, in the dump src, could not be decoded.
func (r *SimulateResult) bad(src string, d *inventory.Document, err error) {
	r.Diagnostics = append(r.Diagnostics, inventory.Diagnostic{Severity: inventory.Error, Rule: simulate.RuleBadInput, File: src, Line: d.Origin.Line,
		Object: objectOf(d.Node), Message: err.Error()})
}

// readDocuments reads every document of in (the charts among its folders
// rendered); what cannot be read is a diagnostic.
func readDocuments(ctx context.Context, in Input, res *SimulateResult, copts chartOptions) ([]*inventory.Document, error) {
	if in.Documents != nil {
		return in.Documents, nil
	}
	var docs []*inventory.Document
	runs := in.charts(ctx, copts)
	for _, cr := range runs {
		for _, d := range cr.Diagnostics {
			if d.Severity == inventory.Error {
				res.Diagnostics = append(res.Diagnostics, d)
			}
		}
		if cr.Rendered != nil {
			docs = append(docs, cr.Rendered.Docs...)
		}
	}
	err := files.Read(ctx, in.Paths, in.Stdin, files.Options{Dir: in.Dir, Ordered: true, Skip: owned(runs)}, func(f *files.File) error {
		for _, d := range f.Diagnostics {
			if d.Severity == inventory.Error {
				d.File = in.name(d.File)
				res.Diagnostics = append(res.Diagnostics, d)
			}
		}
		for _, d := range f.Docs {
			d.Origin.Path = in.name(d.Origin.Path)
		}
		docs = append(docs, f.Docs...)
		return nil
	})
	return docs, err
}

func readInventory(dir, path string) (*simulate.Inventory, error) {
	data, err := os.ReadFile(inventory.Resolve(dir, path))
	if err != nil {
		return nil, fmt.Errorf("reading node inventory: %w", err)
	}
	return simulate.ParseInventory(path, data)
}

// catalogueClasses are the DeviceClasses the drivers of the bundle
// catalogue install.
func catalogueClasses() ([]*resourceapi.DeviceClass, error) {
	drivers, err := bundle.Catalogue()
	if err != nil {
		return nil, err
	}
	var out []*resourceapi.DeviceClass
	for _, d := range drivers {
		for _, c := range d.DeviceClasses {
			dc := &resourceapi.DeviceClass{}
			dc.Name = c.Name
			dc.Spec.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: c.Selector}}}
			if c.ExtendedResourceName != "" {
				dc.Spec.ExtendedResourceName = &c.ExtendedResourceName
			}
			out = append(out, dc)
		}
	}
	// Reference drivers the bundle does not install yet; their charts
	// create these classes (shared/reference/dra.md §5.7).
	tpu := &resourceapi.DeviceClass{}
	tpu.Name = "tpu.google.com"
	tpu.Spec.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "tpu.google.com"`}}}
	return append(out, tpu), nil
}

// classes are the catalogue's classes, replaced or joined by those of the
// manifests.
func classes(catalogue, manifests []*resourceapi.DeviceClass) []*resourceapi.DeviceClass {
	byName := map[string]*resourceapi.DeviceClass{}
	for _, c := range catalogue {
		byName[c.Name] = c
	}
	for _, c := range manifests {
		byName[c.Name] = c
	}
	out := make([]*resourceapi.DeviceClass, 0, len(byName))
	for _, c := range byName {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// clusterWorlds builds the worlds from a cluster (or a dump): before is
// the nodes as they are; after moves every node whose devices a DRA
// driver can publish (its ResourceSlices in the dump, else the built-in
// shape of its instance type) to DRA.
func clusterWorlds(ctx context.Context, src ClusterSource, target rules.Version, catalogue []*resourceapi.DeviceClass, bm, am *simulate.Manifests, res *SimulateResult) (*simulate.World, *simulate.World, error) {
	facts, err := ReadCluster(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	if len(facts.Nodes) == 0 {
		return nil, nil, fmt.Errorf("%s has no nodes to simulate on", src)
	}
	slices, dcs := map[string][]*resourceapi.ResourceSlice{}, []*resourceapi.DeviceClass(nil)
	if src.Dump != "" && src.Dump != "-" {
		slices, dcs = dumpObjects(ctx, src, res)
	}
	cat := classes(catalogue, dcs)
	bw := simulate.NewWorld("before", target, classes(cat, bm.Classes))
	aw := simulate.NewWorld("after", target, classes(cat, am.Classes))
	for _, n := range facts.Nodes {
		alloc := map[string]int64{}
		for r, v := range n.Allocatable {
			if q, err := resource.ParseQuantity(v); err == nil {
				alloc[r] = q.Value()
			}
		}
		pool := n.PoolName()
		spec := simulate.NodeSpec{Name: n.Name, Pool: pool, Shape: n.InstanceType, Labels: n.Labels, Taints: n.Taints, Allocatable: alloc, Mode: simulate.ModePlugin}
		if sl := slices[n.Name]; len(sl) > 0 {
			spec.Mode, spec.Slices = simulate.ModeDRA, sl
		}
		bw.AddNode(spec)
		after := spec
		if after.Mode == simulate.ModePlugin {
			if shape, ok := simulate.LookupShape(n.InstanceType); ok {
				after.Mode = simulate.ModeDRA
				after.Devices = shape.DRAView(simulate.PoolOptions{}).Devices
			}
		}
		if after.Mode == simulate.ModeDRA {
			after.Allocatable = withoutServed(alloc, after)
		}
		aw.AddNode(after)
		if n.Unschedulable {
			res.Diagnostics = append(res.Diagnostics, inventory.Diagnostic{Severity: inventory.Info, Rule: RuleSimulateCordoned,
				Message: fmt.Sprintf("node %s is cordoned; simulate places pods on it anyway", n.Name)})
		}
	}
	return bw, aw, nil
}

// withoutServed drops the extended resources of the device families a
// DRA node's drivers serve: the device plugins are gone there.
func withoutServed(alloc map[string]int64, n simulate.NodeSpec) map[string]int64 {
	families := map[string]bool{}
	for d := range n.Devices {
		families[cluster.FamilyOfDriver(d)] = true
	}
	for _, s := range n.Slices {
		families[cluster.FamilyOfDriver(s.Spec.Driver)] = true
	}
	out := map[string]int64{}
	for r, v := range alloc {
		if f := cluster.FamilyOfResource(r); f == "" || !families[f] {
			out[r] = v
		}
	}
	return out
}

// dumpObjects reads the whole ResourceSlices (by node) and DeviceClasses
// of a dump file, which cluster Facts only count.
func dumpObjects(ctx context.Context, src ClusterSource, res *SimulateResult) (map[string][]*resourceapi.ResourceSlice, []*resourceapi.DeviceClass) {
	slices := map[string][]*resourceapi.ResourceSlice{}
	var dcs []*resourceapi.DeviceClass
	_ = files.Read(ctx, []string{src.Dump}, nil, files.Options{Dir: src.Dir, Ordered: true}, func(f *files.File) error {
		for _, d := range f.Docs {
			if d.Node.GetApiVersion() != "resource.k8s.io/v1" {
				continue
			}
			switch d.Node.GetKind() {
			case "ResourceSlice":
				var s resourceapi.ResourceSlice
				if err := decode(d.Node, &s); err != nil {
					res.bad(src.Dump, d, err)
					continue
				}
				if s.Spec.NodeName != nil {
					slices[*s.Spec.NodeName] = append(slices[*s.Spec.NodeName], &s)
				}
			case "DeviceClass":
				var c resourceapi.DeviceClass
				if err := decode(d.Node, &c); err != nil {
					res.bad(src.Dump, d, err)
					continue
				}
				dcs = append(dcs, &c)
			}
		}
		return nil
	})
	return slices, dcs
}

func decode(n *yaml.RNode, into any) error {
	data, err := n.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
