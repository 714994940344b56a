package cluster

import (
	"fmt"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	appsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	batchv1 "k8s.io/client-go/kubernetes/typed/batch/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
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
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultRequestTimeout
	}
	// One HTTP client for every group, as kubernetes.NewForConfig shares.
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	var c clients
	if c.core, err = corev1.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if c.apps, err = appsv1.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if c.batch, err = batchv1.NewForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	if c.disc, err = discovery.NewDiscoveryClientForConfigAndClient(cfg, hc); err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, err
	}
	return &Reader{Client: c, Dynamic: dyn, Discovery: c.disc, Timeout: cfg.Timeout}, nil
}

// clients are the typed clients a Reader uses (a Client).
type clients struct {
	core  corev1.CoreV1Interface
	apps  appsv1.AppsV1Interface
	batch batchv1.BatchV1Interface
	disc  discovery.DiscoveryInterfaces
}

func (c clients) CoreV1() corev1.CoreV1Interface           { return c.core }
func (c clients) AppsV1() appsv1.AppsV1Interface           { return c.apps }
func (c clients) BatchV1() batchv1.BatchV1Interface        { return c.batch }
func (c clients) Discovery() discovery.DiscoveryInterfaces { return c.disc }
