package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kubedra/kubedra/inventory"
)

// RuleClaimRequests: a container now sees every device of a claim whose
// requests it used only some of.
const RuleClaimRequests = "migrate/claim-requests"

// oneRefPerClaim makes each container name each pod claim once. A
// container's resources.claims is a list map keyed by name alone
// (+listMapKey=name in k8s.io/api core/v1): CRDs whose schemas embed a pod
// spec (MPIJob, RayCluster, JobSet, ...) reject two entries of one claim,
// and server-side apply cannot merge them. A container that uses several
// requests of one claim names the claim without a request instead, which
// gives it all of the claim's requests: exact when it used them all, and
// reported when it used only some.
func (b *builder) oneRefPerClaim(dp *DocPlan, pods []*pod) {
	for pi := range dp.Pods {
		pe := &dp.Pods[pi]
		pd := podAt(pods, pe.Path)
		for ci := range pe.Containers {
			c := &pe.Containers[ci]
			var out []ContainerClaim
			for _, cc := range c.Claims {
				i := slices.IndexFunc(out, func(o ContainerClaim) bool { return o.Name == cc.Name })
				if i < 0 {
					out = append(out, cc)
					continue
				}
				if out[i].Request == "" || cc.Request == "" {
					out[i].Request = ""
					continue
				}
				used := []string{out[i].Request, cc.Request}
				out[i].Request = ""
				if pd == nil {
					continue
				}
				all := claimRequests(pd, cc.Name)
				for _, x := range c.Claims {
					if x.Name == cc.Name && x.Request != "" && !slices.Contains(used, x.Request) {
						used = append(used, x.Request)
					}
				}
				if len(used) < len(all) {
					f := findingOf(pd, c)
					b.diag(inventory.Warning, RuleClaimRequests, f,
						fmt.Sprintf("container %s uses requests %s of claim %s, which also holds %s: a container names a claim once, so it now sees all of the claim's devices",
							c.Name, strings.Join(used, ", "), cc.Name, strings.Join(without(all, used), ", ")), "")
				}
			}
			c.Claims = out
		}
	}
}

// podAt returns the pod template planned at path.
func podAt(pods []*pod, path string) *pod {
	for _, pd := range pods {
		if pd.findings[0].PodTemplatePath == path {
			return pd
		}
	}
	return nil
}

// claimRequests are the request names of the pod's claim named name.
func claimRequests(pd *pod, name string) []string {
	var out []string
	for _, c := range pd.res.Claims {
		if c.Name == name {
			for _, r := range c.Spec.Devices.Requests {
				out = append(out, r.Name)
			}
		}
	}
	return out
}

// findingOf is the first finding of a container.
func findingOf(pd *pod, c *ContainerEdit) inventory.Finding {
	for _, f := range pd.findings {
		if f.Container == c.Name && f.ContainerType == c.Type && f.ContainerIndex == c.Index {
			return f
		}
	}
	return pd.findings[0]
}

func without(all, drop []string) []string {
	var out []string
	for _, s := range all {
		if !slices.Contains(drop, s) {
			out = append(out, s)
		}
	}
	return out
}
