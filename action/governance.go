package action

import (
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// withGovernance adds the findings about objects that count or govern
// devices (status governance) to the items, in order. Scan judges them
// as migrate's default strategy (claims) would leave them.
func withGovernance(items []plan.Item, govs []inventory.GovFinding, set *rules.Set, opts ScanOptions) []plan.Item {
	if len(govs) == 0 {
		return items
	}
	target := opts.Target
	if target == (rules.Version{}) {
		target = rules.DefaultTarget
	}
	gopts := plan.GovOptions{Resolver: set, Strategy: plan.Claims, Target: target, Ignore: opts.Ignore, Queued: plan.KueueQueued(items, false)}
	items = append(items, plan.GovernanceItems(govs, gopts)...)
	plan.SortItems(items)
	return items
}
