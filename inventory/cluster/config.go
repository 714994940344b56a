package cluster

import (
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	// Cloud auth plugins (OIDC and friends) for kubeconfigs that name them;
	// exec plugins (aws, gke-gcloud-auth-plugin, kubelogin) need nothing.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/client-go/rest"
)

// NewReader builds a Reader for a REST config (the command layer gets one
// from kubectl-style flags), so that only this package constructs clients.
func NewReader(cfg *rest.Config) (*Reader, error) {
	cfg = rest.CopyConfig(cfg)
	// Lists are paginated and folded page by page; a higher QPS than
	// client-go's default 5 keeps a 50,000-pod read from being throttled.
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Reader{Client: client, Dynamic: dyn, Discovery: client.Discovery()}, nil
}
