package bundle

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory/cluster"
)

// ReadManifest reads kubedra-bundle.yaml from a bundle folder.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("reading bundle %s: %w", dir, err)
	}
	var m Manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, ManifestFile), err)
	}
	if m.Kind != "Bundle" || m.Family == "" {
		return nil, fmt.Errorf("%s is not a kubedra bundle description", filepath.Join(dir, ManifestFile))
	}
	return &m, nil
}

// State names the node label state a conflict was found in.
type State string

// States Verify evaluates every node in.
const (
	// StateNow: the node's labels as they are.
	StateNow State = "now"
	// StateDRA: the node labelled for DRA (the bundle's node labels added).
	StateDRA State = "labelled"
	// StatePlugin: the node without the bundle's labels (after a rollback).
	StatePlugin State = "unlabelled"
)

// Conflict is a node where a device plugin and the DRA driver of one family
// could both run.
type Conflict struct {
	Node   string `json:"node"`
	State  State  `json:"state"`
	Plugin string `json:"plugin"`
	Driver string `json:"driver"`
}

// Placement says what can run on one node as it is labelled now.
type Placement struct {
	Node    string   `json:"node"`
	DRA     bool     `json:"dra"`
	Plugins []string `json:"plugins,omitempty"`
	Drivers []string `json:"drivers,omitempty"`
}

// Report is Verify's answer.
type Report struct {
	Family     string      `json:"family"`
	Conflicts  []Conflict  `json:"conflicts"`
	Placements []Placement `json:"placements"`
	// DriverFromBundle is true when no driver DaemonSet was found and the
	// bundle's node selector stood in for it.
	DriverFromBundle bool `json:"driverFromBundle"`
	// Unserved are nodes labelled for DRA where no driver DaemonSet can run
	// (e.g. an untolerated taint): not a conflict, but their devices are
	// served by nothing.
	Unserved []string `json:"unserved,omitempty"`
	// Notes say what Verify could not check.
	Notes []string `json:"notes,omitempty"`
}

type daemon struct {
	id        string
	placement cluster.Placement
}

// Verify checks the invariant for the bundle m of driver d on the nodes and
// DaemonSets in f: in each of the three label states of every node, no
// device-plugin DaemonSet of the family and no driver DaemonSet can both run.
// When the driver is not installed yet, a pod that selects the bundle's
// DriverNodeSelector and tolerates every taint stands in for it.
func Verify(m *Manifest, d Driver, f *Facts) *Report {
	r := &Report{Family: m.Family}
	var plugins, drivers []daemon
	listed := map[string]bool{}
	for _, p := range m.Plugins {
		listed[p.Namespace+"/"+p.Name] = true
	}
	for i := range f.DaemonSets {
		ds := &f.DaemonSets[i]
		id := ds.Namespace + "/" + ds.Name
		switch {
		case isDriver(m, d, ds) || f.detected(ds, d.Family, cluster.DRADriver):
			drivers = append(drivers, daemon{id, cluster.PlacementOf(&ds.Spec.Template.Spec)})
		case listed[id]:
			plugins = append(plugins, daemon{id, cluster.PlacementOf(&ds.Spec.Template.Spec)})
		default:
			if _, ok := f.isPlugin(d, ds); ok {
				plugins = append(plugins, daemon{id, cluster.PlacementOf(&ds.Spec.Template.Spec)})
			}
		}
	}
	if len(drivers) == 0 {
		r.DriverFromBundle = true
		// Before install the driver's real tolerations are unknown: assume
		// the worst, one that tolerates every taint, so no conflict hides.
		drivers = append(drivers, daemon{"(bundle) " + m.DriverDaemonSet.Namespace + "/" + m.DriverDaemonSet.Name,
			cluster.Placement{NodeSelector: m.DriverNodeSelector, Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}}})
		r.Notes = append(r.Notes, "driver not installed: a pod with the bundle's node selector that tolerates every taint stands in for it")
	}
	if len(plugins) == 0 {
		r.Notes = append(r.Notes, "no device-plugin DaemonSet of the family found")
	}
	for i := range f.Nodes {
		node := &f.Nodes[i]
		pl := Placement{Node: node.Name, DRA: node.Labels[ModeLabel] == ModeDRA}
		for _, st := range []State{StateNow, StateDRA, StatePlugin} {
			n := relabel(node, m, st)
			var ps, ds []string
			for _, p := range plugins {
				if ok, _ := cluster.DaemonSetCanSchedule(p.placement, n); ok {
					ps = append(ps, p.id)
				}
			}
			for _, dr := range drivers {
				if ok, _ := cluster.DaemonSetCanSchedule(dr.placement, n); ok {
					ds = append(ds, dr.id)
				}
			}
			if st == StateNow {
				pl.Plugins, pl.Drivers = ps, ds
				if pl.DRA && len(ds) == 0 {
					r.Unserved = append(r.Unserved, node.Name)
				}
			}
			for _, p := range ps {
				for _, dr := range ds {
					r.Conflicts = append(r.Conflicts, Conflict{Node: node.Name, State: st, Plugin: p, Driver: dr})
				}
			}
		}
		r.Placements = append(r.Placements, pl)
	}
	sort.SliceStable(r.Conflicts, func(i, j int) bool { return r.Conflicts[i].Node < r.Conflicts[j].Node })
	return r
}

func isDriver(m *Manifest, d Driver, ds *appsv1.DaemonSet) bool {
	return matchWorkload(m.DriverDaemonSet, ds) || matchWorkload(d.KubeletPlugin, ds)
}

// relabel returns node as it would be labelled in state st.
func relabel(node *corev1.Node, m *Manifest, st State) *corev1.Node {
	if st == StateNow {
		return node
	}
	n := node.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	for _, k := range slices.Sorted(maps.Keys(m.NodeLabels)) {
		if st == StateDRA {
			n.Labels[k] = m.NodeLabels[k]
		} else {
			delete(n.Labels, k)
		}
	}
	return n
}
