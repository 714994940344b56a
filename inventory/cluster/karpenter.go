package cluster

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Autoscaler is a node autoscaler's controller seen among the pods:
// Karpenter's, whose version and DRA setting decide whether pods that
// request devices through ResourceClaims make it provision nodes.
type Autoscaler struct {
	Namespace string `json:"namespace"`
	Pod       string `json:"pod"`
	Kind      string `json:"kind"` // "karpenter"
	Image     string `json:"image"`
	// Version is the image tag ("" when the image has none).
	Version string `json:"version,omitempty"`
	// IgnoreDRARequests is the IGNORE_DRA_REQUESTS setting as the pod
	// spec shows it: "true", "false", "default" (unset: Karpenter's
	// default, true), or "unknown" (set from a ConfigMap or Secret).
	IgnoreDRARequests string `json:"ignoreDRARequests"`
}

// karpenterController recognises Karpenter's controller pod: the
// controller image of karpenter (AWS, Azure and GCP providers ship it as
// .../karpenter/controller), or the Helm chart's name label.
func karpenterController(o *corev1.Pod) (Autoscaler, bool) {
	for _, c := range o.Spec.Containers {
		repo := imageRepo(c.Image)
		if !strings.Contains(repo, "karpenter") || (!strings.HasSuffix(repo, "/controller") && o.Labels["app.kubernetes.io/name"] != "karpenter") {
			continue
		}
		a := Autoscaler{Namespace: o.Namespace, Pod: o.Name, Kind: "karpenter", Image: c.Image, IgnoreDRARequests: "default"}
		if tag, ok := strings.CutPrefix(c.Image, repo+":"); ok {
			a.Version, _, _ = strings.Cut(tag, "@")
		}
		for _, e := range c.Env {
			if e.Name != "IGNORE_DRA_REQUESTS" {
				continue
			}
			switch v := strings.ToLower(strings.TrimSpace(e.Value)); {
			case e.ValueFrom != nil:
				a.IgnoreDRARequests = "unknown"
			case v == "false" || v == "true":
				a.IgnoreDRARequests = v
			}
		}
		for _, arg := range append(append([]string{}, c.Command...), c.Args...) {
			if v, ok := strings.CutPrefix(arg, "--ignore-dra-requests="); ok {
				a.IgnoreDRARequests = strings.ToLower(v)
			} else if arg == "--ignore-dra-requests" {
				a.IgnoreDRARequests = "true"
			}
		}
		return a, true
	}
	return Autoscaler{}, false
}
