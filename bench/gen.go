// Package bench holds kubedra's benchmarks and the generator of the
// synthetic corpus they run on. `make bench` runs them; each reports its
// time as a ratio against a baseline measured in the same run, so numbers
// are comparable across machines.
package bench

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// Stats describes a generated corpus.
type Stats struct {
	Files     int
	Documents int
	Bytes     int64
	// DeviceFiles counts files with at least one device request, Requests
	// the (container, resource) requests in all files.
	DeviceFiles int
	Requests    int
}

// Generate writes n manifest files of about 4.5 KB each into dir (in
// subdirectories of 100 files), deterministically for a seed: 1 to 5
// documents of mixed kinds (core, apps, batch, Kubeflow, Ray, CRDs, config),
// comments, and device requests (nvidia.com/gpu, MIG, Neuron, EFA, TPU,
// AMD, unknown vendors) in about 30% of the files.
func Generate(dir string, n int, seed uint64) (Stats, error) {
	r := rand.New(rand.NewPCG(seed, 0x6b756265647261))
	var st Stats
	for i := range n {
		sub := filepath.Join(dir, fmt.Sprintf("team-%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				return st, err
			}
		}
		device := r.Float64() < 0.30
		var b strings.Builder
		reqs := 0
		for d := 0; d < 5 && b.Len() < 3800; d++ {
			if d > 0 {
				b.WriteString("---\n")
			}
			// One document of a device file carries the request.
			reqs += writeDoc(&b, r, i, d, device && d == 0)
			st.Documents++
		}
		name := filepath.Join(sub, fmt.Sprintf("app-%05d.yaml", i))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			return st, err
		}
		st.Files++
		st.Bytes += int64(b.Len())
		st.Requests += reqs
		if reqs > 0 {
			st.DeviceFiles++
		}
	}
	return st, nil
}

// GenerateFile writes one multi-document file of at least size bytes, as
// `helm template` of a large platform would produce, and returns its stats.
func GenerateFile(path string, size int64, seed uint64) (Stats, error) {
	r := rand.New(rand.NewPCG(seed, 0x6c61726765))
	f, err := os.Create(path)
	if err != nil {
		return Stats{}, err
	}
	defer f.Close()
	st := Stats{Files: 1}
	var b strings.Builder
	for i := 0; st.Bytes < size; i++ {
		b.Reset()
		b.WriteString("---\n# Source: platform/templates/app.yaml\n")
		st.Requests += writeDoc(&b, r, i, 0, r.Float64() < 0.30)
		st.Documents++
		n, err := f.WriteString(b.String())
		if err != nil {
			return st, err
		}
		st.Bytes += int64(n)
	}
	if st.Requests > 0 {
		st.DeviceFiles = 1
	}
	return st, f.Close()
}

var devices = []string{
	"nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "aws.amazon.com/neuron",
	"vpc.amazonaws.com/efa", "google.com/tpu", "amd.com/gpu", "habana.ai/gaudi", "example.com/fpga",
}

// writeDoc writes one document and returns how many requests it holds.
func writeDoc(b *strings.Builder, r *rand.Rand, file, doc int, device bool) int {
	name := fmt.Sprintf("svc-%d-%d", file, doc)
	ns := fmt.Sprintf("team-%d", file%37)
	kind := r.IntN(10)
	if device {
		kind = r.IntN(5) // a workload
	}
	switch kind {
	case 0, 5:
		return workload(b, r, "apps/v1", "Deployment", name, ns, "spec.template", device)
	case 1, 6:
		return workload(b, r, "batch/v1", "Job", name, ns, "spec.template", device)
	case 2:
		return workload(b, r, "apps/v1", "StatefulSet", name, ns, "spec.template", device)
	case 3:
		return workload(b, r, "kubeflow.org/v1", "PyTorchJob", name, ns, "replicas", device)
	case 4:
		return workload(b, r, "batch/v1", "CronJob", name, ns, "cron", device)
	case 7:
		fmt.Fprintf(b, `# Service fronting %[1]s
apiVersion: v1
kind: Service
metadata:
  name: %[1]s
  namespace: %[2]s
  labels:
    app.kubernetes.io/name: %[1]s
    app.kubernetes.io/part-of: platform
spec:
  type: ClusterIP
  selector:
    app.kubernetes.io/name: %[1]s
  ports:
  - name: http
    port: 80
    targetPort: 8080
    protocol: TCP
  - name: metrics
    port: 9090
    targetPort: 9090
`, name, ns)
	case 8:
		fmt.Fprintf(b, `apiVersion: v1
kind: ConfigMap
metadata:
  name: %[1]s-config
  namespace: %[2]s
data:
  # Application settings; limits here are just words in a string.
  app.properties: |
    server.port=8080
    server.limits.connections=%[3]d
    cache.size=%[4]d
    feature.flags=alpha,beta,gamma
    log.level=info
  nginx.conf: |
    worker_processes auto;
    events { worker_connections 1024; }
    http {
      server { listen 8080; location / { proxy_pass http://127.0.0.1:9000; } }
    }
`, name, ns, r.IntN(1000), r.IntN(4096))
	default:
		fmt.Fprintf(b, `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: %[1]s-allow
  namespace: %[2]s
spec:
  podSelector:
    matchLabels:
      app.kubernetes.io/name: %[1]s
  policyTypes: [Ingress, Egress]
  ingress:
  - from:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: ingress-nginx
    ports:
    - {protocol: TCP, port: 8080}
  egress:
  - to:
    - ipBlock: {cidr: 10.0.0.0/8}
`, name, ns)
	}
	return 0
}

// workload writes a pod-template workload; shape is where the pod spec
// lives. It returns the number of device requests written.
func workload(b *strings.Builder, r *rand.Rand, apiVersion, kind, name, ns, shape string, device bool) int {
	fmt.Fprintf(b, `# %[2]s %[1]s: owned by the platform team.
# Rolled out by the GitOps controller; do not edit by hand.
apiVersion: %[3]s
kind: %[2]s
metadata:
  name: %[1]s
  namespace: %[4]s
  labels:
    app.kubernetes.io/name: %[1]s
    app.kubernetes.io/version: "1.%[5]d.0"
    app.kubernetes.io/managed-by: argocd
  annotations:
    prometheus.io/scrape: "true"
    prometheus.io/port: "9090"
spec:
`, name, kind, apiVersion, ns, r.IntN(30))
	indent := "  "
	switch shape {
	case "cron":
		b.WriteString("  schedule: \"*/30 * * * *\"\n  jobTemplate:\n    spec:\n      template:\n")
		indent = "        "
	case "replicas":
		b.WriteString("  pytorchReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n")
		indent = "        "
	default:
		if kind != "Job" {
			fmt.Fprintf(b, "  replicas: %d\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: %s\n", 1+r.IntN(3), name)
		}
		b.WriteString("  template:\n")
		indent = "    "
	}
	p := func(s string) {
		for _, l := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
			b.WriteString(indent)
			b.WriteString(l)
			b.WriteString("\n")
		}
	}
	p(fmt.Sprintf(`  metadata:
    labels:
      app.kubernetes.io/name: %s
  spec:
    serviceAccountName: default
    securityContext:
      runAsNonRoot: true
      fsGroup: 2000`, name))
	reqs := 0
	if device && r.IntN(2) == 0 {
		p(`    nodeSelector:
      nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
    tolerations:
    - key: nvidia.com/gpu
      operator: Exists
      effect: NoSchedule`)
	}
	p(`    containers:
    - name: app
      image: registry.example.com/platform/app:1.2.3
      args: ["--port=8080", "--metrics-port=9090"]
      ports:
      - {containerPort: 8080, name: http}
      - {containerPort: 9090, name: metrics}
      env:
      - name: LOG_LEVEL
        value: info
      - name: POD_NAME
        valueFrom: {fieldRef: {fieldPath: metadata.name}}
      readinessProbe:
        httpGet: {path: /healthz, port: 8080}
        periodSeconds: 10
      resources:
        requests:
          cpu: 500m
          memory: 1Gi`)
	if device {
		res := devices[r.IntN(len(devices))]
		q := 1 + r.IntN(8)
		if r.IntN(2) == 0 {
			p(fmt.Sprintf("          %s: %d\n        limits:\n          cpu: \"2\"\n          memory: 4Gi\n          %s: %d", res, q, res, q))
		} else {
			p(fmt.Sprintf("        limits:\n          cpu: \"2\"\n          memory: 4Gi\n          %s: \"%d\"", res, q))
		}
		reqs++
	} else {
		p("        limits:\n          cpu: \"2\"\n          memory: 4Gi")
	}
	p(`    - name: sidecar
      image: registry.example.com/platform/proxy:2.0.1
      args: ["--upstream=127.0.0.1:8080"]
      resources:
        requests: {cpu: 50m, memory: 64Mi}
        limits: {cpu: 200m, memory: 128Mi}
    volumes:
    - name: config
      configMap: {name: app-config}`)
	return reqs
}

// GeneratePods writes one multi-document file of at least size bytes of
// small GPU pods, each asking nvidia.com/gpu: 1 (every document is
// migrated), and returns its stats.
func GeneratePods(path string, size int64) (Stats, error) {
	f, err := os.Create(path)
	if err != nil {
		return Stats{}, err
	}
	defer f.Close()
	st := Stats{Files: 1, DeviceFiles: 1}
	for i := 0; st.Bytes < size; i++ {
		n, err := io.WriteString(f, "---\n"+gpuPod(i, "", ""))
		if err != nil {
			return st, err
		}
		st.Bytes += int64(n)
		st.Documents++
		st.Requests++
	}
	return st, f.Close()
}

// GenerateResourceList writes a KRM ResourceList (config.kubernetes.io/v1,
// items at column 0 as kustomize hands them to an exec function, each with
// its index annotations) of n small GPU pods, each asking nvidia.com/gpu:
// 1, with a functionConfig of mode mode, and returns its stats.
func GenerateResourceList(path string, n int, mode string) (Stats, error) {
	f, err := os.Create(path)
	if err != nil {
		return Stats{}, err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	st := Stats{Files: 1, DeviceFiles: 1}
	write := func(s string) {
		c, _ := w.WriteString(s)
		st.Bytes += int64(c)
	}
	write("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for i := range n {
		write(gpuPod(i, "- ", fmt.Sprintf("  annotations:\n    config.kubernetes.io/index: '%[1]d'\n    internal.config.kubernetes.io/index: '%[1]d'\n", i)))
		st.Documents++
		st.Requests++
	}
	write("functionConfig:\n  apiVersion: kubedra.dev/v1alpha1\n  kind: Fn\n  metadata:\n    name: dra\n  spec:\n    mode: " + mode + "\n")
	if err := w.Flush(); err != nil {
		return st, err
	}
	return st, f.Close()
}

// gpuPod is the i-th small GPU pod, its first line after first and the
// others indented as much, with metadata lines after its namespace.
func gpuPod(i int, first, metadata string) string {
	pod := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: infer-%[1]d
  namespace: team-%[2]d
%[3]sspec:
  containers:
  - name: cuda
    image: nvcr.io/nvidia/cuda:12.4.0-base
    resources:
      limits:
        nvidia.com/gpu: 1
`, i, i%37, metadata)
	if first == "" {
		return pod
	}
	indent := strings.Repeat(" ", len(first))
	return first + strings.ReplaceAll(strings.TrimSuffix(pod, "\n"), "\n", "\n"+indent) + "\n"
}

// GenerateWidePod writes one Pod of n containers, each asking
// nvidia.com/gpu: 1 (issue 29: 10,000 containers in one pod took migrate
// 105 s).
func GenerateWidePod(path string, n int) error {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Pod\nmetadata:\n  name: wide\nspec:\n  containers:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: c%d\n    image: nvcr.io/nvidia/cuda:12.4.0-base\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n", i)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
