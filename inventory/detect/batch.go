package detect

import (
	"bytes"

	"github.com/kubedra/kubedra/inventory"
)

// Result is everything detection finds in a set of documents: device
// requests (in manifests and in loose Helm values files), DRA objects
// (every resource.k8s.io object, classic parameters, feature gates),
// objects that count or govern devices, and the claims and DeviceClasses
// that exist already (new objects must not take their names).
type Result struct {
	Findings []inventory.Finding
	DRA      []inventory.DRAFinding
	Gov      []inventory.GovFinding
	// Claims are the ResourceClaims and ResourceClaimTemplates among the
	// documents, Classes the DeviceClasses.
	Claims  []inventory.ObjectRef
	Classes []*inventory.Document
	// Uses are the objects that run pods from a cluster-scoped runtime.
	Uses []RuntimeUse
}

// All runs every detection over docs, in order: the one call each source
// (files, stdin, a chart's render, a kustomize tree, a cluster's pod
// templates) makes, so that no source sees only a part of what a
// document holds.
func All(docs []*inventory.Document, opts Options) Result {
	var r Result
	for _, d := range docs {
		r.Document(d, opts)
	}
	return r
}

// Document adds what every detection finds in d to r.
func (r *Result) Document(d *inventory.Document, opts Options) {
	if d == nil || d.Node == nil {
		return
	}
	if isValues(d) {
		r.Findings = append(r.Findings, HelmValues(d)...)
		return
	}
	switch k := d.Node.GetKind(); k {
	case "ResourceClaimTemplate", "ResourceClaim":
		r.Claims = append(r.Claims, inventory.ObjectRef{Kind: k, Namespace: d.Node.GetNamespace(), Name: d.Node.GetName()})
	case "DeviceClass":
		r.Classes = append(r.Classes, d)
	}
	r.Uses = append(r.Uses, RuntimeUses(d)...)
	found := Document(d, opts)
	r.Findings = append(r.Findings, found...)
	r.DRA = append(r.DRA, DRA(d, opts)...)
	gov := Governance(d)
	r.Gov = append(r.Gov, gov...)
	if len(gov) == 0 {
		r.Findings = append(r.Findings, SpecMaps(d, found)...)
	}
}

// Add appends o's findings to r's.
func (r *Result) Add(o Result) {
	r.Findings = append(r.Findings, o.Findings...)
	r.DRA = append(r.DRA, o.DRA...)
	r.Gov = append(r.Gov, o.Gov...)
	r.Claims = append(r.Claims, o.Claims...)
	r.Classes = append(r.Classes, o.Classes...)
	r.Uses = append(r.Uses, o.Uses...)
}

// Len is the number of findings of every kind.
func (r Result) Len() int { return len(r.Findings) + len(r.DRA) + len(r.Gov) }

// May reports whether a document's text may hold anything All finds: the
// one byte pre-filter, so that documents that cannot matter are not parsed.
func May(doc []byte) bool { return MayRequest(doc) || MayDRA(doc) || MayGovern(doc) }

// MayConcernOthers reports whether a document's text may be something
// that the plans of other files depend on: a ResourceClaim or
// ResourceClaimTemplate (whose name a new object must not take), classic
// DRA parameters (which a claim in another file refers to), a Kueue
// object (a Configuration must map what ClusterQueues and queued workloads
// anywhere ask for), or a user of a cluster-scoped runtime (whose claim
// templates go into its users' namespaces). Migrate's first pass parses only those.
func MayConcernOthers(doc []byte) bool {
	for _, m := range concernMarkers {
		if bytes.Contains(doc, m) {
			return true
		}
	}
	return false
}

// concernMarkers are the texts MayConcernOthers looks for, made once: it
// runs on every document of migrate's first pass.
var concernMarkers = func() [][]byte {
	out := [][]byte{[]byte("ResourceClaim"), []byte("kueue.x-k8s.io"), []byte("InferenceService"), []byte("TrainJob")}
	for _, g := range ParameterGroups {
		out = append(out, []byte(g))
	}
	return out
}()
