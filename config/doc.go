// Package config is the repository's configuration, the .kubedra.yaml
// model: the defaults a repository sets for every kubedra command run in
// it (docs/config.md).
//
//	Load(explicit, getenv, wd) -> *Config   --config, else KUBEDRA_CONFIG, else the first
//	                                        .kubedra.yaml in wd or a folder above it
//	Parse(data)                -> *Config   the file's values, checked
//	(*Config).Value(key)                    a key as flag text (rules resolved from the file's folder)
//	(*Config).Ignores(wd)      -> *plan.Ignores  the ignore: entries, a planning option
//
// It is a package because the file is a format of its own, with its own
// rules, and no job owns it: it is found by walking up from the working
// folder; it is parsed with every error at its line (file:line: ...,
// through inventory.LineError); its keys match exactly, so an unknown or
// mis-cased key (fail_on:, FAILON:) is refused instead of silently doing
// nothing. The CLI reads it for its flags' defaults (cmd/kubedra/app/flags:
// flags beat KUBEDRA_* variables, which beat the file) and hands its
// ignores to the actions as plan.Ignores; the KRM function (action.Fn)
// takes the same settings (failOn, rules, strategy, allowLossy) from its
// functionConfig instead. Neither the CLI's flag wiring nor action, which
// never reads flags or configuration files, is its home.
//
// Config reads; it decides nothing. It checks values against the names
// rewrite/plan and rules define (strategies, versions, ignore rules) and
// never imports action or cmd (depcheck_test.go).
package config
