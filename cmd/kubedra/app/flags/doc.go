// Package flags holds the flag groups kubedra's commands share, as
// k8s.io/cli-runtime's genericclioptions does for kubectl: a group is a
// struct that binds its flags to a command's FlagSet and turns what was
// parsed into what package action takes.
//
//	Inputs   PATH arguments and -f, --rules, --target-version, --color, -q,
//	         --config and the charts' Helm values (--values, --set, ...)
//	         -> action.Input, the rules, the colour profile, the ignores
//	Cluster  --from-dump and kubectl's connection flags -> action.ClusterSource
//
// Flags the user did not give are filled from KUBEDRA_* variables, then
// from .kubedra.yaml (package config): ApplyDefaults. A flag's bad value is
// an Error, a usage error, which cmd/kubedra/app prints with a hint to
// --help and ends with exit 1.
package flags
