package plan

import (
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// The annotations that make an object a Helm hook
// (https://helm.sh/docs/topics/charts_hooks/).
const (
	HelmHookAnnotation             = "helm.sh/hook"
	HelmHookWeightAnnotation       = "helm.sh/hook-weight"
	HelmHookDeletePolicyAnnotation = "helm.sh/hook-delete-policy"
)

// helmHook makes the claim template of a Helm hook workload a hook of the
// same events, one weight before the workload, with the workload's delete
// policy. Helm 4 post-renders hooks (Helm 3 does not): a template that were
// an ordinary release object would be created only after the pre-install
// hooks ran, so the hook's pods would wait for a template that never comes.
// Helm reads a weight that is no integer as 0, and so does this.
func helmHook(n *yaml.RNode, wl *inventory.Workload) error {
	if wl == nil || strings.TrimSpace(wl.Annotations[HelmHookAnnotation]) == "" {
		return nil
	}
	weight, err := strconv.Atoi(strings.TrimSpace(wl.Annotations[HelmHookWeightAnnotation]))
	if err != nil {
		weight = 0
	}
	set := []yaml.Filter{
		yaml.SetAnnotation(HelmHookAnnotation, wl.Annotations[HelmHookAnnotation]),
		yaml.SetAnnotation(HelmHookWeightAnnotation, strconv.Itoa(weight-1)),
	}
	if p := wl.Annotations[HelmHookDeletePolicyAnnotation]; p != "" {
		set = append(set, yaml.SetAnnotation(HelmHookDeletePolicyAnnotation, p))
	}
	for _, f := range set {
		if err := n.PipeE(f); err != nil {
			return err
		}
	}
	return nil
}
