package helm_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

var cluster *harness.Cluster

func TestMain(m *testing.M) { os.Exit(harness.Main(m, harness.Options{}, &cluster)) }

// chartCase is one chart and how it is rendered.
type chartCase struct {
	// dir is relative to the corpus (corpus: true) or to testdata/charts.
	dir    string
	corpus bool
	// values files (relative to the chart) and --set values; why says why.
	values []string
	set    []string
	why    string
	// kubeVersion overrides the control plane's version for rendering
	// only, for charts whose kubeVersion range excludes it.
	kubeVersion string
	// deps are library charts vendored in testdata/charts/deps that the
	// chart needs (what `helm dependency build` would put in charts/).
	deps []string
	// disabledDeps are dependencies that are neither in the corpus nor
	// vendored and that the chart's values (tags, conditions) disable: helm
	// template refuses to render without them, the SDK renders what helm
	// would after `helm dependency build`.
	disabledDeps []string
	// blocked: the chart cannot be rendered from what the repository holds;
	// the render error must contain it.
	blocked string
	// migrated is the number of workloads migrate reports migrated.
	migrated int
	// notServed are the objects ("Kind/name") of kinds no CRD here serves,
	// so not dry-run; notServedWhy says why no CRD is vendored for them.
	notServed    []string
	notServedWhy string
}

// charts are all the Chart.yaml folders of ../shared/corpus/dev (TestChartList
// checks that none is missing) and the vendored charts (testdata/charts/NOTICE).
var charts = []chartCase{
	{dir: "GoogleCloudPlatform__kubernetes-engine-samples/ai-ml/nemo-rl-on-gke/nemoRL", corpus: true,
		why: "defaults: a RayCluster whose head asks nvidia.com/gpu: 0 and whose workers ask 8", migrated: 1},
	{dir: "GoogleCloudPlatform__kubernetes-engine-samples/app-design-center/ai-inference", corpus: true,
		why: "defaults: a vLLM Deployment asking nvidia.com/gpu: \"1\"", migrated: 1},
	{dir: "NVIDIA__nim-deploy/cloud-service-providers/google-cloud/gke/terraform/infra/3-config/helm/ngc-cache", corpus: true,
		set: []string{"persistence.existingClaim=nim-cache", "persistence.size=50Gi", "persistence.csi.driver=filestore.csi.storage.gke.io", "persistence.csi.volumeHandle=modeInstance/us-central1/nim/cache"},
		why: "defaults and a cache volume (the PersistentVolume and claim have no name without persistence.existingClaim): a cache-filling Job asking nvidia.com/gpu: 1", migrated: 1},
	{dir: "NVIDIA__nim-deploy@be34031ce621/helm/nim-llm", corpus: true,
		why: "defaults: a NIM StatefulSet asking nvidia.com/gpu: 1 (and helm-test hook Pods without devices)", migrated: 1},
	{dir: "aws-neuron__neuron-helm-charts/charts/neuron-helm-chart", corpus: true,
		why: "defaults: the device plugin DaemonSets and a helm-test hook Pod asking aws.amazon.com/neuron: 1", migrated: 1},
	{dir: "aws-samples__awsome-inference/2.projects/multinode-triton-trtllm-inference/multinode_helm_chart/chart", corpus: true,
		set: []string{"gpu=NVIDIA-A10G", "gpuPerNode=4", "persistentVolumeClaim=model-store", "model.name=llama", "triton.image.name=nvcr.io/nvidia/tritonserver:24.08-trtllm-python-py3", "triton.triton_model_repo_path=/var/run/models",
			"logging.tritonServer.verbose=true"},
		why: "the chart's required values (gpu, gpuPerNode, persistentVolumeClaim, triton.image.name, triton.triton_model_repo_path) and verbose logging " +
			"(without it the containers' env renders as null, which the LeaderWorkerSet CRD's schema rejects): a LeaderWorkerSet whose pods ask 4 GPUs", migrated: 1,
		notServed: []string{"PodMonitor/gpu"}, notServedWhy: "the Prometheus Operator's monitoring.coreos.com CRDs are not vendored"},
	{dir: "huggingface__optimum-habana/examples/kubernetes", corpus: true, kubeVersion: "1.29.0",
		why: "defaults (kubeVersion 1.27 - 1.29, so rendered for 1.29 and dry-run on the control plane): a Job asking habana.ai/gaudi: 1", migrated: 1},
	{dir: "opea-project__GenAIInfra/helm-charts/common/tei", corpus: true, deps: []string{"commonlib"}, values: []string{"gaudi-values.yaml"},
		why: "the chart's gaudi-values.yaml (its defaults run on CPUs), commonlib vendored: a TEI Deployment asking habana.ai/gaudi: 1", migrated: 1},
	{dir: "opea-project__GenAIInfra/helm-charts/common/tgi", corpus: true, deps: []string{"commonlib"}, values: []string{"nv-values.yaml"},
		why: "the chart's nv-values.yaml (its defaults run on CPUs), commonlib vendored: a TGI Deployment asking nvidia.com/gpu: 1", migrated: 1},
	{dir: "opea-project__GenAIInfra/helm-charts/common/vllm", corpus: true, deps: []string{"commonlib"}, values: []string{"rocm-values.yaml"},
		why: "the chart's rocm-values.yaml (its defaults run on CPUs), commonlib vendored: a vLLM Deployment asking amd.com/gpu: \"1\"", migrated: 1},
	{dir: "run-ai__runai-cli/charts/mpijob", corpus: true, deps: []string{"runai-common"}, set: []string{"gitSync.sync=false", "gpuInt=2", "workers=2", "image=mpi"},
		why: "gpuInt=2 (the default asks none), two workers, an image and gitSync.sync=false (the template needs the key), runai-common vendored: an MPIJob whose workers ask nvidia.com/gpu: 2", migrated: 1,
		notServed: []string{"MPIJob/gpu"}, notServedWhy: "kubeflow.org/v1alpha2 MPIJob: the vendored mpi-operator CRD serves v2beta1 only"},
	{dir: "run-ai__runai-cli/charts/runai", corpus: true, deps: []string{"runai-common"}, set: []string{"gitSync.sync=false", "gpuInt=2", "image=cuda"},
		why: "gpuInt=2 (the default asks none), an image and gitSync.sync=false (the template needs the key), runai-common vendored: a Job asking nvidia.com/gpu: 2", migrated: 1},
	{dir: "triton-inference-server__server/deploy/aws", corpus: true,
		set: []string{"secret.region=dXMtZWFzdC0x", "secret.id=a2V5LWlk", "secret.key=c2VjcmV0"},
		why: "defaults, with base64 credentials (the defaults AWS_REGION... are not base64, which the API server rejects): a Triton Deployment asking nvidia.com/gpu: 1", migrated: 1,
		notServed: []string{"ServiceMonitor/gpu-triton-inference-server-metrics-monitor"}, notServedWhy: "the Prometheus Operator's monitoring.coreos.com CRDs are not vendored"},
	{dir: "triton-inference-server__server/deploy/fleetcommand", corpus: true,
		set: []string{"image.serverArgs={--model-repository=s3://models}"},
		why: "the required image.serverArgs: a Triton Deployment asking nvidia.com/gpu: 1", migrated: 1},
	{dir: "triton-inference-server__server/deploy/gke-marketplace-app/server-deployer/chart/triton", corpus: true,
		why: "defaults: a Triton Deployment asking nvidia.com/gpu: 1", migrated: 1,
		notServed: []string{"Application/gpu"}, notServedWhy: "the GKE Marketplace's app.k8s.io Application CRD is not vendored"},
	{dir: "triton-inference-server__server/deploy/k8s-onprem", corpus: true, disabledDeps: []string{"traefik", "prometheus-adapter"},
		set: []string{"tags.loadBalancing=false", "tags.autoscaling=false"},
		why: "its remote dependencies traefik and prometheus-adapter (not in the corpus) disabled by their tags: a Triton Deployment asking nvidia.com/gpu: 1", migrated: 1,
		notServed: []string{"ServiceMonitor/gpu-triton-inference-server-metrics-monitor"}, notServedWhy: "the Prometheus Operator's monitoring.coreos.com CRDs are not vendored"},
	{dir: "vllm-stack", values: []string{"values-example.yaml"},
		why: "the chart's values-example.yaml: one vLLM engine Deployment asking nvidia.com/gpu: \"1\" (the defaults serve no model)", migrated: 1},
}

var (
	corpusOnce sync.Once
	corpusDir  string
)

// corpus is ../shared/corpus/dev beside the clone ("" when absent).
func corpus(t *testing.T) string {
	corpusOnce.Do(func() {
		dir := os.Getenv("KUBEDRA_CORPUS_DIR")
		if dir == "" {
			dir = filepath.Join("..", "..", "..", "..", "shared", "corpus", "dev")
		}
		if _, err := os.Stat(dir); err == nil {
			corpusDir, _ = filepath.Abs(dir)
		}
	})
	return corpusDir
}

func (c chartCase) path(t *testing.T) string {
	if c.corpus {
		return filepath.Join(corpus(t), c.dir)
	}
	return filepath.Join("testdata", "charts", c.dir)
}

// TestChartList fails when the corpus gains or loses a chart this file does
// not list, so that no chart is skipped silently.
func TestChartList(t *testing.T) {
	dir := corpus(t)
	if dir == "" {
		t.Skip("no ../shared/corpus/dev beside the clone (set KUBEDRA_CORPUS_DIR)")
	}
	var found []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "Chart.yaml" {
			rel, _ := filepath.Rel(dir, filepath.Dir(path))
			found = append(found, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, c := range charts {
		if c.corpus {
			listed = append(listed, c.dir)
		}
	}
	sort.Strings(found)
	sort.Strings(listed)
	if !slices.Equal(found, listed) {
		t.Errorf("the corpus's charts and the list differ:\n found: %v\nlisted: %v", found, listed)
	}
}

var (
	crdsOnce sync.Once
	crdsErr  error
)

// installCRDs installs the framework CRDs test/e2e/validate vendors and
// the vendored charts' own crds/ folders, once.
func installCRDs(t *testing.T) {
	t.Helper()
	crdsOnce.Do(func() {
		ctx := context.Background()
		for _, dir := range []string{filepath.Join("..", "validate", "testdata", "crds"), filepath.Join("testdata", "charts", "vllm-stack", "crds")} {
			if _, crdsErr = cluster.InstallCRDs(ctx, dir); crdsErr != nil {
				return
			}
		}
	})
	if crdsErr != nil {
		t.Fatalf("installing CRDs: %v", crdsErr)
	}
}

// render renders the chart as `helm template` does (client only, for the
// control plane's Kubernetes version), hooks included: the stream Helm 4's
// post-renderer receives.
func render(c chartCase, dir, ns string) (string, error) {
	ch, err := loader.Load(dir)
	if err != nil {
		return "", err
	}
	for _, name := range c.deps {
		dep, err := loader.Load(filepath.Join("testdata", "charts", "deps", name))
		if err != nil {
			return "", err
		}
		ch.AddDependency(dep)
	}
	if deps := ch.Metadata.Dependencies; deps != nil {
		if err := action.CheckDependencies(ch, deps); err != nil {
			if len(c.disabledDeps) == 0 {
				return "", err
			}
			// Only the listed dependencies may be missing.
			missing := err.Error()[strings.LastIndex(err.Error(), ":")+1:]
			var names []string
			for _, n := range strings.Split(missing, ",") {
				names = append(names, strings.TrimSpace(n))
			}
			if !slices.Equal(names, c.disabledDeps) {
				return "", fmt.Errorf("missing dependencies %q, want only %q: %w", names, c.disabledDeps, err)
			}
		}
	}
	vals := map[string]any{}
	for _, f := range c.values {
		v, err := chartutil.ReadValuesFile(filepath.Join(dir, f))
		if err != nil {
			return "", err
		}
		vals = chartutil.CoalesceTables(v.AsMap(), vals)
	}
	for _, s := range c.set {
		if err := strvals.ParseInto(s, vals); err != nil {
			return "", err
		}
	}
	kv := c.kubeVersion
	if kv == "" {
		kv = cluster.Version.Kubernetes
	}
	kube, err := chartutil.ParseKubeVersion(kv)
	if err != nil {
		return "", err
	}
	inst := action.NewInstall(new(action.Configuration))
	inst.DryRun, inst.ClientOnly, inst.Replace = true, true, true
	inst.ReleaseName, inst.Namespace, inst.KubeVersion = "gpu", ns, kube
	rel, err := inst.Run(ch, vals)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(rel.Manifest)
	for _, h := range rel.Hooks {
		fmt.Fprintf(&b, "\n---\n# Source: %s\n%s\n", h.Path, h.Manifest)
	}
	return b.String(), nil
}

func TestCharts(t *testing.T) {
	if _, err := harness.KubedraBin(); err != nil {
		t.Fatal(err)
	}
	installCRDs(t)
	for _, c := range charts {
		t.Run(strings.ReplaceAll(c.dir, "/", "_"), func(t *testing.T) {
			dir := c.path(t)
			if c.corpus && corpus(t) == "" {
				t.Skip("no ../shared/corpus/dev beside the clone (set KUBEDRA_CORPUS_DIR)")
			}
			ns := cluster.NewNamespace(t)
			t.Logf("values: %s", c.why)
			in, err := render(c, dir, ns)
			if c.blocked != "" {
				if err == nil || !strings.Contains(err.Error(), c.blocked) {
					t.Fatalf("want the render to fail on %q (%s), got %v", c.blocked, c.why, err)
				}
				t.Logf("not rendered, as listed: %s (%v)", c.why, err)
				return
			}
			if err != nil {
				t.Fatalf("rendering: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			args := []string{"migrate", "--target-version", cluster.Version.TargetVersion(), "-"}
			res, err := harness.RunKubedra(ctx, nil, []byte(in), args...)
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 {
				t.Fatalf("kubedra migrate - exited %d:\n%s", res.ExitCode, res.Stderr)
			}
			t.Logf("kubedra: %s", lastLine(res.Stderr))
			if got := migratedCount(res.Stderr); got != c.migrated {
				t.Errorf("migrate reports %d workloads migrated, want %d (%s):\n%s", got, c.migrated, c.why, res.Stderr)
			}
			out := res.Stdout
			// What is left of device requests must be what migrate reported
			// leaving (lossy, unmapped, zero): never a silent leftover.
			inObjs, outObjs := decode(t, []byte(in)), decode(t, out)
			for _, left := range deviceRequests(outObjs) {
				if !bytes.Contains(res.Stderr, []byte(left.object)) || !bytes.Contains(res.Stderr, []byte(left.resource)) {
					t.Errorf("%s still asks %s after migrate, and migrate did not say so:\n%s", left.object, left.resource, res.Stderr)
				}
			}
			if c.migrated > 0 && len(deviceRequests(outObjs)) >= len(deviceRequests(inObjs)) {
				t.Errorf("migrate migrated %d workloads but the render asks as many device-plugin resources as before: %v", c.migrated, deviceRequests(outObjs))
			}
			// A second migrate changes nothing.
			again, err := harness.RunKubedra(ctx, nil, out, args...)
			if err != nil {
				t.Fatal(err)
			}
			if again.ExitCode != 0 || !bytes.Equal(again.Stdout, out) {
				t.Errorf("a second migrate changed the render (exit %d):\n%s", again.ExitCode, again.Stderr)
			}
			// Server-side dry runs of both renders.
			var notServed []string
			for _, r := range []struct {
				name string
				objs []*unstructured.Unstructured
			}{{"original", inObjs}, {"migrated", outObjs}} {
				accepted := 0
				for _, o := range r.objs {
					if _, err := cluster.Mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version); err != nil {
						if r.name == "original" {
							notServed = append(notServed, o.GetKind()+"/"+o.GetName())
						}
						continue
					}
					data, err := o.MarshalJSON()
					if err != nil {
						t.Fatal(err)
					}
					// Objects the chart puts in a namespace of its own
					// (kube-system, ...) go there, the others into the
					// release's namespace, as helm install does.
					objNS := ns
					if o.GetNamespace() != "" {
						objNS = o.GetNamespace()
						if err := cluster.EnsureNamespace(ctx, objNS); err != nil {
							t.Fatal(err)
						}
					}
					cmd := cluster.KubectlCmd(ctx, "apply", "--server-side", "--dry-run=server", "--field-manager=helm", "-n", objNS, "-f", "-")
					cmd.Stdin = bytes.NewReader(data)
					if b, err := cmd.CombinedOutput(); err != nil {
						t.Errorf("%s render: server-side dry run of %s/%s: %v\n%s", r.name, o.GetKind(), o.GetName(), err, b)
						continue
					}
					accepted++
				}
				t.Logf("%s render: %d objects, %d dry-run and accepted", r.name, len(r.objs), accepted)
			}
			sort.Strings(notServed)
			if !slices.Equal(notServed, c.notServed) {
				t.Errorf("kinds not served (no CRD vendored): got %q, want %q", notServed, c.notServed)
			}
			if len(notServed) > 0 {
				t.Logf("not dry-run: %s (%s)", strings.Join(notServed, ", "), c.notServedWhy)
			}
		})
	}
}

var migratedRE = regexp.MustCompile(`migrate: (\d+) workloads? migrated`)

func migratedCount(stderr []byte) int {
	m := migratedRE.FindSubmatch(stderr)
	if m == nil {
		return -1
	}
	n := 0
	fmt.Sscan(string(m[1]), &n)
	return n
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func decode(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, m := range releaseutil.SplitManifests(string(data)) {
		objs, err := harness.DecodeYAML([]byte(m))
		if err != nil {
			t.Fatalf("decoding a rendered document: %v\n%s", err, m)
		}
		for _, o := range objs {
			if o.GetKind() != "" {
				out = append(out, o)
			}
		}
	}
	return out
}

type deviceRequest struct{ object, resource string }

// deviceRequests lists the extended resources (device-plugin names) asked
// in containers' limits and requests, anywhere in the objects.
func deviceRequests(objs []*unstructured.Unstructured) []deviceRequest {
	var out []deviceRequest
	for _, o := range objs {
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if k == "limits" || k == "requests" {
						if m, ok := x.(map[string]any); ok {
							for r := range m {
								if strings.Contains(r, "/") && !strings.Contains(r, "kubernetes.io/") {
									out = append(out, deviceRequest{o.GetKind() + "/" + o.GetName(), r})
								}
							}
						}
					}
					walk(x)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			}
		}
		walk(o.Object)
	}
	return out
}
