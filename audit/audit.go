package audit

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Severity of a finding: the severity of every kubedra diagnostic.
type Severity = inventory.Severity

// Severities. An Error finding makes `kubedra audit` exit 2.
const (
	Error   = inventory.Error
	Warning = inventory.Warning
	Info    = inventory.Info
)

// Ref names a Kubernetes object (the one ObjectRef of every stage).
type Ref = inventory.ObjectRef

// Finding is one problem a check found.
type Finding struct {
	Check    string   `json:"check"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
	// Fix says what to do about it.
	Fix string `json:"fix,omitempty"`
	// Pool is the node pool the finding is about ("" when cluster-wide).
	Pool    string `json:"pool,omitempty"`
	Objects []Ref  `json:"objects"`
}

// Result is a check's outcome.
type Result string

// Check outcomes: fail when an error-level finding was made, warn for a
// warning, pass otherwise (info findings included).
const (
	Pass    Result = "pass"
	Warn    Result = "warn"
	Fail    Result = "fail"
	Skipped Result = "skipped"
)

// CheckResult is the verdict of one check.
type CheckResult struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Severity Severity `json:"severity"`
	Result   Result   `json:"result"`
	Findings int      `json:"findings"`
	// Reason explains a skipped check.
	Reason string `json:"reason,omitempty"`
}

// Verdict of a node pool.
type Verdict string

// Pool verdicts.
const (
	Ready       Verdict = "ready"
	Blocked     Verdict = "blocked"
	Conflicting Verdict = "conflicting"
)

// Pool is the verdict for one node pool.
type Pool struct {
	Name  string `json:"name"`
	Nodes int    `json:"nodes"`
	// Plugins and Drivers are the device families served by device plugins
	// and by DRA drivers on the pool's nodes.
	Plugins []string `json:"plugins"`
	Drivers []string `json:"drivers"`
	Verdict Verdict  `json:"verdict"`
	// Checks are the ids of the checks that decided a blocked or
	// conflicting verdict.
	Checks []string `json:"checks,omitempty"`
}

// WorkloadGroup counts workloads still on device plugins per namespace,
// resource and mapping status.
type WorkloadGroup struct {
	Namespace string       `json:"namespace"`
	Resource  string       `json:"resource"`
	Status    rules.Status `json:"status"`
	Workloads int          `json:"workloads"`
	Pods      int          `json:"pods"`
	Objects   []Ref        `json:"objects"`
}

// Cluster summarises what was read.
type Cluster struct {
	ServerVersion       string   `json:"serverVersion,omitempty"`
	ResourceAPIVersions []string `json:"resourceAPIVersions"`
	Namespace           string   `json:"namespace,omitempty"`
	Nodes               int      `json:"nodes"`
	DeviceClasses       int      `json:"deviceClasses"`
	ResourceSlices      int      `json:"resourceSlices"`
	// ResourceClaims and ResourceClaimTemplates in scope; ExtendedClaims
	// are the claims the scheduler made for KEP-5004 requests.
	ResourceClaims         int `json:"resourceClaims"`
	ResourceClaimTemplates int `json:"resourceClaimTemplates"`
	ExtendedClaims         int `json:"extendedClaims"`
}

// Report is the audit's result, the envelope of -o json|yaml.
type Report struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Cluster    Cluster         `json:"cluster"`
	Pools      []Pool          `json:"pools"`
	Checks     []CheckResult   `json:"checks"`
	Items      []Finding       `json:"items"`
	Workloads  []WorkloadGroup `json:"workloads"`
	// Problems are what could not be read, one diagnostic per resource
	// type (cluster.RuleUnreadable, cluster.RuleNotInDump): the report is
	// partial when there are any.
	Problems inventory.Diagnostics `json:"problems"`
}

// HasErrors reports whether an error-level finding was made.
func (r *Report) HasErrors() bool {
	return slices.ContainsFunc(r.Items, func(f Finding) bool { return f.Severity == Error })
}

// Partial reports whether some resource types could not be read.
func (r *Report) Partial() bool { return len(r.Problems) > 0 }

// Unread lists the resource types a read failed on (forbidden, not
// served, broken), leaving out those a kubectl dump merely did not hold
// (cluster.RuleNotInDump): the audit could not finish its job for the former.
func (r *Report) Unread() []string {
	var out []string
	for _, p := range r.Problems {
		if p.Rule != cluster.RuleNotInDump {
			out = append(out, p.Resource)
		}
	}
	return out
}

// Options steer Run.
type Options struct {
	// Resolver decides the mapping status of workloads' requests (a
	// rules.Set: action.Audit's rules); nil leaves the status empty.
	Resolver plan.Resolver
	// Target is the version passed to the resolver; zero derives it from
	// the server version (clamped to the supported range).
	Target rules.Version
}

// Run runs every check on the facts.
func Run(f *cluster.Facts, opts Options) *Report {
	e := newEnv(f, opts)
	r := &Report{
		APIVersion: "kubedra.dev/v1alpha1",
		Kind:       "AuditReport",
		Cluster: Cluster{ServerVersion: f.ServerVersion, ResourceAPIVersions: nonNil(f.ResourceAPIVersions),
			Namespace: f.Namespace, Nodes: len(f.Nodes), DeviceClasses: len(f.DeviceClasses)},
		Problems: nonNil(f.Problems),
		Items:    []Finding{},
	}
	for _, s := range f.Slices {
		r.Cluster.ResourceSlices += s.Slices
	}
	for _, c := range f.Claims {
		r.Cluster.ResourceClaims += c.Claims
		r.Cluster.ResourceClaimTemplates += c.Templates
		r.Cluster.ExtendedClaims += c.Extended
	}
	for _, c := range Checks() {
		cr := CheckResult{ID: c.ID, Title: c.Title, Severity: c.Severity, Result: Pass}
		if missing := e.missing(c.Needs); len(missing) > 0 {
			cr.Result = Skipped
			cr.Reason = "could not read " + strings.Join(missing, ", ")
			r.Checks = append(r.Checks, cr)
			continue
		}
		fs := c.run(e)
		for i := range fs {
			fs[i].Check = c.ID
			if fs[i].Severity == "" {
				fs[i].Severity = c.Severity
			}
			if fs[i].Objects == nil {
				fs[i].Objects = []Ref{}
			}
		}
		cr.Findings = len(fs)
		for _, f := range fs {
			switch {
			case f.Severity == Error:
				cr.Result = Fail
			case f.Severity == Warning && cr.Result == Pass:
				cr.Result = Warn
			}
		}
		r.Checks = append(r.Checks, cr)
		r.Items = append(r.Items, fs...)
	}
	slices.SortStableFunc(r.Items, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Severity.Rank(), b.Severity.Rank()), cmp.Compare(a.Check, b.Check),
			cmp.Compare(a.Pool, b.Pool), cmp.Compare(a.Message, b.Message))
	})
	r.Pools = e.pools(r.Items)
	r.Workloads = e.workloadGroups
	if r.Workloads == nil {
		r.Workloads = []WorkloadGroup{}
	}
	return r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// env is what checks share: the facts and indexes over them.
type env struct {
	f    *cluster.Facts
	opts Options
	// server is the parsed server version (ok=false when unknown).
	server   rules.Version
	serverOK bool
	patch    int
	// per node: families served by plugins and by DRA drivers, with evidence.
	plugin map[string]map[string][]string
	dra    map[string]map[string][]string
	nodes  map[string]*cluster.Node
	// classes by extendedResourceName.
	classByName map[string][]cluster.DeviceClass
	// node names per pool marked by conflict or blocking checks.
	workloadGroups []WorkloadGroup
}

func newEnv(f *cluster.Facts, opts Options) *env {
	e := &env{f: f, opts: opts, plugin: map[string]map[string][]string{}, dra: map[string]map[string][]string{},
		nodes: map[string]*cluster.Node{}, classByName: map[string][]cluster.DeviceClass{}}
	if v, patch, ok := parseServer(f.ServerVersion); ok {
		e.server, e.patch, e.serverOK = v, patch, true
	}
	for _, dc := range f.DeviceClasses {
		if dc.ExtendedResourceName != "" {
			e.classByName[dc.ExtendedResourceName] = append(e.classByName[dc.ExtendedResourceName], dc)
		}
	}
	add := func(m map[string]map[string][]string, node, family, evidence string) {
		if node == "" || family == "" {
			return
		}
		if m[node] == nil {
			m[node] = map[string][]string{}
		}
		if !slices.Contains(m[node][family], evidence) {
			m[node][family] = append(m[node][family], evidence)
		}
	}
	for i := range f.Nodes {
		n := &f.Nodes[i]
		e.nodes[n.Name] = n
		for res, q := range n.Allocatable {
			if q == "0" {
				continue
			}
			add(e.plugin, n.Name, e.familyOfResource(res), "allocatable "+res+": "+q)
		}
	}
	for _, p := range f.PluginPods {
		ev := "pod " + p.Namespace + "/" + p.Name
		if p.Role == cluster.DevicePlugin {
			add(e.plugin, p.Node, p.Family, ev)
		} else {
			add(e.dra, p.Node, p.Family, ev)
		}
	}
	for _, s := range f.Slices {
		if s.Devices > 0 {
			add(e.dra, s.Node, e.familyOfDriver(s.Driver, s.Family), "ResourceSlices of "+s.Driver)
		}
	}
	return e
}

// familyOfResource knows vendor names, and names a DeviceClass maps to a
// driver (so that unknown vendors still pair up).
func (e *env) familyOfResource(res string) string {
	if fam := detect.FamilyOfResource(res); fam != "" {
		return fam
	}
	for _, dc := range e.classByName[res] {
		for _, d := range dc.Drivers {
			return e.familyOfDriver(d, detect.FamilyOfDriver(d))
		}
	}
	if i := strings.IndexByte(res, '/'); i > 0 {
		return "domain:" + res[:i]
	}
	return ""
}

func (e *env) familyOfDriver(driver, family string) string {
	if family != "" {
		return family
	}
	if driver == "dra.net" {
		return "" // a NIC driver that serves no EFA devices here
	}
	for _, dcs := range e.classByName {
		for _, dc := range dcs {
			if slices.Contains(dc.Drivers, driver) {
				if fam := detect.FamilyOfResource(dc.ExtendedResourceName); fam != "" {
					return fam
				}
				if i := strings.IndexByte(dc.ExtendedResourceName, '/'); i > 0 {
					return "domain:" + dc.ExtendedResourceName[:i]
				}
			}
		}
	}
	return "driver:" + driver
}

func (e *env) missing(needs []string) []string {
	var out []string
	for _, n := range needs {
		if e.f.Missing(n) {
			out = append(out, n)
		}
	}
	return out
}

// parseServer reads "v1.37.2", "v1.34.1-eks-abcdef" or "v1.33.5-gke.100".
func parseServer(s string) (rules.Version, int, bool) {
	s = strings.TrimPrefix(s, "v")
	parts := strings.SplitN(s, ".", 3)
	if len(parts) < 2 {
		return rules.Version{}, 0, false
	}
	maj, err1 := strconv.Atoi(parts[0])
	min, err2 := strconv.Atoi(strings.TrimRight(parts[1], "+"))
	if err1 != nil || err2 != nil {
		return rules.Version{}, 0, false
	}
	patch := 0
	if len(parts) == 3 {
		p := parts[2]
		if i := strings.IndexAny(p, "-+"); i >= 0 {
			p = p[:i]
		}
		patch, _ = strconv.Atoi(p)
	}
	return rules.Version{Major: maj, Minor: min}, patch, true
}

// nodeRefs names nodes, sorted.
func nodeRefs(names []string) []Ref {
	slices.Sort(names)
	names = slices.Compact(names)
	out := make([]Ref, 0, len(names))
	for _, n := range names {
		out = append(out, Ref{APIVersion: "v1", Kind: "Node", Name: n})
	}
	return out
}

// list renders up to 5 names and a count of the rest.
func list(names []string) string {
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pools gives each node pool its verdict from the findings that name its
// nodes (or the whole cluster).
func (e *env) pools(items []Finding) []Pool {
	byPool := map[string]*Pool{}
	poolOf := map[string]string{}
	for _, n := range e.f.Nodes {
		p := byPool[n.PoolName()]
		if p == nil {
			p = &Pool{Name: n.PoolName(), Plugins: []string{}, Drivers: []string{}, Verdict: Ready}
			byPool[n.PoolName()] = p
		}
		p.Nodes++
		poolOf[n.Name] = n.PoolName()
		for fam := range e.plugin[n.Name] {
			if !slices.Contains(p.Plugins, fam) {
				p.Plugins = append(p.Plugins, fam)
			}
		}
		for fam := range e.dra[n.Name] {
			if !slices.Contains(p.Drivers, fam) {
				p.Drivers = append(p.Drivers, fam)
			}
		}
	}
	mark := func(p *Pool, v Verdict, check string) {
		if v == Conflicting || p.Verdict == Ready {
			p.Verdict = v
		}
		if !slices.Contains(p.Checks, check) {
			p.Checks = append(p.Checks, check)
		}
	}
	for _, it := range items {
		if it.Severity != Error {
			continue
		}
		v := Blocked
		if it.Check == CheckNodeConflict || it.Check == CheckDaemonSetOverlap {
			v = Conflicting
		}
		named := false
		for _, o := range it.Objects {
			if o.Kind == "Node" {
				if p := byPool[poolOf[o.Name]]; p != nil {
					mark(p, v, it.Check)
					named = true
				}
			}
		}
		if !named && it.Pool == "" {
			// A cluster-wide blocker blocks the pools that have devices;
			// an API that is not ready blocks every pool.
			for _, p := range byPool {
				if len(p.Plugins)+len(p.Drivers) > 0 || it.Check == CheckAPIReadiness {
					mark(p, v, it.Check)
				}
			}
		}
	}
	out := make([]Pool, 0, len(byPool))
	for _, name := range keys(byPool) {
		p := byPool[name]
		slices.Sort(p.Plugins)
		slices.Sort(p.Drivers)
		slices.Sort(p.Checks)
		out = append(out, *p)
	}
	return out
}
