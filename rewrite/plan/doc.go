// Package plan makes kubedra's decisions: for each finding, which rule maps
// it and how (Items, for scan and check), and for migrate the
// edits to make: claim template names, placement, strategy, and what cannot
// be migrated and why. It works on Findings and rules decisions, never on
// the input's YAML nodes (the only nodes it holds are the objects it
// plans to add, as the rules encode them); a Plan marshals to YAML
// (migrate --plan) so it can be reviewed as data.
//
// Items resolve findings for scan and check. A Planner plans migrate file
// by file (Build plans a set of findings at once), keeping only what
// naming needs across files; Ignores are an option of both, so nothing
// edits a finished result.
package plan
