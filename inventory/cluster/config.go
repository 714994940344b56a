package cluster

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	// Cloud auth plugins (OIDC and friends) for kubeconfigs that name them;
	// exec plugins (aws, gke-gcloud-auth-plugin, kubelogin) need nothing.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/client-go/rest"
)

// NewReaderFor builds a Reader for kubectl's connection flags (a
// genericclioptions.ConfigFlags, or any RESTClientGetter), so that callers
// never touch client-go: this package is the only one that imports it.
func NewReaderFor(g genericclioptions.RESTClientGetter) (*Reader, error) {
	cfg, err := g.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return NewReader(cfg)
}

// NewReader builds a Reader for a REST config, so that only this package
// constructs clients.
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
