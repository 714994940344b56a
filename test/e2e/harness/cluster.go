package harness

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// DefaultControllers are the kube-controller-manager controllers the harness
// runs: claims from templates, owner-reference GC, namespace deletion and the
// workload controllers that create pods. Not node-lifecycle-controller: with
// no kubelet heartbeats it would taint the fake nodes unreachable and evict.
var DefaultControllers = []string{
	"resourceclaim-controller", "garbage-collector-controller", "namespace-controller",
	"deployment-controller", "replicaset-controller", "daemonset-controller",
	"statefulset-controller", "job-controller",
}

// DefaultDisabledAdmission are the admission plugins switched off by default:
// TaintNodesByCondition would put a not-ready taint on every new Node that only
// the (not running) node-lifecycle controller removes, and ServiceAccount
// rejects pods until the (not running) serviceaccount controller has created
// the namespace's "default" ServiceAccount.
var DefaultDisabledAdmission = []string{"ServiceAccount", "TaintNodesByCondition"}

// Options configure Start. The zero value is a working 1.37 control plane.
type Options struct {
	// Version is the Kubernetes version ("1.37", "1.34.x", "v1.37.2");
	// empty means $K8S_VERSION, else 1.37. See ResolveVersion.
	Version string
	// StateDir holds certificates, etcd data, logs and the kubeconfig; empty
	// means a fresh temporary directory, removed by Stop.
	StateDir string
	// Controllers for kube-controller-manager; nil means DefaultControllers.
	Controllers []string
	// DisableAdmission lists kube-apiserver admission plugins to switch off;
	// nil means DefaultDisabledAdmission, an empty non-nil slice keeps all defaults.
	DisableAdmission []string
	// FeatureGates is passed as --feature-gates to apiserver, controller-manager and scheduler.
	FeatureGates string
	// Extra flags appended to each component's command line.
	APIServerFlags, ControllerManagerFlags, SchedulerFlags, EtcdFlags []string
	// BuildTimeout bounds building the binaries (default 60 min, or $LCP_BUILD_TIMEOUT seconds).
	BuildTimeout time.Duration
	// StartTimeout bounds each component becoming healthy (default 3 min).
	StartTimeout time.Duration
	// Log receives progress and build output; nil means os.Stderr.
	Log io.Writer
	// KeepState keeps StateDir (etcd data, logs, certificates) after Stop.
	// $E2E_KEEP_STATE=1 sets it too.
	KeepState bool
}

// Cluster is a running control plane: etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler on 127.0.0.1, no kubelet.
type Cluster struct {
	// Version is the release that runs (binaries, wrapper module).
	Version Version
	// StateDir holds pki/, etcd/, logs/ and kubeconfig.
	StateDir string
	// Kubeconfig is the path of an admin kubeconfig (client certificate in system:masters).
	Kubeconfig string
	// Kubectl is the path of the kubectl binary built with the control plane.
	Kubectl string
	// APIServerURL is https://127.0.0.1:<port>.
	APIServerURL string
	// CAFile is the CA that signed the API server's certificate.
	CAFile string
	// Token is a bearer token for the same admin user.
	Token string
	// RESTConfig is the admin client configuration.
	RESTConfig *rest.Config
	// Clientset is a typed client.
	Clientset *kubernetes.Clientset
	// Dynamic is a dynamic client; Mapper maps kinds to resources for it.
	Dynamic dynamic.Interface
	// Mapper maps GroupVersionKinds to resources (discovery, cached; Reset on misses).
	Mapper *restmapper.DeferredDiscoveryRESTMapper

	opts      Options
	pki       *pki
	log       io.Writer
	procs     []*proc
	spawn     chan spawnReq
	stopOnce  sync.Once
	stopErr   error
	ownsState bool
	keepLogs  bool // Stop removes all state but logs/ (set by Main when tests failed)
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  string
}

type spawnReq struct {
	cmd   *exec.Cmd
	reply chan error
}

// Start builds the binaries if needed and starts a control plane. On error
// everything already started is stopped again. Always call Stop (also when
// tests fail): Main does that for a whole test binary.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.BuildTimeout == 0 {
		opts.BuildTimeout = 60 * time.Minute
		if s, err := strconv.Atoi(os.Getenv("LCP_BUILD_TIMEOUT")); err == nil && s > 0 {
			opts.BuildTimeout = time.Duration(s) * time.Second
		}
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 3 * time.Minute
	}
	if os.Getenv("E2E_KEEP_STATE") == "1" {
		opts.KeepState = true
	}
	v, err := ResolveVersion(opts.Version)
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithTimeout(ctx, opts.BuildTimeout)
	err = EnsureBuilt(bctx, v, opts.Log)
	cancel()
	if err != nil {
		if errors.Is(bctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("building the control plane did not finish within %s (LCP_BUILD_TIMEOUT): %w", opts.BuildTimeout, err)
		}
		return nil, err
	}

	c := &Cluster{Version: v, opts: opts, log: opts.Log, Kubectl: filepath.Join(v.BinDir, "kubectl")}
	if opts.StateDir == "" {
		sweepStaleStateDirs()
		if c.StateDir, err = os.MkdirTemp("", "kubedra-e2e-"); err != nil {
			return nil, err
		}
		c.ownsState = true
		// Lets a later run remove this dir if this process dies without Stop.
		_ = os.WriteFile(filepath.Join(c.StateDir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	} else {
		c.StateDir = opts.StateDir
		if err := os.MkdirAll(c.StateDir, 0o755); err != nil {
			return nil, err
		}
	}
	c.startSpawner()
	if err := c.start(ctx); err != nil {
		if stopErr := c.Stop(); stopErr != nil {
			err = fmt.Errorf("%w (and stopping: %v)", err, stopErr)
		}
		return nil, err
	}
	return c, nil
}

// startSpawner starts the goroutine that starts all child processes. It is
// locked to its OS thread and lives until Stop: children get
// PR_SET_PDEATHSIG=SIGKILL, which fires when the *thread* that started them
// exits, so they die with the test binary even when it is killed or panics on
// a go test -timeout, but not while it runs.
func (c *Cluster) startSpawner() {
	c.spawn = make(chan spawnReq)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		for req := range c.spawn {
			req.reply <- req.cmd.Start()
		}
	}()
}

func (c *Cluster) start(ctx context.Context) error {
	for _, d := range []string{"logs", "etcd"} {
		if err := os.MkdirAll(filepath.Join(c.StateDir, d), 0o700); err != nil {
			return err
		}
	}
	p, err := newPKI(filepath.Join(c.StateDir, "pki"))
	if err != nil {
		return err
	}
	c.CAFile, c.Token, c.pki = p.caCert, p.token, p
	ports, err := freePorts(5)
	if err != nil {
		return err
	}
	etcdPort, peerPort, apiPort, kcmPort, schedPort := ports[0], ports[1], ports[2], ports[3], ports[4]
	c.APIServerURL = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	c.Kubeconfig = filepath.Join(c.StateDir, "kubeconfig")
	if err := os.WriteFile(c.Kubeconfig, kubeconfig(c.APIServerURL, p), 0o600); err != nil {
		return err
	}
	t0 := time.Now()

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	if err := c.run(ctx, "etcd", append([]string{
		"--name", "e2e", "--data-dir", filepath.Join(c.StateDir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e=" + peerURL, "--initial-cluster-state", "new",
		"--unsafe-no-fsync", "--log-level", "warn",
	}, c.opts.EtcdFlags...), func(hc *http.Client) bool {
		return get(hc, etcdURL+"/health", `"health":"true"`)
	}); err != nil {
		return err
	}

	disabled := c.opts.DisableAdmission
	if disabled == nil {
		disabled = DefaultDisabledAdmission
	}
	api := []string{
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(apiPort), "--advertise-address", "127.0.0.1",
		// The default "lease" reconciler refuses a loopback advertise address.
		"--endpoint-reconciler-type", "none",
		"--tls-cert-file", p.serverCert, "--tls-private-key-file", p.serverKey,
		"--client-ca-file", p.caCert, "--token-auth-file", p.tokenFile,
		// Without a request-header CA, kcm and scheduler log a burst of "missing content for CA bundle".
		"--requestheader-client-ca-file", p.caCert, "--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", p.saPub, "--service-account-signing-key-file", p.saKey,
		"--service-cluster-ip-range", "10.96.0.0/16",
		"--allow-privileged=true", "--profiling=false",
		"--cert-dir", filepath.Join(c.StateDir, "pki", "generated"),
	}
	if len(disabled) > 0 {
		api = append(api, "--disable-admission-plugins", strings.Join(disabled, ","))
	}
	api = append(api, c.featureGates()...)
	apiHC := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: c.clientTLS(p)}}
	if err := c.run(ctx, "kube-apiserver", append(api, c.opts.APIServerFlags...), func(*http.Client) bool {
		return get(apiHC, c.APIServerURL+"/readyz", "ok")
	}); err != nil {
		return err
	}
	apiReady := time.Since(t0)

	controllers := c.opts.Controllers
	if controllers == nil {
		controllers = DefaultControllers
	}
	kubeconfigs := []string{"--kubeconfig", c.Kubeconfig, "--authentication-kubeconfig", c.Kubeconfig, "--authorization-kubeconfig", c.Kubeconfig}
	kcm := append(append([]string{}, kubeconfigs...),
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(kcmPort), "--leader-elect=false",
		"--controllers", strings.Join(controllers, ","), "--profiling=false")
	kcm = append(append(kcm, c.featureGates()...), c.opts.ControllerManagerFlags...)
	sched := append(append([]string{}, kubeconfigs...),
		"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(schedPort), "--leader-elect=false", "--profiling=false")
	sched = append(append(sched, c.featureGates()...), c.opts.SchedulerFlags...)
	if err := c.run(ctx, "kube-controller-manager", kcm, func(hc *http.Client) bool {
		return get(hc, fmt.Sprintf("https://127.0.0.1:%d/healthz", kcmPort), "ok")
	}); err != nil {
		return err
	}
	if err := c.run(ctx, "kube-scheduler", sched, func(hc *http.Client) bool {
		return get(hc, fmt.Sprintf("https://127.0.0.1:%d/healthz", schedPort), "ok")
	}); err != nil {
		return err
	}

	if err := c.initClients(); err != nil {
		return err
	}
	if _, err := c.Clientset.Discovery().ServerResourcesForGroupVersion("resource.k8s.io/v1"); err != nil {
		return fmt.Errorf("resource.k8s.io/v1 (DRA) is not served by %s: %w; see %s", c.Version.Kubernetes, err, c.LogFile("kube-apiserver"))
	}
	fmt.Fprintf(c.log, "[lcp] control plane %s ready in %s (apiserver /readyz after %s) at %s, state %s\n",
		c.Version.Kubernetes, time.Since(t0).Round(100*time.Millisecond), apiReady.Round(100*time.Millisecond), c.APIServerURL, c.StateDir)
	return nil
}

func (c *Cluster) featureGates() []string {
	if c.opts.FeatureGates == "" {
		return nil
	}
	return []string{"--feature-gates", c.opts.FeatureGates}
}

func (c *Cluster) clientTLS(p *pki) *tls.Config {
	cert, _ := tls.X509KeyPair(p.adminCertPEM, p.adminKeyPEM)
	return &tls.Config{RootCAs: p.caPool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// run starts $BinDir/name in its own session with output to logs/name.log and
// waits until healthy returns true, the process exits, or StartTimeout passes.
func (c *Cluster) run(ctx context.Context, name string, args []string, healthy func(*http.Client) bool) error {
	logPath := c.LogFile(name)
	lf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(c.Version.BinDir, name), args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Dir = c.StateDir
	// Setsid: a Ctrl-C on the terminal reaches the test binary, which stops the
	// components in order, not the components directly. Pdeathsig: see startSpawner.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
	reply := make(chan error)
	c.spawn <- spawnReq{cmd: cmd, reply: reply}
	if err := <-reply; err != nil {
		lf.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		p.err = cmd.Wait()
		lf.Close()
		close(p.done)
	}()
	c.procs = append(c.procs, p)

	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		Proxy: nil, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // self-signed serving certs of kcm/scheduler
	}}
	t0 := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if healthy(hc) {
			fmt.Fprintf(c.log, "[lcp] %s healthy after %s (pid %d)\n", name, time.Since(t0).Round(100*time.Millisecond), cmd.Process.Pid)
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited during start-up (%v); last lines of %s:\n%s", name, p.err, logPath, tail(logPath, 25))
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s to become healthy: %w", name, ctx.Err())
		case <-tick.C:
			if time.Since(t0) > c.opts.StartTimeout {
				return fmt.Errorf("%s not healthy after %s; last lines of %s:\n%s", name, c.opts.StartTimeout, logPath, tail(logPath, 25))
			}
		}
	}
}

func (c *Cluster) initClients() error {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return fmt.Errorf("loading %s: %w", c.Kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	cfg.Timeout = 30 * time.Second
	c.RESTConfig = cfg
	if c.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	c.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	return nil
}

// LogFile is the path of a component's log (etcd, kube-apiserver, ...).
func (c *Cluster) LogFile(component string) string {
	return filepath.Join(c.StateDir, "logs", component+".log")
}

// Env returns os.Environ() with KUBECONFIG pointing at the cluster, for
// running kubectl or kubedra against it.
func (c *Cluster) Env() []string {
	return append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
}

// Stop stops the components in reverse start order: SIGTERM, then SIGKILL
// after 20 s. It removes the state dir if Start created it (unless KeepState).
// It is safe to call more than once and from a signal handler.
func (c *Cluster) Stop() error {
	c.stopOnce.Do(func() {
		var errs []error
		for i := len(c.procs) - 1; i >= 0; i-- {
			p := c.procs[i]
			select {
			case <-p.done:
				continue
			default:
			}
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				fmt.Fprintf(c.log, "[lcp] %s (pid %d) ignored SIGTERM for 20s; killing it\n", p.name, p.cmd.Process.Pid)
				_ = p.cmd.Process.Kill()
				select {
				case <-p.done:
				case <-time.After(10 * time.Second):
					errs = append(errs, fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid))
				}
			}
		}
		if c.spawn != nil {
			close(c.spawn)
		}
		switch {
		case c.ownsState && c.keepLogs && !c.opts.KeepState:
			for _, d := range []string{"etcd", "pki", "kubeconfig", "owner.pid"} {
				if err := os.RemoveAll(filepath.Join(c.StateDir, d)); err != nil {
					errs = append(errs, err)
				}
			}
		case c.ownsState && !c.opts.KeepState:
			if err := os.RemoveAll(c.StateDir); err != nil {
				errs = append(errs, err)
			}
		case len(c.procs) > 0:
			fmt.Fprintf(c.log, "[lcp] state kept in %s\n", c.StateDir)
		}
		c.stopErr = errors.Join(errs...)
	})
	return c.stopErr
}

// sweepStaleStateDirs removes temporary state dirs of earlier runs whose
// owner process is gone (killed before it could call Stop).
func sweepStaleStateDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "kubedra-e2e-*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if syscall.Kill(pid, 0) == nil || errors.Is(syscall.Kill(pid, 0), syscall.EPERM) {
			continue // still alive
		}
		_ = os.RemoveAll(d)
	}
}

// freePorts picks n distinct free TCP ports on 127.0.0.1 in 20000-32000,
// below the usual ephemeral range so outgoing connections do not take them.
func freePorts(n int) ([]int, error) {
	seen := map[int]bool{}
	var out []int
	for tries := 0; len(out) < n && tries < 500; tries++ {
		p := 20000 + rand.IntN(12000)
		if seen[p] {
			continue
		}
		seen[p] = true
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		l.Close()
		out = append(out, p)
	}
	if len(out) < n {
		return nil, errors.New("could not find free TCP ports on 127.0.0.1 in 20000-32000")
	}
	return out, nil
}

func get(hc *http.Client, url, want string) bool {
	resp, err := hc.Get(url)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode == http.StatusOK && strings.Contains(string(b), want)
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func kubeconfig(server string, p *pki) []byte {
	return kubeconfigFor(server, p.caPEM, p.adminCertPEM, p.adminKeyPEM)
}

func kubeconfigFor(server string, caPEM, certPEM, keyPEM []byte) []byte {
	b64 := base64.StdEncoding.EncodeToString
	return []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority-data: %s
users:
- name: e2e-admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e-admin, namespace: default}
current-context: e2e
`, server, b64(caPEM), b64(certPEM), b64(keyPEM)))
}

// UserKubeconfig writes a kubeconfig for user (member of groups) with a
// client certificate signed by the cluster CA, and returns its path. The user
// has no permissions beyond what RBAC objects grant it: use it to test with a
// restricted identity (e.g. the ClusterRole kubedra ships).
func (c *Cluster) UserKubeconfig(user string, groups ...string) (string, error) {
	name := nonDNS.ReplaceAllString(strings.ToLower(user), "-")
	dir := filepath.Join(c.StateDir, "pki", "users")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	certPEM, keyPEM, err := c.pki.leaf(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"),
		pkix.Name{CommonName: user, Organization: groups}, x509.ExtKeyUsageClientAuth, nil, nil)
	if err != nil {
		return "", fmt.Errorf("issuing a client certificate for %s: %w", user, err)
	}
	path := filepath.Join(c.StateDir, "kubeconfig-"+name)
	return path, os.WriteFile(path, kubeconfigFor(c.APIServerURL, c.pki.caPEM, certPEM, keyPEM), 0o600)
}
