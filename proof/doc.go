// Package proof checks a migration by what gets deployed. Each deployable
// unit a migration reaches (a kustomization nothing else includes) is
// rendered before and after with the real engine (kustomize's krusty, in
// process), and every pod template of the render is compared container by
// container: the devices it gets (extended resources, and claims resolved
// through the pod's resourceClaims to the ResourceClaimTemplate or
// ResourceClaim in the render and the pod's namespace: device class,
// count, selectors, capacity, constraints) must be the same devices after
// as before, with no device-plugin request left beside a claim for it.
//
// It is a package of its own because it must not share the planner's
// reasoning: it reads rendered objects, never findings, rules or plans
// (depcheck_test.go keeps rules and rewrite out of its imports), and
// knows which driver serves a device class only from DeviceClass objects
// (the render's, and the driver catalogue's that the caller passes) and
// which family an extended resource belongs to from detect's table of
// device families, which the planner does not use.
package proof
