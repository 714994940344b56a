package bundle

import (
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
)

// Facts are what the bundle needs to know about a cluster. A nil *Facts means
// "no cluster known": the bundle falls back to the catalogue's well-known
// plugin DaemonSets and says so in PLAN.md.
type Facts struct {
	// Source describes where the facts came from, e.g. "cluster" or
	// "dump snapshot.yaml"; it is printed in PLAN.md.
	Source     string
	Nodes      []corev1.Node
	DaemonSets []appsv1.DaemonSet
	Quotas     []corev1.ResourceQuota
	// Detected holds what the audit's detection (inventory/cluster) says
	// about DaemonSets, keyed by "namespace/name"; it adds to the
	// catalogue's names, labels and images.
	Detected map[string]Detection
	// Unread are the resource types that could not be read (forbidden,
	// failed), as the cluster read's Problems: a bundle that has not seen
	// the nodes or DaemonSets is unsafe. A kubectl dump's missing types
	// (cluster.RuleNotInDump) are not listed: kubectl does not say whether
	// they were left out or there are none, and the bundle warns when a
	// dump holds no DaemonSets.
	Unread inventory.Diagnostics
}

// Detection is one DaemonSet recognised as device software.
type Detection struct {
	Role   cluster.Role
	Family string
}

// Scope is what Generate and Verify need of a cluster: its nodes,
// DaemonSets and ResourceQuotas, whole (phase 1 patches and rollbacks copy
// the DaemonSets' affinity; any DaemonSet may match the catalogue). Pods,
// workloads and DRA objects are not read.
var Scope = cluster.Scope{Resources: []string{"nodes", "daemonsets.apps", "resourcequotas"}, Objects: true}

// NewFacts takes the bundle's facts from cluster facts read with Scope;
// source says where they came from in PLAN.md ("cluster", "dump FILE").
func NewFacts(f *cluster.Facts, source string) (*Facts, error) {
	if f.Objects == nil {
		return nil, errors.New("cluster facts without objects: read them with bundle.Scope")
	}
	bf := &Facts{Source: source, Nodes: f.Objects.Nodes, DaemonSets: f.Objects.DaemonSets, Quotas: f.Objects.Quotas,
		Detected: map[string]Detection{}}
	for _, ds := range f.DaemonSets {
		bf.Detected[ds.Namespace+"/"+ds.Name] = Detection{Role: ds.Role, Family: ds.Family}
	}
	for _, p := range f.Problems {
		if p.Rule != cluster.RuleNotInDump {
			bf.Unread = append(bf.Unread, p)
		}
	}
	return bf, nil
}

func (f *Facts) detected(ds *appsv1.DaemonSet, family string, role cluster.Role) bool {
	if f == nil || f.Detected == nil {
		return false
	}
	d, ok := f.Detected[ds.Namespace+"/"+ds.Name]
	return ok && d.Family == family && d.Role == role
}

// isPlugin reports whether ds is a device plugin of d's family, and the
// catalogue entry it matched (nil when matched by image or detection).
func (f *Facts) isPlugin(d Driver, ds *appsv1.DaemonSet) (*Plugin, bool) {
	if p, ok := matchPlugin(d, ds); ok {
		return p, true
	}
	return nil, f.detected(ds, d.Family, cluster.DevicePlugin)
}
