package cluster

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// InfoAPIVersion and InfoKind name the dump document that records what the
// live read knew besides the objects.
const (
	InfoAPIVersion = "kubedra.dev/v1alpha1"
	InfoKind       = "ClusterInfo"
)

// Info is the ClusterInfo document at the end of a dump.
type Info struct {
	APIVersion          string        `json:"apiVersion"`
	Kind                string        `json:"kind"`
	ServerVersion       string        `json:"serverVersion,omitempty"`
	ResourceAPIVersions []string      `json:"resourceAPIVersions"`
	Namespace           string        `json:"namespace,omitempty"`
	PluginPodsScope     string        `json:"pluginPodsScope,omitempty"`
	Read                []string      `json:"read"`
	Problems            []InfoProblem `json:"problems,omitempty"`
}

// InfoProblem is a Problem as ClusterInfo holds it: the live read's
// Diagnostic. Dumps written before Problems were Diagnostics (issue 23)
// hold only resource and reason; ReadDump still reads them.
type InfoProblem struct {
	inventory.Diagnostic `json:",inline"`
	// Reason is an older dump's reason ("forbidden: ..."), "" in newer ones.
	Reason string `json:"reason,omitempty"`
}

// diagnostic is p as the live read made it.
func (p InfoProblem) diagnostic() inventory.Diagnostic {
	if p.Message == "" {
		return Problem(p.Resource, p.Reason)
	}
	return p.Diagnostic
}

// DumpWriter writes objects as a multi-document YAML stream, as they are
// read. A nil *DumpWriter discards everything, so readers call it blindly.
type DumpWriter struct {
	w   *bufio.Writer
	err error
}

// NewDumpWriter starts a dump on w.
func NewDumpWriter(w io.Writer) *DumpWriter { return &DumpWriter{w: bufio.NewWriterSize(w, 1<<16)} }

// Write writes a typed object; list items carry no apiVersion and kind, so
// they are given. managedFields are dropped: they are large and no check
// reads them.
func (d *DumpWriter) Write(obj runtime.Object, apiVersion, kind string) {
	if d == nil || d.err != nil {
		return
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		d.err = err
		return
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	d.WriteUnstructured(u)
}

// WriteUnstructured writes an unstructured object.
func (d *DumpWriter) WriteUnstructured(u *unstructured.Unstructured) {
	if d == nil || d.err != nil {
		return
	}
	o := u.Object
	if md, ok := o["metadata"].(map[string]any); ok {
		if _, has := md["managedFields"]; has {
			md2 := make(map[string]any, len(md))
			for k, v := range md {
				if k != "managedFields" {
					md2[k] = v
				}
			}
			o2 := make(map[string]any, len(o))
			for k, v := range o {
				o2[k] = v
			}
			o2["metadata"] = md2
			o = o2
		}
	}
	d.doc(o)
}

func (d *DumpWriter) doc(v any) {
	b, err := yaml.Marshal(v)
	if err != nil {
		d.err = err
		return
	}
	if _, err := d.w.WriteString("---\n"); err != nil {
		d.err = err
		return
	}
	if _, err := d.w.Write(b); err != nil {
		d.err = err
	}
}

// Close writes the ClusterInfo document for f and flushes.
func (d *DumpWriter) Close(f *Facts) error {
	if d == nil {
		return nil
	}
	info := Info{APIVersion: InfoAPIVersion, Kind: InfoKind, ServerVersion: f.ServerVersion,
		ResourceAPIVersions: f.ResourceAPIVersions, Namespace: f.Namespace, PluginPodsScope: f.PluginPodsScope, Read: f.Read}
	for _, p := range f.Problems {
		info.Problems = append(info.Problems, InfoProblem{Diagnostic: p})
	}
	d.doc(info)
	if d.err != nil {
		return d.err
	}
	return d.w.Flush()
}

// NotInDump is the reason given for resource types a dump without
// ClusterInfo holds no object of: kubectl's output does not say whether they
// were left out or there are none.
const NotInDump = "not in the dump (or none exist)"

// dumpResources are the resource types a live read covers; a dump without
// ClusterInfo (kubectl's) that holds none of one of them reports it.
var dumpResources = map[string]string{
	"Node": "nodes", "DaemonSet": "daemonsets.apps", "ReplicaSet": "replicasets.apps", "Job": "jobs.batch",
	"Pod": "pods", "ResourceQuota": "resourcequotas", "DeviceClass": "deviceclasses.resource.k8s.io",
	"ResourceSlice": "resourceslices.resource.k8s.io", "ResourceClaim": "resourceclaims.resource.k8s.io",
	"ResourceClaimTemplate": "resourceclaimtemplates.resource.k8s.io",
}

// operatorResources are the GPU Operator's resource types, by kind.
var operatorResources = map[string]string{"ClusterPolicy": "clusterpolicies.nvidia.com", "GPUCluster": "gpuclusters.nvidia.com"}

// ReadDump reads a dump written by Reader (or kubectl get -o yaml|json
// output: a kind: List, or documents) and returns the same Facts the live
// read with the same Scope gave. Objects of other kinds, and of resource
// types outside scope, are skipped before they are decoded into types; a
// JSON List is streamed item by item. An object the dump holds twice is
// read once, and two different copies are an error naming both places.
func ReadDump(r io.Reader, scope Scope) (*Facts, error) {
	if err := scope.check(); err != nil {
		return nil, err
	}
	d := &dumpRead{scope: scope, c: NewCollector(), seen: map[string]bool{}, resourceVersions: map[string]bool{}}
	d.c.keep = scope.Objects
	if err := eachObject(r, d.object); err != nil {
		return nil, err
	}
	if d.info != nil {
		d.fromInfo()
	} else {
		d.fromKubectl()
	}
	return d.c.Facts(), nil
}

// dumpRead is one ReadDump in progress.
type dumpRead struct {
	scope Scope
	c     *Collector
	// info is the dump's ClusterInfo, nil in kubectl's output.
	info *Info
	// seen are the kinds read, resourceVersions the resource.k8s.io
	// versions the objects were written in.
	seen             map[string]bool
	resourceVersions map[string]bool
	once             dedup
}

// object folds one object of the dump, or takes it as the ClusterInfo.
func (d *dumpRead) object(o dumpObject) error {
	u := &unstructured.Unstructured{Object: o.obj}
	if u.GetAPIVersion() == InfoAPIVersion && u.GetKind() == InfoKind {
		d.info = &Info{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.obj, d.info); err != nil {
			return fmt.Errorf("%s: %s: %w", o.place, InfoKind, err)
		}
		return nil
	}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		return fmt.Errorf("%s: not a Kubernetes object (no apiVersion or kind)", o.place)
	}
	if res := cmp.Or(dumpResources[u.GetKind()], operatorResources[u.GetKind()]); res != "" && !d.scope.covers(res) {
		return nil
	}
	if ok, err := d.once.first(o, u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName()); err != nil || !ok {
		return err
	}
	if err := addObject(d.c, u); err != nil {
		return fmt.Errorf("%s: %s: %w", o.place, inventory.ObjectRef{Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}, err)
	}
	d.seen[u.GetKind()] = true
	if g, v, ok := strings.Cut(u.GetAPIVersion(), "/"); ok && g == "resource.k8s.io" {
		d.resourceVersions[v] = true
	}
	return nil
}

// inScope reports whether the scope reads resource ("discovery" included).
func (d *dumpRead) inScope(resource string) bool {
	if resource == "discovery" {
		return d.scope.discovers()
	}
	return d.scope.covers(resource)
}

// fromInfo takes what the live read knew from the ClusterInfo, within
// the scope.
func (d *dumpRead) fromInfo() {
	info := d.info
	served := info.ResourceAPIVersions
	if !d.scope.discovers() {
		served = nil
	}
	d.c.SetServer(info.ServerVersion, served)
	d.c.SetNamespace(info.Namespace)
	d.c.SetPluginPodsScope(info.PluginPodsScope)
	for _, r := range info.Read {
		if d.inScope(r) {
			d.c.MarkRead(r)
		}
	}
	for _, p := range info.Problems {
		if d.inScope(p.Resource) {
			d.c.addDiagnostic(p.diagnostic())
		}
	}
}

// fromKubectl infers what kubectl's output does not say: no server
// version and no discovery, so the checks that need them are skipped; the
// served resource.k8s.io versions shown are those the objects were
// written in; a type without objects is not in the dump.
func (d *dumpRead) fromKubectl() {
	var served []string
	for v := range d.resourceVersions {
		served = append(served, v)
	}
	slices.SortFunc(served, compareAPIVersions)
	d.c.SetServer("", served)
	if d.inScope("discovery") {
		d.c.addDiagnostic(notInDump("discovery"))
	}
	d.markKinds(dumpResources)
	// Nor does it say whether the GPU Operator's resources exist.
	d.markKinds(operatorResources)
}

// markKinds records each resource type of kinds (by kind) in scope as
// read when the dump holds one of its objects, else as not in the dump.
func (d *dumpRead) markKinds(kinds map[string]string) {
	for kind, res := range kinds {
		if !d.inScope(res) {
			continue
		}
		if d.seen[kind] {
			d.c.MarkRead(res)
		} else {
			d.c.addDiagnostic(notInDump(res))
		}
	}
}

// fieldError says which field of obj does not decode into into: the
// converter's error does not ("unrecognized type: int64"), encoding/json's
// does, so the object is decoded again through JSON to find it.
func fieldError(obj map[string]any, into any, err error) error {
	data, jerr := json.Marshal(obj)
	if jerr != nil {
		return err
	}
	var te *json.UnmarshalTypeError
	if errors.As(json.Unmarshal(data, reflect.New(reflect.TypeOf(into).Elem()).Interface()), &te) && te.Field != "" {
		return fmt.Errorf("%s: %s where %s is wanted", te.Field, article(te.Value), te.Type)
	}
	return err
}

// article puts "a" or "an" before a JSON value's kind ("string", "array").
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

func addObject(c *Collector, u *unstructured.Unstructured) error {
	conv := func(into any) error {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
			return fieldError(u.Object, into, err)
		}
		return nil
	}
	switch u.GetAPIVersion() + " " + u.GetKind() {
	case "v1 Node":
		var o corev1.Node
		if err := conv(&o); err != nil {
			return err
		}
		c.AddNode(&o)
	case "v1 Pod":
		var o corev1.Pod
		if err := conv(&o); err != nil {
			return err
		}
		c.AddPod(&o)
	case "v1 ResourceQuota":
		var o corev1.ResourceQuota
		if err := conv(&o); err != nil {
			return err
		}
		c.AddQuota(&o)
	case "apps/v1 DaemonSet":
		var o appsv1.DaemonSet
		if err := conv(&o); err != nil {
			return err
		}
		c.AddDaemonSet(&o)
	case "apps/v1 ReplicaSet":
		var o appsv1.ReplicaSet
		if err := conv(&o); err != nil {
			return err
		}
		c.AddReplicaSet(&o)
	case "batch/v1 Job":
		var o batchv1.Job
		if err := conv(&o); err != nil {
			return err
		}
		c.AddJob(&o)
	default:
		c.AddUnstructured(u)
	}
	return nil
}

// ReadDumpFile reads the dump file at path ("-": stdin; a relative path
// from dir) into Facts, as ReadDump does; errors name the dump.
func ReadDumpFile(path, dir string, stdin io.Reader, scope Scope) (*Facts, error) {
	in := stdin
	if path == "-" && in == nil {
		return nil, errors.New("reading dump -: no standard input")
	}
	if path != "-" {
		f, err := os.Open(inventory.Resolve(dir, path))
		if err != nil {
			return nil, fmt.Errorf("reading dump: %w", err)
		}
		defer f.Close()
		in = f
	}
	facts, err := ReadDump(in, scope)
	if err != nil {
		return nil, fmt.Errorf("reading dump %s: %w", path, err)
	}
	return facts, nil
}
