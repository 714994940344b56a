// Package action is kubedra's library layer: one call per job, which the
// CLI, the KRM function, the tests and the benchmarks all use.
//
//	Scan(ctx, Input, ScanOptions)            -> *ScanResult     every device request, with its DRA mapping
//	Check(ctx, Input, CheckOptions)          -> *CheckResult    Scan plus the gate's verdict per finding
//	Migrate(ctx, Input, MigrateOptions)      -> *MigrateResult  the rewrite, streamed file by file to its output
//	Fn{Mode}.Run(items, functionConfig)      -> *FnResult       Check or Migrate on a KRM function's items
//	Audit(ctx, ClusterSource, AuditOptions)  -> *audit.Report
//	Bundle(ctx, BundleOptions)               -> *bundle.Result, and BundleVerify
//	Explain(ExplainOptions)                  -> *Explanation    what one request becomes (rules show)
//	ValidateRules(dir, files, stdin)         -> []error
//
// An action takes Options and sources and returns a typed result. It never
// reads flags, prints, or exits: cmd/kubedra/app binds flags to Options,
// calls the action and renders the result with cmd/kubedra/app/report
// (helm's pkg/action and kind's pkg/cluster are the models). Problems in
// the inputs are inventory.Diagnostics in the result, appended by the
// stage that found them; an error return means the action could not run
// at all (bad options, rules that do not load, a context cancelled).
//
// The package is the only place where the stages meet: sources
// (inventory/files, inventory/cluster) -> detection (inventory/detect) ->
// decisions (rewrite/plan, rules) -> change (rewrite, rewrite/emit) or
// verdicts (audit, bundle). Each stage stays ignorant of the others.
package action
