package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	batchv1client "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// DefaultPageSize is the Limit of each list call.
const DefaultPageSize = 500

// ResourceVersions are the resource.k8s.io versions kubedra can read,
// newest first.
var ResourceVersions = []string{"v1", "v1beta2", "v1beta1"}

// Client is the typed part of a clientset that a Reader lists with
// (kubernetes.Interface and its fake satisfy it). NewReader builds only
// these groups' clients: the whole clientset links a client for every API
// group and version, about 4 MB of the binary for three it uses.
type Client interface {
	CoreV1() corev1client.CoreV1Interface
	AppsV1() appsv1client.AppsV1Interface
	BatchV1() batchv1client.BatchV1Interface
	Discovery() discovery.DiscoveryInterfaces
}

// Reader reads a cluster into Facts. It only gets and lists.
type Reader struct {
	Client    Client
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface // defaults to Client.Discovery()
	// Namespace scopes pods, ReplicaSets, Jobs, quotas and claims; "" = all.
	Namespace string
	// PageSize is the list Limit; 0 means DefaultPageSize.
	PageSize int64
	// Scope limits what is read and says whether whole objects are kept;
	// the zero Scope reads everything.
	Scope Scope
	// Dump, when set, receives every object read, as a DumpWriter writes
	// it (ReadDump reads it back).
	Dump io.Writer
	// Progress, when set, is called after each page with the resource and
	// the number of its objects read so far.
	Progress func(resource string, n int)
	// Timeout bounds each request, an exec credential plugin's run
	// included (client-go runs the plugin inside the request and does not
	// stop it); 0 means DefaultRequestTimeout.
	Timeout time.Duration
}

// DefaultRequestTimeout bounds each request to the cluster when neither
// --request-timeout nor the Reader says otherwise: a server that never
// answers ends the read with an error instead of hanging it.
const DefaultRequestTimeout = 60 * time.Second

// bounded runs call, and returns its result, or an error when ctx is done
// or timeout passes first (the call is then abandoned: an exec credential
// plugin that hangs is not waited for).
func bounded[T any](ctx context.Context, timeout time.Duration, what string, call func() (T, error)) (T, error) {
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var zero T
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-timer.C:
		return zero, fmt.Errorf("%s: no answer within %s (the request timeout; a credential plugin that hangs?): stopped", what, timeout)
	}
}

// Read reads the cluster. It returns an error only when the cluster cannot
// be reached at all (discovery of the server version fails); anything else
// that cannot be read becomes a Problem in the Facts.
func (r *Reader) Read(ctx context.Context) (*Facts, error) {
	if err := r.Scope.check(); err != nil {
		return nil, err
	}
	disc := r.Discovery
	if disc == nil {
		disc = r.Client.Discovery()
	}
	ls := &listing{Reader: r, ctx: ctx, c: NewCollector(), lim: r.PageSize}
	ls.c.keep = r.Scope.Objects
	ls.c.SetNamespace(r.Namespace)
	if r.Dump != nil {
		ls.dump = NewDumpWriter(r.Dump)
	}
	if ls.lim <= 0 {
		ls.lim = DefaultPageSize
	}

	sv, err := bounded(ctx, r.Timeout, "reading the server version", disc.ServerVersion)
	if err != nil {
		return nil, fmt.Errorf("reading the server version: %w", err)
	}
	var served []string
	var operatorGVRs []schema.GroupVersionResource
	var derr error
	if r.Scope.discovers() {
		type found struct {
			served    []string
			operators []schema.GroupVersionResource
		}
		var f found
		f, derr = bounded(ctx, r.Timeout, "discovery", func() (found, error) {
			s, o, err := discover(disc)
			return found{s, o}, err
		})
		served, operatorGVRs = f.served, f.operators
		if derr != nil {
			ls.c.AddProblem("discovery", derr.Error())
		}
	}
	ls.c.SetServer(sv.GitVersion, served)

	ls.typed()
	listVersions := served
	if derr != nil {
		// Discovery failed: still try the GA version rather than guess
		// that DRA is off.
		listVersions = ResourceVersions[:1]
	}
	ls.dra(listVersions)
	ls.operators(operatorGVRs)

	f := ls.c.Facts()
	if ls.dump != nil {
		if err := ls.dump.Close(f); err != nil {
			return f, fmt.Errorf("writing the dump: %w", err)
		}
	}
	return f, nil
}

// listing is one Read in progress: where its lists fold and dump their
// objects, and their page size.
type listing struct {
	*Reader
	ctx  context.Context
	c    *Collector
	dump *DumpWriter
	lim  int64
}

// add lists resource with list when the scope covers it, and records it
// as read, or its Problem.
func (ls *listing) add(resource string, list func() error) {
	if !ls.Scope.covers(resource) {
		return
	}
	if err := list(); err != nil {
		ls.c.AddProblem(resource, reason(err))
		return
	}
	ls.c.MarkRead(resource)
}

// typed lists the core, apps and batch types (and, with a namespace, the
// plugin and driver pods outside it).
func (ls *listing) typed() {
	ctx, r, c, lim, dump := ls.ctx, ls.Reader, ls.c, ls.lim, ls.dump
	core, apps, batch := r.Client.CoreV1(), r.Client.AppsV1(), r.Client.BatchV1()
	ns := r.Namespace
	ls.add("nodes", func() error {
		return listTyped(ctx, r, lim, "nodes", "v1", "Node", core.Nodes().List,
			func(l *corev1.NodeList) ([]corev1.Node, string) { return l.Items, l.Continue }, c.AddNode, dump)
	})
	// DaemonSets are read in every namespace: plugins live in kube-system
	// or an operator namespace whatever -n says.
	ls.add("daemonsets.apps", func() error {
		return listTyped(ctx, r, lim, "daemonsets", "apps/v1", "DaemonSet", apps.DaemonSets("").List,
			func(l *appsv1.DaemonSetList) ([]appsv1.DaemonSet, string) { return l.Items, l.Continue }, c.AddDaemonSet, dump)
	})
	ls.add("replicasets.apps", func() error {
		return listTyped(ctx, r, lim, "replicasets", "apps/v1", "ReplicaSet", apps.ReplicaSets(ns).List,
			func(l *appsv1.ReplicaSetList) ([]appsv1.ReplicaSet, string) { return l.Items, l.Continue }, c.AddReplicaSet, dump)
	})
	ls.add("jobs.batch", func() error {
		return listTyped(ctx, r, lim, "jobs", "batch/v1", "Job", batch.Jobs(ns).List,
			func(l *batchv1.JobList) ([]batchv1.Job, string) { return l.Items, l.Continue }, c.AddJob, dump)
	})
	ls.add("pods", func() error {
		return listTyped(ctx, r, lim, "pods", "v1", "Pod", core.Pods(ns).List,
			func(l *corev1.PodList) ([]corev1.Pod, string) { return l.Items, l.Continue }, c.AddPod, dump)
	})
	if ns != "" && r.Scope.covers("pods") {
		r.pluginPods(ctx, lim, c, dump)
	}
	ls.add("resourcequotas", func() error {
		return listTyped(ctx, r, lim, "resourcequotas", "v1", "ResourceQuota", core.ResourceQuotas(ns).List,
			func(l *corev1.ResourceQuotaList) ([]corev1.ResourceQuota, string) { return l.Items, l.Continue }, c.AddQuota, dump)
	})
}

// draResources are the resource.k8s.io types a Reader lists.
var draResources = []struct {
	name       string
	namespaced bool
}{{"deviceclasses", false}, {"resourceslices", false}, {"resourceclaims", true}, {"resourceclaimtemplates", true}}

// dra lists resource.k8s.io in the newest of versions; none means the
// cluster does not serve it, a Problem of each type.
func (ls *listing) dra(versions []string) {
	if len(versions) == 0 {
		for _, d := range draResources {
			if rn := d.name + ".resource.k8s.io"; ls.Scope.covers(rn) {
				ls.c.AddProblem(rn, "resource.k8s.io is not served by this cluster")
			}
		}
		return
	}
	for _, d := range draResources {
		gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: versions[0], Resource: d.name}
		rn := d.name + ".resource.k8s.io"
		var ri dynamic.ResourceInterface = ls.Dynamic.Resource(gvr)
		if d.namespaced {
			ri = ls.Dynamic.Resource(gvr).Namespace(ls.Namespace)
		}
		ls.add(rn, func() error { return ls.listUnstructured(ls.ctx, ri, ls.lim, rn, ls.c, ls.dump) })
	}
}

// operators lists the GPU Operator's resources that discovery found.
func (ls *listing) operators(gvrs []schema.GroupVersionResource) {
	for _, gvr := range gvrs {
		rn := gvr.Resource + "." + gvr.Group
		ls.add(rn, func() error { return ls.listUnstructured(ls.ctx, ls.Dynamic.Resource(gvr), ls.lim, rn, ls.c, ls.dump) })
	}
}

// pluginPods reads the device-plugin and driver pods outside the audited
// namespace: plugins and drivers are cluster-wide facts (a plugin in
// kube-system serves the nodes of every namespace's pods). Only plugin and
// driver pods are kept and dumped. When listing pods in all namespaces is
// not allowed, the namespaces of the device DaemonSets are tried, and
// Facts.PluginPodsScope says what was read.
func (r *Reader) pluginPods(ctx context.Context, lim int64, c *Collector, dump *DumpWriter) {
	list := func(pns string) error {
		return listTyped(ctx, r, lim, "pods", "v1", "Pod", r.Client.CoreV1().Pods(pns).List,
			func(l *corev1.PodList) ([]corev1.Pod, string) { return l.Items, l.Continue }, func(o *corev1.Pod) {
				if o.Namespace != r.Namespace && c.AddPluginPod(o) {
					dump.Write(o, "v1", "Pod")
				}
			}, nil)
	}
	err := list("")
	if err == nil {
		return
	}
	why := fmt.Sprintf("listing pods in all namespaces: %s", reason(err))
	var nss []string
	for _, ds := range c.f.DaemonSets {
		if ds.Namespace != r.Namespace && !slices.Contains(nss, ds.Namespace) {
			nss = append(nss, ds.Namespace)
		}
	}
	var read []string
	for _, pns := range nss {
		if err := list(pns); err != nil {
			why += fmt.Sprintf("; in namespace %s: %s", pns, reason(err))
			continue
		}
		read = append(read, pns)
	}
	where := "namespace " + r.Namespace
	if len(read) > 0 {
		where = "namespaces " + strings.Join(append([]string{r.Namespace}, read...), ", ")
	}
	c.SetPluginPodsScope(where + " only (" + why + ")")
}

// listTyped lists one typed resource page by page, writing each object to
// the dump and folding it with add.
func listTyped[L any, T any, PT interface {
	*T
	runtime.Object
}](ctx context.Context, r *Reader, lim int64, progress, apiVersion, kind string,
	list func(context.Context, metav1.ListOptions) (L, error), items func(L) ([]T, string), add func(PT), dump *DumpWriter) error {
	return page(ctx, lim, r.Timeout, r.progress(progress), func(o metav1.ListOptions) (L, error) {
		return list(ctx, o)
	}, func(l L) (string, int) {
		objs, cont := items(l)
		for i := range objs {
			o := PT(&objs[i])
			dump.Write(o, apiVersion, kind)
			add(o)
		}
		return cont, len(objs)
	})
}

func (r *Reader) listUnstructured(ctx context.Context, ri dynamic.ResourceInterface, lim int64, name string, c *Collector, dump *DumpWriter) error {
	return page(ctx, lim, r.Timeout, r.progress(name), func(o metav1.ListOptions) (*unstructured.UnstructuredList, error) {
		return ri.List(ctx, o)
	}, func(l *unstructured.UnstructuredList) (string, int) {
		for i := range l.Items {
			u := &l.Items[i]
			dump.WriteUnstructured(u)
			c.AddUnstructured(u)
		}
		return l.GetContinue(), len(l.Items)
	})
}

func (r *Reader) progress(resource string) func(int) {
	if r.Progress == nil {
		return nil
	}
	return func(n int) { r.Progress(resource, n) }
}

// page lists with Limit/Continue, handing each page to fold before asking
// for the next, so that only one page is held at a time; each request is
// bounded by timeout (bounded), and a continue token the server gave
// before ends the listing with an error (it would loop for ever).
func page[L any](ctx context.Context, limit int64, timeout time.Duration, progress func(int), list func(metav1.ListOptions) (L, error), fold func(L) (string, int)) error {
	opts := metav1.ListOptions{Limit: limit}
	total := 0
	seen := map[string]bool{}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := bounded(ctx, timeout, "listing", func() (L, error) { return list(opts) })
		if err != nil {
			return err
		}
		cont, n := fold(l)
		total += n
		if progress != nil {
			progress(total)
		}
		if cont == "" {
			return nil
		}
		if seen[cont] {
			return fmt.Errorf("the server returned a continue token it had given before, after %d objects: the listing would never end; stopped", total)
		}
		seen[cont] = true
		opts.Continue = cont
	}
}

// discover returns the served resource.k8s.io versions (newest first) and
// the GPU Operator resources that exist.
func discover(d discovery.DiscoveryInterface) (served []string, operators []schema.GroupVersionResource, err error) {
	groups, err := d.ServerGroups()
	if err != nil {
		return nil, nil, err
	}
	for _, g := range groups.Groups {
		switch g.Name {
		case "resource.k8s.io":
			for _, v := range g.Versions {
				served = append(served, v.Version)
			}
		case "nvidia.com":
			for _, v := range g.Versions {
				rl, err := d.ServerResourcesForGroupVersion(g.Name + "/" + v.Version)
				if err != nil {
					continue
				}
				for _, res := range rl.APIResources {
					if (res.Kind == "ClusterPolicy" || res.Kind == "GPUCluster") && !strings.Contains(res.Name, "/") {
						operators = append(operators, schema.GroupVersionResource{Group: g.Name, Version: v.Version, Resource: res.Name})
					}
				}
			}
		}
	}
	slices.SortFunc(served, compareAPIVersions)
	return served, operators, nil
}

// compareAPIVersions orders v1 < v1beta2 < v1beta1 < v1alpha3 (newest first).
func compareAPIVersions(a, b string) int {
	rank := func(v string) int {
		if i := slices.Index([]string{"v1", "v1beta2", "v1beta1", "v1alpha3"}, v); i >= 0 {
			return i
		}
		return 10
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	return strings.Compare(a, b)
}

// reason turns a list error into the short reason of a Problem.
func reason(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		var se apierrors.APIStatus
		if errors.As(err, &se) && se.Status().Message != "" {
			return "forbidden: " + se.Status().Message
		}
		return "forbidden"
	case apierrors.IsNotFound(err):
		return "not served by this cluster"
	}
	return err.Error()
}
