// Package plan makes kubedra's decisions: for each finding, which rule maps
// it and how (Items, shared by scan, check and migrate), and for migrate the
// edits to make: claim template names, placement, strategy, and what cannot
// be migrated and why. It works on Findings and rules decisions, never on
// YAML nodes; a Plan marshals to YAML (migrate --plan) so it can be reviewed
// as data.
package plan
