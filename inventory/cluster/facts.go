package cluster

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubedra/kubedra/inventory"
)

// Role says what a pod or DaemonSet does for devices.
type Role string

// Roles of device software found on a cluster.
const (
	// DevicePlugin registers extended resources with the kubelet through
	// /var/lib/kubelet/device-plugins.
	DevicePlugin Role = "device-plugin"
	// DRADriver is a DRA kubelet plugin that publishes ResourceSlices.
	DRADriver Role = "dra-driver"
)

// Facts is what a cluster audit needs from a cluster: plain data, sorted
// deterministically, serializable. Lists are nil when nothing was found.
type Facts struct {
	// ServerVersion is the API server's git version, e.g. "v1.37.2"; ""
	// when unknown (a kubectl dump).
	ServerVersion string `json:"serverVersion,omitempty"`
	// ResourceAPIVersions are the served resource.k8s.io versions, newest
	// first (v1, v1beta2, v1beta1, v1alpha3).
	ResourceAPIVersions []string `json:"resourceAPIVersions"`
	// Namespace scopes pods, workloads, quotas and claims; "" = all.
	Namespace string `json:"namespace,omitempty"`

	Nodes         []Node           `json:"nodes"`
	DaemonSets    []DaemonSet      `json:"daemonSets"`
	PluginPods    []PluginPod      `json:"pluginPods"`
	Slices        []SliceGroup     `json:"slices"`
	DeviceClasses []DeviceClass    `json:"deviceClasses"`
	Claims        []ClaimCount     `json:"claims"`
	Workloads     []Workload       `json:"workloads"`
	Quotas        []Quota          `json:"quotas"`
	Operators     []OperatorPolicy `json:"operators"`

	// Autoscalers are the node autoscalers' controllers seen (Karpenter).
	Autoscalers []Autoscaler `json:"autoscalers,omitempty"`
	// PluginPodsScope is "" when device-plugin and driver pods were read in
	// every namespace (they are cluster-wide facts, whatever Namespace
	// says); else it says where they were read and why not everywhere.
	PluginPodsScope string `json:"pluginPodsScope,omitempty"`
	// Read lists the resource types that were read (plural resource names,
	// e.g. "nodes", "resourceslices").
	Read []string `json:"read"`
	// Problems are the resource types that could not be read, and why:
	// one Diagnostic each (RuleUnreadable, RuleNotInDump), by Resource.
	Problems inventory.Diagnostics `json:"problems"`

	// Objects holds whole objects when the read's Scope asked for them
	// (Scope.Objects), else nil. It is never part of the facts' JSON.
	Objects *Objects `json:"-"`
}

// Objects are the whole Nodes, DaemonSets and ResourceQuotas of a read, in
// the order they were read, without managedFields (as in a dump). bundle
// needs them: its patches and rollbacks copy DaemonSets' affinity, and it
// matches DaemonSets that no signature of ClassifyPod knows.
type Objects struct {
	Nodes      []corev1.Node
	DaemonSets []appsv1.DaemonSet
	Quotas     []corev1.ResourceQuota
	// ResourceSlices and DeviceClasses are the resource.k8s.io/v1 ones
	// (what simulate's allocator takes), as read; other served versions'
	// are summarised in Facts only.
	ResourceSlices []resourceapi.ResourceSlice
	DeviceClasses  []resourceapi.DeviceClass
}

// Rule ids of the Problems of a read.
const (
	// RuleUnreadable: a resource type could not be read (forbidden, not
	// served, a failed list); the audit is partial and exits 1.
	RuleUnreadable = "cluster/unreadable"
	// RuleNotInDump: a dump without ClusterInfo (kubectl's) holds no object
	// of a resource type; the checks that need it are skipped.
	RuleNotInDump = "cluster/not-in-dump"
)

// Problem is the Diagnostic of a resource type that could not be read:
// Resource is its plural name, with its group when not core (e.g.
// "resourcequotas" or "resourceslices.resource.k8s.io"), and the message
// "could not read RESOURCE: REASON".
func Problem(resource, reason string) inventory.Diagnostic {
	return inventory.Diagnostic{Severity: inventory.Error, Rule: RuleUnreadable, Resource: resource,
		Message: "could not read " + resource + ": " + reason}
}

// notInDump is the Problem of a resource type a dump without ClusterInfo
// holds no object of: a warning, since kubectl's output does not say
// whether they were left out or there are none.
func notInDump(resource string) inventory.Diagnostic {
	return inventory.Diagnostic{Severity: inventory.Warning, Rule: RuleNotInDump, Resource: resource,
		Message: "could not read " + resource + ": " + NotInDump}
}

// Missing reports whether resource (as in a Problem's Resource, or its
// plural name without group) could not be read.
func (f *Facts) Missing(resource string) bool {
	for _, p := range f.Problems {
		if p.Resource == resource || trimGroup(p.Resource) == resource {
			return true
		}
	}
	return false
}

// Node is a node's device-relevant facts.
type Node struct {
	Name          string            `json:"name"`
	Labels        map[string]string `json:"labels,omitempty"`
	Taints        []corev1.Taint    `json:"taints,omitempty"`
	Unschedulable bool              `json:"unschedulable,omitempty"`
	// Allocatable holds the extended resources of status.allocatable (what
	// device plugins advertise), quantities as strings.
	Allocatable    map[string]string `json:"allocatable,omitempty"`
	OSImage        string            `json:"osImage,omitempty"`
	KubeletVersion string            `json:"kubeletVersion,omitempty"`
	ProviderID     string            `json:"providerID,omitempty"`
	// Pool is the node's pool and PoolLabel the label it came from (see
	// PoolLabels), else the instance type (InstanceTypeLabel); "" when
	// none is set.
	Pool      string `json:"pool,omitempty"`
	PoolLabel string `json:"poolLabel,omitempty"`
	// Platform markers.
	Provider     string `json:"provider,omitempty"` // eks, gke, aks or ""
	Karpenter    bool   `json:"karpenter,omitempty"`
	EKSAutoMode  bool   `json:"eksAutoMode,omitempty"`
	Bottlerocket bool   `json:"bottlerocket,omitempty"`
	InstanceType string `json:"instanceType,omitempty"`
}

// Object returns a minimal corev1.Node (name, labels, taints, allocatable
// names) for placement evaluation.
func (n Node) Object() *corev1.Node {
	o := &corev1.Node{}
	o.Name = n.Name
	o.Labels = n.Labels
	o.Spec.Taints = n.Taints
	o.Spec.Unschedulable = n.Unschedulable
	return o
}

// AllocatableCounts are the quantities of Allocatable as numbers; one
// that does not parse is left out.
func (n Node) AllocatableCounts() map[string]int64 {
	out := map[string]int64{}
	for r, v := range n.Allocatable {
		if q, err := resource.ParseQuantity(v); err == nil {
			out[r] = q.Value()
		}
	}
	return out
}

// PoolName returns the pool, or "-" when the node has none.
func (n Node) PoolName() string {
	if n.Pool == "" {
		return "-"
	}
	return n.Pool
}

// Placement is the part of a pod spec that decides where it may run.
type Placement struct {
	// NodeName pins the pod to one node ("" when unset).
	NodeName     string              `json:"nodeName,omitempty"`
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	// HostNetwork pods of a DaemonSet also tolerate
	// node.kubernetes.io/network-unavailable (DaemonSetCanSchedule).
	HostNetwork bool `json:"hostNetwork,omitempty"`
}

// PlacementOf extracts the placement of a pod spec.
func PlacementOf(spec *corev1.PodSpec) Placement {
	p := Placement{NodeName: spec.NodeName, NodeSelector: spec.NodeSelector, Tolerations: spec.Tolerations, HostNetwork: spec.HostNetwork}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		p.Affinity = &corev1.Affinity{NodeAffinity: spec.Affinity.NodeAffinity.DeepCopy()}
	}
	return p
}

// DaemonSet is a DaemonSet recognised as a device plugin or DRA driver.
type DaemonSet struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Role      Role   `json:"role"`
	// Family is the device family served ("" when unknown).
	Family string `json:"family,omitempty"`
	// Evidence says how it was recognised, e.g. "image nvcr.io/nvidia/k8s-device-plugin:v0.17.0".
	Evidence  string    `json:"evidence"`
	Images    []string  `json:"images,omitempty"`
	Placement Placement `json:"placement"`
	// Desired is status.desiredNumberScheduled.
	Desired int32 `json:"desired"`
}

// PluginPod is a running (or pending) device-plugin or DRA kubelet-plugin pod.
type PluginPod struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node,omitempty"`
	Role      Role   `json:"role"`
	Family    string `json:"family,omitempty"`
	Evidence  string `json:"evidence"`
	// DaemonSet is the owning DaemonSet's name, "" for other pods.
	DaemonSet string `json:"daemonSet,omitempty"`
}

// SliceGroup sums the ResourceSlices of one driver on one node ("" for
// slices not bound to a node).
type SliceGroup struct {
	Node    string `json:"node,omitempty"`
	Driver  string `json:"driver"`
	Family  string `json:"family,omitempty"`
	Slices  int    `json:"slices"`
	Devices int    `json:"devices"`
}

// DeviceClass is a DeviceClass's name mapping facts.
type DeviceClass struct {
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion"`
	// Created is metadata.creationTimestamp in RFC 3339 ("" when unset).
	Created              string `json:"created,omitempty"`
	ExtendedResourceName string `json:"extendedResourceName,omitempty"`
	// Drivers are the drivers named in `device.driver == "..."` selectors.
	Drivers []string `json:"drivers,omitempty"`
}

// ClaimCount counts ResourceClaims and ResourceClaimTemplates per namespace.
type ClaimCount struct {
	Namespace string `json:"namespace"`
	Claims    int    `json:"claims"`
	Templates int    `json:"templates"`
	// Extended counts claims the scheduler made for KEP-5004 requests.
	Extended int `json:"extended,omitempty"`
}

// Request is one container's extended-resource request in a workload.
type Request struct {
	Container      string `json:"container"`
	ContainerIndex int    `json:"containerIndex"`
	// ContainerType is container, init or sidecar.
	ContainerType string `json:"containerType"`
	Resource      string `json:"resource"`
	// Quantity is the limit, else the request.
	Quantity string `json:"quantity"`
}

// Workload is a top-level owner (Deployment, StatefulSet, Job, CronJob,
// custom resource, or the Pod itself) whose pods request extended resources.
type Workload struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
	// Pods is the number of its pods read.
	Pods int `json:"pods"`
	// Requests are the requests of its first pod (by name).
	Requests []Request `json:"requests"`
	// DRABacked counts pods whose requests the scheduler served from DRA
	// (status.extendedResourceClaimStatus set).
	DRABacked int `json:"draBacked,omitempty"`
	// Template is the pod spec of its first pod, trimmed to containers'
	// names and resources and the placement fields.
	Template *corev1.PodSpec `json:"template,omitempty"`
	// Document is Template as a v1 Pod document, what inventory/detect
	// reads (see podDocument); workloads with equal templates share one.
	// It is nil when Template is, or when it could not be made: then
	// DocumentError says why, and audit reports it.
	Document      *inventory.Document `json:"-"`
	DocumentError string              `json:"-"`
}

// Quota is a ResourceQuota with device keys.
type Quota struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Hard holds only device keys: requests.<extended resource>,
	// <class>.deviceclass.resource.k8s.io/devices,
	// requests.deviceclass.resource.kubernetes.io/<class>, count/resourceclaims.resource.k8s.io.
	Hard map[string]string `json:"hard"`
}

// OperatorPolicy is an NVIDIA GPU Operator ClusterPolicy or GPUCluster.
type OperatorPolicy struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	// DevicePlugin is spec.devicePlugin.enabled of a ClusterPolicy (nil
	// when unset, which means enabled).
	DevicePlugin *bool `json:"devicePlugin,omitempty"`
	// MIGStrategy is spec.mig.strategy of a ClusterPolicy.
	MIGStrategy string `json:"migStrategy,omitempty"`
}
