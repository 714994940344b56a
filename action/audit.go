package action

import (
	"context"

	"github.com/kubedra/kubedra/audit"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// AuditOptions steer Audit.
type AuditOptions struct {
	// Rules decide the mapping status of the workloads still on device
	// plugins (rules.Load of the user's files); nil means rules.Default().
	Rules plan.Resolver
	// Target is the Kubernetes version the rules decide for; zero derives
	// it from the server version.
	Target rules.Version
}

// Audit reads the cluster of src and runs every audit check on it. It
// fails only when the cluster (or the dump) cannot be read at all; what
// could not be read is in the report's Problems.
func Audit(ctx context.Context, src ClusterSource, opts AuditOptions) (*audit.Report, error) {
	facts, err := ReadCluster(ctx, src)
	if err != nil {
		return nil, err
	}
	if opts.Rules == nil {
		opts.Rules = rules.Default()
	}
	return audit.Run(facts, audit.Options{Resolver: opts.Rules, Target: opts.Target}), nil
}
