package cluster

import (
	"fmt"
	"slices"
	"strings"
)

// Scope says which resource types a read covers and whether it keeps whole
// objects. The zero Scope reads every type and keeps summaries only, which
// is what audit needs; bundle reads three types, whole (bundle.Scope).
type Scope struct {
	// Resources are the resource types to read, named as in
	// a Problem's Resource (see ResourceTypes); nil reads them all.
	Resources []string
	// Objects keeps the Nodes, DaemonSets, ResourceQuotas and
	// resource.k8s.io/v1 ResourceSlices and DeviceClasses read, whole, in
	// Facts.Objects.
	Objects bool
}

// ResourceTypes are the resource types a Reader can read, named as in
// a Problem's Resource; the NVIDIA GPU Operator's are read only where
// discovery finds them.
var ResourceTypes = []string{
	"nodes", "daemonsets.apps", "replicasets.apps", "jobs.batch", "pods", "resourcequotas",
	"deviceclasses.resource.k8s.io", "resourceslices.resource.k8s.io",
	"resourceclaims.resource.k8s.io", "resourceclaimtemplates.resource.k8s.io",
	"clusterpolicies.nvidia.com", "gpuclusters.nvidia.com",
}

func (s Scope) check() error {
	for _, r := range s.Resources {
		if !slices.Contains(ResourceTypes, r) {
			return fmt.Errorf("unknown resource type %q: use %s", r, strings.Join(ResourceTypes, ", "))
		}
	}
	return nil
}

// covers reports whether the scope reads resource.
func (s Scope) covers(resource string) bool {
	return s.Resources == nil || slices.Contains(s.Resources, resource)
}

// discovers reports whether the scope needs API discovery: the
// resource.k8s.io version to list and the GPU Operator's types are found
// by discovery.
func (s Scope) discovers() bool {
	return s.Resources == nil || slices.ContainsFunc(s.Resources, func(r string) bool {
		return strings.HasSuffix(r, ".resource.k8s.io") || strings.HasSuffix(r, ".nvidia.com")
	})
}
