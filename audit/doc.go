// Package audit turns cluster facts into checks and verdicts: is this
// cluster, node pool by node pool, ready to move from device plugins to
// DRA, and what conflicts or blocks the cutover.
//
// It has a home of its own because its inputs and its questions differ from
// manifest detection. inventory/detect reports facts about pod templates
// written in files; audit reasons about a running cluster: which nodes
// advertise extended resources, which run device-plugin or DRA-driver pods,
// which publish ResourceSlices, which DaemonSets would land where, what the
// DeviceClasses and quotas say. The flow is one way:
//
//	inventory/cluster.Facts  ->  checks (Checks)  ->  Report (findings, verdicts)
//
// Facts come from a live read or a dump (package inventory/cluster); Run
// never talks to a cluster, so every check is a pure function tested on
// Facts built from testdata/cluster/*.yaml. The workloads still on device
// plugins are detected with inventory/detect on the Document inventory/cluster
// made of each distinct pod template, and decided with the rules
// (plan.Items with a plan.Resolver), the same path scan uses, so audit and
// scan agree on mapping status.
//
// Each check has a stable id (docs/audit.md lists them), a severity, the
// objects it names and an actionable message. A check that needs a resource
// type that could not be read is reported as skipped, never as passed.
package audit
