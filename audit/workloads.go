package audit

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// target is the version the resolver decides for.
func (e *env) target() rules.Version {
	if e.opts.Target != (rules.Version{}) {
		return e.opts.Target
	}
	if !e.serverOK {
		return rules.DefaultTarget
	}
	switch {
	case e.server.Less(rules.MinTarget):
		return rules.MinTarget
	case rules.MaxTarget.Less(e.server):
		return rules.MaxTarget
	}
	return e.server
}

// statuses returns the mapping status of each request of a workload, in
// the order of w.Requests, by running inventory/detect on the Document of
// its pod template (made by inventory/cluster) and resolving the findings
// with r: the path scan takes. With a nil resolver or no document every
// status is "", and so is the status of a pod template that trips a bug in
// the rules (plan.Items reports it instead of deciding).
func statuses(w cluster.Workload, r plan.Resolver, target rules.Version) []rules.Status {
	out := make([]rules.Status, len(w.Requests))
	if r == nil || w.Document == nil {
		return out
	}
	items, _ := plan.Items(detect.All([]*inventory.Document{w.Document}, detect.Options{}).Findings, r, plan.ItemOptions{Rules: rules.Options{Target: target}})
	for i, req := range w.Requests {
		for _, it := range items {
			if it.Container == req.Container && it.Resource == req.Resource {
				out[i] = it.Status
				break
			}
		}
	}
	return out
}

// checkWorkloads lists workloads whose pods still request device-plugin
// resources, grouped per namespace, resource and mapping status.
func checkWorkloads(e *env) []Finding {
	type key struct {
		ns, res string
		status  rules.Status
	}
	groups := map[key]*WorkloadGroup{}
	// Many workloads share a pod template (Jobs of a CronJob, bare pods
	// made by one tool), and then its Document: resolve each once.
	memo := map[*inventory.Document][]rules.Status{}
	var out []Finding
	for _, w := range e.f.Workloads {
		if w.DRABacked == w.Pods {
			continue // every pod is already served by DRA (KEP-5004)
		}
		ref := Ref{APIVersion: w.APIVersion, Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
		if w.DocumentError != "" {
			out = append(out, Finding{Severity: Warning, Objects: []Ref{ref},
				Message: "mapping status unknown: could not convert the " + w.DocumentError,
				Fix:     "run `kubedra scan` on the workload's manifest"})
		}
		sts, ok := memo[w.Document]
		if !ok || w.Document == nil {
			sts = statuses(w, e.opts.Resolver, e.target())
			memo[w.Document] = sts
		}
		seen := map[key]bool{}
		for i, req := range w.Requests {
			st := sts[i]
			if detect.FamilyOfResource(req.Resource) == "" && st == "" {
				continue
			}
			if why := invalidCount(req.Quantity); why != "" {
				out = append(out, Finding{Severity: Warning, Objects: []Ref{ref},
					Message: fmt.Sprintf("%s %s/%s: container %s asks %q %s: %s; the API server rejects it, so the dump was not written by one as it is",
						w.Kind, w.Namespace, w.Name, req.Container, req.Quantity, req.Resource, why),
					Fix: "fix the request (a whole number of devices, 1 or more) in the workload's manifest"})
				continue
			}
			if st == rules.DRABacked {
				continue
			}
			k := key{w.Namespace, req.Resource, st}
			if seen[k] {
				continue
			}
			seen[k] = true
			g := groups[k]
			if g == nil {
				g = &WorkloadGroup{Namespace: k.ns, Resource: k.res, Status: k.status}
				groups[k] = g
			}
			g.Workloads++
			g.Pods += w.Pods - w.DRABacked
			g.Objects = append(g.Objects, ref)
		}
	}
	for _, g := range groups {
		sev := Info
		what := "mapping status unknown"
		switch g.Status {
		case rules.Unmapped:
			sev, what = Warning, "no rule maps it"
		case rules.Lossy:
			sev, what = Warning, "mapping is lossy"
		case rules.Mappable:
			what = "mappable"
		}
		out = append(out, Finding{Severity: sev, Objects: g.Objects,
			Message: fmt.Sprintf("namespace %s: %d workload(s), %d pod(s) request %s through a device plugin (%s)", g.Namespace, g.Workloads, g.Pods, g.Resource, what),
			Fix:     "run `kubedra scan` on their manifests and `kubedra migrate` to move them to ResourceClaims"})
		e.workloadGroups = append(e.workloadGroups, *g)
	}
	slices.SortFunc(e.workloadGroups, func(a, b WorkloadGroup) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Resource, b.Resource), cmp.Compare(a.Status, b.Status))
	})
	return out
}

// invalidCount says why an extended-resource quantity is no device count
// the API server accepts (negative, fractional, unparsable), else "".
func invalidCount(q string) string {
	v, err := resource.ParseQuantity(q)
	switch {
	case err != nil:
		return "not a quantity"
	case v.Sign() < 0:
		return "a negative count"
	case v.MilliValue()%1000 != 0:
		return "not a whole number"
	}
	return ""
}
