package plan

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/kustomize"
	"github.com/kubedra/kubedra/rules"
)

// Options steer Build.
type Options struct {
	Strategy   Strategy
	Target     rules.Version
	AllowLossy bool
	// Share maps time-slicing/MPS sharing to one shared ResourceClaim
	// (rules.Options.Share); lossy, so it needs AllowLossy too.
	Share bool
	// ConsumableShares maps time-slicing to per-pod claims that take
	// shares of one GPU (rules.Options.ConsumableShares); lossy too.
	ConsumableShares bool
	// KeepNodeSelectors keeps the device-label hints that became selectors.
	KeepNodeSelectors bool
	// KueueMapsClasses states that the cluster's Kueue Configuration maps
	// the DeviceClasses claims use (deviceClassMappings), so that workloads
	// in Kueue queues move to claims even when no Configuration among the
	// inputs maps their classes (else they are left as they are).
	KueueMapsClasses bool
	// Force allows the extended-resource strategy on targets where the
	// DRAExtendedResource gate is off by default.
	Force bool
	// ClaimsFile is the base name of a sibling file for new objects ("":
	// right after the workload in its own file).
	ClaimsFile string
	// DeviceClassFile is where extended-resource DeviceClasses go.
	DeviceClassFile string
	// Kustomization returns the kustomization file in dir, or "". It is
	// injected so that Build does no I/O.
	Kustomization func(dir string) string
	// Patch returns the kustomization (or Component) that lists the file
	// as a strategic-merge patch, or "". A patch's new objects never go
	// into the patch: they go into a claims file (ClaimsFile, else
	// PatchClaimsFile) beside that kustomization, which lists it under
	// resources, and their names carry the kustomization's folder, so that
	// they differ from the base's in every build of the overlay.
	Patch func(path string) string
	// MapAdds returns the JSON 6902 adds into containers' limits or
	// requests of the kustomizations that reach a file (ContainerEdit.Keep).
	MapAdds func(path string) []kustomize.MapAdd
	// Place returns a file's path relative to the input root it was found
	// under (a root that is a file: its base name), so that new names do
	// not depend on where the repository is checked out; nil or "" uses
	// the path as read (naming.go).
	Place func(path string) string
	// Existing are objects already present in the input (kind, namespace,
	// name): new names never collide with them (Planner.Reserve adds more).
	Existing []inventory.ObjectRef
	// Encoder builds the new objects.
	Encoder Encoder
	// Ignore opts findings out, besides kubedra.io/ignore annotations.
	Ignore *Ignores
}

// Rule ids of the diagnostics a Planner makes.
const (
	RuleIgnored             = "migrate/ignored"
	RuleIgnoreWithoutReason = "migrate/ignore-without-reason"
	RuleNoClaimsField       = "migrate/no-claims-field"
	RuleUnknownKind         = "migrate/unknown-kind"
	RuleLossyApplied        = "migrate/lossy-applied"
	RuleLossy               = "migrate/lossy"
	RuleDRABacked           = "migrate/dra-backed"
	RuleUnmapped            = "migrate/unmapped"
	RuleStrategy            = "migrate/strategy"
	RuleEncode              = "migrate/encode"
	RuleZeroCount           = "migrate/zero-count"
	RuleClaimSplit          = "migrate/claim-split"
	RuleDriverClass         = rules.RuleDriverClass
	RuleClusterScoped       = "migrate/cluster-scoped"
)

// ExtendedResourceGA is the first target on which DRAExtendedResource is on
// by default (beta in 1.36, GA in 1.37; reference dra.md §2.1).
var ExtendedResourceGA = rules.Version{Major: 1, Minor: 36}

// extendedResourceAPI is the first release with DeviceClass.extendedResourceName.
var extendedResourceAPI = rules.Version{Major: 1, Minor: 34}

// CheckStrategy refuses strategies the target cannot run.
func CheckStrategy(s Strategy, target rules.Version, force bool) error {
	switch s {
	case Claims, Auto:
		return nil
	case ExtendedResource:
		if target.Less(extendedResourceAPI) {
			return fmt.Errorf("--strategy extended-resource needs DeviceClass.extendedResourceName, which Kubernetes %s does not have (1.34+)", target)
		}
		if target.Less(ExtendedResourceGA) && !force {
			return fmt.Errorf("--strategy extended-resource: the DRAExtendedResource feature gate is off by default on Kubernetes %s (on from 1.36); enable it on kube-apiserver, kube-scheduler, kube-controller-manager and kubelet, then pass --force", target)
		}
		return nil
	default:
		return fmt.Errorf("unknown strategy %q: use claims, extended-resource or auto", s)
	}
}

// pod is one pod template's findings and what the rules decided.
type pod struct {
	key      string
	findings []inventory.Finding
	res      rules.Resolution
	// namespaces are where the claim objects go when they are not the
	// workload's: a cluster-scoped runtime's users' namespaces.
	namespaces []string
}

// doc is one document's pod templates.
type doc struct {
	file  string
	index int
	pods  []*pod
}

// Planner plans a migration file by file. It keeps only what naming needs
// across files (the object names already taken, the DeviceClasses already
// made), so a caller can read, plan, rewrite and write one file at a time.
// Files must be planned in a stable order: names depend on it.
type Planner struct {
	opts Options
	r    Resolver
	// names are the object names taken (kind, namespace, name) and by whom:
	// a hash of the pod template and claim that made them, or existing.
	names map[string]owner
	erns  map[string]bool // extendedResourceNames already given a DeviceClass
	// sharedMade are the shared claims already written, per scope.
	sharedMade map[string]bool
	// encoded holds each distinct claim encoded once, under a placeholder
	// name: most workloads of a repo ask for the same few claims, and
	// encoding one goes through its typed API object.
	encoded map[encodedKey]*yaml.RNode
	scopes  map[string]string // folder -> naming scope (naming.go)
	// params are the classic DRA parameter objects seen so far (a claim's
	// parameters may be in another file); govAll the governance findings
	// that judge a batch's (Learn: the whole input's ClusterQueues and
	// Kueue Configurations); queued the classes of Kueue-queued workloads
	// and queuedAt the first of them (batch.go).
	params   Parameters
	govAll   []inventory.GovFinding
	queued   []KueueMapping
	queuedAt *inventory.Finding
	// users are the namespaces of the objects that run pods from each
	// cluster-scoped runtime ("Kind/name"), sorted (LearnUses).
	users map[string][]string
}

// NewPlanner checks the options and returns a Planner; an error means the
// options themselves are wrong.
func NewPlanner(r Resolver, opts Options) (*Planner, error) {
	if opts.Strategy == "" {
		opts.Strategy = Claims
	}
	if err := CheckStrategy(opts.Strategy, opts.Target, opts.Force); err != nil {
		return nil, err
	}
	if opts.Encoder == nil {
		return nil, fmt.Errorf("no encoder for claims and DeviceClasses")
	}
	p := &Planner{opts: opts, r: r, names: map[string]owner{}, erns: map[string]bool{}, sharedMade: map[string]bool{}, encoded: map[encodedKey]*yaml.RNode{}, scopes: map[string]string{}, params: Parameters{}}
	p.Reserve(opts.Existing...)
	return p, nil
}

// FileResult is what the Planner decided for one file.
type FileResult struct {
	// Plan holds the file's edits; nil when no document of it changes.
	Plan *FilePlan
	// Diagnostics say what is left undone, and why, in finding order.
	Diagnostics inventory.Diagnostics
	// Workloads are the strategy choices of --strategy auto.
	Workloads []WorkloadChoice
	// DeviceClasses are the DeviceClasses the file's workloads need that
	// no earlier file needed (extended-resource strategy).
	DeviceClasses []*Object
}

// File plans the findings of one file (or one batch of its documents):
// it groups them by document and pod template, resolves each pod template
// with the rules, and decides names, placement and strategy. Problems in
// the manifests become Diagnostics.
func (p *Planner) File(path string, findings []inventory.Finding) *FileResult {
	b := &builder{Planner: p, res: &FileResult{}, scope: p.scopeOf(path), place: p.placeOf(path)}
	if p.opts.Patch != nil && path != "-" && path != "" {
		b.patch, b.patchFile = p.opts.Patch(path), path
	}
	var docs []*doc
	docByIndex := map[int]*doc{}
	podByKey := map[string]*pod{}
	for _, f := range findings {
		if f.Values != "" {
			b.res.Diagnostics = append(b.res.Diagnostics, ValuesDiagnostic(f))
			continue
		}
		k := Key(f)
		pd := podByKey[k]
		if pd == nil {
			pd = &pod{key: k}
			podByKey[k] = pd
			d := docByIndex[f.Origin.Index]
			if d == nil {
				d = &doc{file: path, index: f.Origin.Index}
				docByIndex[f.Origin.Index] = d
				docs = append(docs, d)
			}
			d.pods = append(d.pods, pd)
		}
		pd.findings = append(pd.findings, f)
	}
	ropts := rules.Options{Target: p.opts.Target, AllowLossy: p.opts.AllowLossy, Share: p.opts.Share, ConsumableShares: p.opts.ConsumableShares}
	for _, d := range docs {
		for _, pd := range d.pods {
			rp := rules.Pod{Hints: pd.findings[0].Hints}
			for _, f := range pd.findings {
				rp.Requests = append(rp.Requests, podRequest(f))
			}
			res, err := p.r.Resolve(rp, ropts)
			if err != nil {
				res = rules.Resolution{}
				for range pd.findings {
					res.Decisions = append(res.Decisions, rules.Decision{Status: rules.Unmapped, Claim: -1, Reason: err.Error()})
				}
			}
			pd.res = res
		}
		b.doc(d)
	}
	return b.res
}

// Build plans a whole set of findings (file by file, in the order files
// first appear) and collects the result in one Plan.
func Build(findings []inventory.Finding, r Resolver, opts Options) (*Plan, error) {
	p, err := NewPlanner(r, opts)
	if err != nil {
		return nil, err
	}
	out := NewPlan(p.opts)
	var order []string
	byFile := map[string][]inventory.Finding{}
	for _, f := range findings {
		if _, ok := byFile[f.Origin.Path]; !ok {
			order = append(order, f.Origin.Path)
		}
		byFile[f.Origin.Path] = append(byFile[f.Origin.Path], f)
	}
	for _, path := range order {
		out.Add(p.File(path, byFile[path]))
	}
	return out, nil
}

// NewPlan starts an empty Plan for opts.
func NewPlan(opts Options) *Plan {
	if opts.Strategy == "" {
		opts.Strategy = Claims
	}
	return &Plan{APIVersion: "kubedra.dev/v1alpha1", Kind: "ConversionPlan", Strategy: opts.Strategy,
		Target: opts.Target.String(), Files: []*FilePlan{}, Diagnostics: inventory.Diagnostics{}, DeviceClassFile: opts.DeviceClassFile}
}

// Add appends one file's result (a file planned in several batches gets
// one FilePlan per batch).
func (pl *Plan) Add(r *FileResult) {
	if r.Plan != nil {
		pl.Files = append(pl.Files, r.Plan)
	}
	pl.Diagnostics = append(pl.Diagnostics, r.Diagnostics...)
	pl.Workloads = append(pl.Workloads, r.Workloads...)
	pl.DeviceClasses = append(pl.DeviceClasses, r.DeviceClasses...)
}

// builder plans one file for its Planner.
type builder struct {
	*Planner
	res *FileResult
	// scope and place are the file's naming scope and its path relative
	// to its input root (naming.go).
	scope, place string
	// patch is the kustomization that lists the file as a strategic-merge
	// patch, or "".
	patch, patchFile string
}

// patchQualifier names the kustomization of a patch in its objects' names:
// the last folder of its place under the input root (not of where the
// repository is checked out), "overlay" at the root.
func (b *builder) patchQualifier() string {
	kdir := filepath.Dir(b.patch)
	rel, err := filepath.Rel(filepath.Dir(b.patchFile), kdir)
	if err != nil {
		rel = "."
	}
	at := path.Clean(path.Join(path.Dir(b.place), filepath.ToSlash(rel)))
	if at == "." || at == "/" || strings.HasPrefix(at, "..") {
		return "overlay"
	}
	return rules.DNSLabel(path.Base(at), "overlay")
}

// PatchClaimsFile is the file beside a kustomization that gets the new
// objects of the patches it lists, when no ClaimsFile is given.
const PatchClaimsFile = "kubedra-claims.yaml"

func (b *builder) diag(sev inventory.Severity, rule string, f inventory.Finding, msg, fix string) {
	b.res.Diagnostics = append(b.res.Diagnostics, inventory.Diagnostic{Severity: sev, Rule: rule, File: f.Origin.Path, Line: f.Line,
		Object: f.Object(), Container: f.Container, Resource: f.Resource, Field: f.FieldPath(), Message: msg, Fix: fix})
}

// doc plans one document.
func (b *builder) doc(d *doc) {
	first := d.pods[0].findings[0]
	dp := &DocPlan{Index: first.Origin.Index, Line: first.Line, ListIndex: first.Origin.ListIndex, APIVersion: first.APIVersion, Kind: first.Kind,
		Name: first.Name, Namespace: first.Namespace}
	object := first.Kind + "/" + first.Name

	// Report what will not move, and keep the pods that have something to do.
	var active []*pod
	for _, pd := range d.pods {
		if b.leftAlone(pd) {
			continue
		}
		if b.reportDecisions(pd) && (b.opts.Strategy != Claims || len(b.knativeLeft([]*pod{pd})) > 0) {
			active = append(active, pd)
		}
	}
	if len(active) == 0 {
		return
	}

	strategy, why := b.choose(active)
	if b.opts.Strategy == Auto {
		b.res.Workloads = append(b.res.Workloads, WorkloadChoice{File: first.Origin.Path, Line: first.Line, Object: object, Strategy: strategy, Why: why})
	}
	if strategy == Claims && b.opts.Strategy == Auto {
		if active = b.knativeLeft(active); len(active) == 0 {
			return
		}
	}
	if strategy == ExtendedResource {
		b.extended(active)
		return
	}
	if active = b.kueueAdmitted(active); len(active) == 0 {
		return
	}
	if b.opts.Strategy == ExtendedResource {
		// Explicit extended-resource strategy, but this workload needs claims.
		b.refuseExtended(active, why)
		return
	}
	b.claims(d, dp, active)
	b.frameworks(dp, active)
}

// leftAlone reports the pod templates migrate leaves as they are whatever
// the rules decide (ignored, an ignore without reason, no claims field, an
// unknown kind), each finding with why.
func (b *builder) leftAlone(pd *pod) bool {
	f0 := pd.findings[0]
	if ignore := b.opts.Ignore.Reason(f0); ignore != "" {
		for _, f := range pd.findings {
			b.diag(inventory.Info, RuleIgnored, f, "ignored: "+ignore, "")
		}
		return true
	}
	if f0.IgnoreInvalid {
		for _, f := range pd.findings {
			b.diag(inventory.Warning, RuleIgnoreWithoutReason, f, "kubedra.io/ignore annotation has no reason; the workload is left unchanged", "give the reason as the annotation value")
		}
		return true
	}
	if why, ok := noClaims[apiGroup(f0.APIVersion)]; ok {
		for _, f := range pd.findings {
			b.diag(inventory.Warning, RuleNoClaimsField, f, "left unchanged: "+why, "migrate the pods this "+f.Kind+" creates (for example with a pod spec patch) by hand")
		}
		return true
	}
	if users, ok := clusterScoped[f0.Kind]; ok && b.opts.Strategy != ExtendedResource {
		if ns := b.users[f0.Kind+"/"+f0.Name]; len(ns) > 0 {
			pd.namespaces = ns
			for _, f := range pd.findings {
				b.diag(inventory.Info, RuleClusterScoped, f, fmt.Sprintf("%s is cluster-scoped: its claims get one ResourceClaimTemplate in each namespace of the %s among the inputs that use it (%s); a namespace whose %s are not among the inputs gets none", f.Kind, users, strings.Join(quoted(ns), ", "), users), "")
			}
			return false
		}
		for _, f := range pd.findings {
			b.diag(inventory.Warning, RuleClusterScoped, f, fmt.Sprintf("left unchanged: %s is cluster-scoped: its pods run in the namespaces of the %s that use it, and a ResourceClaimTemplate is namespaced (cluster-scoped templates were withdrawn: KEP-5978)", f.Kind, users),
				"migrate with the "+users+" that use it among the inputs (a ResourceClaimTemplate is then written into each of their namespaces), keep the request and serve it through the driver's DeviceClass (--strategy extended-resource, Kubernetes 1.36+), or give each namespace a namespaced copy of the runtime and migrate those")
		}
		return true
	}
	if f0.Generic {
		for _, f := range pd.findings {
			b.diag(inventory.Warning, RuleUnknownKind, f, fmt.Sprintf("%s is not a known workload kind; its pod template was found by the generic fallback at %s and is left unchanged", schema.FromAPIVersionAndKind(f.APIVersion, f.Kind).GroupKind(), f.PodTemplatePath),
				"add a templatePaths entry for the kind in a rules file (--rules) to migrate it")
		}
		return true
	}
	return false
}

// reportDecisions reports what the rules decided for each request of a pod
// template, and whether any of them moves (to a claim, or away with a zero
// count).
func (b *builder) reportDecisions(pd *pod) bool {
	mapped := false
	for i, f := range pd.findings {
		dec := decision(pd.res, i)
		switch {
		case dec.Zero:
			mapped = true
			b.diag(inventory.Info, RuleZeroCount, f, fmt.Sprintf("%s: %s asks for no device: the entry is removed and no claim is added", f.Resource, f.Quantity()), "")
		case dec.Claim >= 0 && dec.Claim < len(pd.res.Claims):
			mapped = true
			if dec.Status == rules.Lossy {
				b.diag(inventory.Warning, RuleLossyApplied, f, "lossy mapping applied (--allow-lossy): "+dec.Loss, "")
			}
			if dec.Split != "" {
				b.diag(inventory.Warning, RuleClaimSplit, f, dec.Split, "")
			}
		case dec.Status == rules.Lossy:
			b.diag(inventory.Warning, RuleLossy, f, "left unchanged: the mapping is lossy: "+dec.Loss, or(dec.Fix, "review the loss, then pass --allow-lossy to apply it"))
		case dec.Status == rules.DRABacked:
			b.diag(inventory.Info, RuleDRABacked, f, "left unchanged: "+led(servedByDRA, dec.Reason), dec.Fix)
		default:
			b.diag(inventory.Warning, RuleUnmapped, f, "left unchanged: "+or(dec.Reason, "no rule maps "+f.Resource), or(dec.Fix, "add a rule for it in a rules file (--rules)"))
		}
	}
	return mapped
}

// refuseExtended reports the requests of a workload that needs claims,
// which the explicit extended-resource strategy cannot serve.
func (b *builder) refuseExtended(pods []*pod, why string) {
	for _, pd := range pods {
		for i, f := range pd.findings {
			if decision(pd.res, i).Claim >= 0 {
				b.diag(inventory.Warning, RuleStrategy, f, "left unchanged: --strategy extended-resource cannot serve it: "+why, "use --strategy claims or auto for this workload")
			}
		}
	}
}

// choose picks the strategy for one workload and says why.
func (b *builder) choose(pods []*pod) (Strategy, string) {
	if b.opts.Strategy == Claims {
		return Claims, ""
	}
	var needs []string
	add := func(s string) {
		if !slices.Contains(needs, s) {
			needs = append(needs, s)
		}
	}
	for _, pd := range pods {
		if len(pd.res.UsedHints) > 0 && !b.opts.KeepNodeSelectors {
			add("device selectors from node labels")
		}
		for i := range pd.findings {
			dec := decision(pd.res, i)
			if dec.Claim < 0 || dec.Claim >= len(pd.res.Claims) {
				continue
			}
			c := pd.res.Claims[dec.Claim]
			switch {
			case c.Shared:
				add("a shared claim")
			case len(c.Spec.Devices.Constraints) > 0:
				add("a topology constraint")
			case len(dec.Selectors) > 0 && !dec.ExtendedResource:
				if !slices.Contains(needs, "device selectors from node labels") {
					add("device selectors")
				}
			case !dec.ExtendedResource:
				add("no DeviceClass serves " + pd.findings[i].Resource + " by extendedResourceName")
			}
		}
	}
	if len(needs) > 0 {
		return Claims, "a claim is needed for " + strings.Join(needs, ", ")
	}
	if b.opts.Strategy == Auto && b.opts.Target.Less(ExtendedResourceGA) && !b.opts.Force {
		return Claims, fmt.Sprintf("only a count is needed, but DRAExtendedResource is off by default on %s", b.opts.Target)
	}
	return ExtendedResource, "only a count is needed: a DeviceClass with extendedResourceName serves the request unchanged"
}

// extended records the DeviceClasses a workload needs under KEP-5004.
func (b *builder) extended(pods []*pod) {
	for _, pd := range pods {
		for i, f := range pd.findings {
			dec := decision(pd.res, i)
			if dec.Claim < 0 {
				continue
			}
			ern := or(dec.ExtendedResourceName, f.Resource)
			if dec.ClassDeclares {
				// The driver's own class serves it: a second class with the
				// same extendedResourceName would clash with it.
				b.diag(inventory.Info, RuleDriverClass, f, fmt.Sprintf("served by the driver's DeviceClass %s, which declares extendedResourceName %s: no DeviceClass is added", dec.DeviceClass, ern),
					fmt.Sprintf("install the driver so that its %s class declares extendedResourceName %s (the GPU Operator's does not: apply kubedra bundle's class instead)", dec.DeviceClass, ern))
				continue
			}
			if b.erns[ern] {
				continue
			}
			b.erns[ern] = true
			dec.ExtendedResourceName = ern
			n, err := b.opts.Encoder.DeviceClass(dec, b.opts.Target)
			if err != nil {
				b.diag(inventory.Error, RuleEncode, f, "encoding DeviceClass: "+err.Error(), "")
				continue
			}
			b.res.DeviceClasses = append(b.res.DeviceClasses, &Object{Kind: "DeviceClass", Name: n.GetName(), Node: n})
		}
	}
}

// clusterScoped are the cluster-scoped kinds with pod templates, and what
// uses them: their pods run in the users' namespaces, where no claim
// template of theirs can be.
var clusterScoped = map[string]string{
	"ClusterServingRuntime":  "InferenceServices",
	"ClusterTrainingRuntime": "TrainJobs",
}

// noClaims are API groups whose pod templates have no place for resource
// claims: their containers are not Kubernetes containers.
var noClaims = map[string]string{
	"argoproj.io":          "an Argo template is not a pod spec: it has no resourceClaims field",
	"sparkoperator.k8s.io": "a SparkApplication asks for GPUs in its own gpu field, not in container resources",
}

// quoted are names as a message quotes them ("" for no namespace).
func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}

func apiGroup(apiVersion string) string {
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		return g
	}
	return ""
}

func decision(res rules.Resolution, i int) rules.Decision {
	if i < len(res.Decisions) {
		return res.Decisions[i]
	}
	return rules.Decision{Status: rules.Unmapped, Claim: -1, Reason: "the rules gave no decision"}
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// servedByDRA is what a DRA-backed request is; a rule's reason usually
// starts with it.
const servedByDRA = "already served by DRA"

// led is reason led by lead ("lead: reason"), or reason alone when it
// starts with lead already, or lead when there is no reason: a message
// says a thing once.
func led(lead, reason string) string {
	switch {
	case reason == "":
		return lead
	case strings.HasPrefix(strings.ToLower(reason), strings.ToLower(lead)):
		return reason
	}
	return lead + ": " + reason
}

func suffix(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}
