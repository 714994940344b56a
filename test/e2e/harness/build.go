package harness

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// buildRecipe must change whenever the go build flags below change, so that
// cached binaries are rebuilt. It is the same recipe number (and the same hash
// input) as ../shared/cluster/up.sh uses, so both share one binary cache.
const buildRecipe = 1

// Binaries are the programs built from a wrapper module, in start order.
var Binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl"}

// Version is one Kubernetes release the harness can build: the wrapper module
// that pins it and where its binaries are cached.
type Version struct {
	// Minor is "1.37" or "1.34": it names the wrapper module dir lcp/v<Minor>.
	Minor string
	// Kubernetes is the exact k8s.io/kubernetes version the module pins ("v1.37.2").
	Kubernetes string
	// ModuleDir is the wrapper module (go.mod, go.sum, tools.go, cmd/etcd).
	ModuleDir string
	// BinDir holds the built binaries: <cache>/bin/<Kubernetes>-<hash of the module>.
	BinDir string
}

// TargetVersion is the value for `kubedra migrate --target-version`: the minor.
func (v Version) TargetVersion() string { return v.Minor }

var minorRE = regexp.MustCompile(`^v?(1\.\d+)(?:\.(\d+|x))?$`)

// ResolveVersion finds the wrapper module for want ("1.37", "1.37.2", "v1.34.x";
// empty means $K8S_VERSION, else 1.37) below the test/e2e module and computes
// its cache dir. A full patch version must equal the one the module pins.
func ResolveVersion(want string) (Version, error) {
	if want == "" {
		want = os.Getenv("K8S_VERSION")
	}
	if want == "" {
		want = "1.37"
	}
	m := minorRE.FindStringSubmatch(strings.TrimSpace(want))
	if m == nil {
		return Version{}, fmt.Errorf("K8S_VERSION %q: want a Kubernetes version like 1.37, 1.37.2 or 1.34.x", want)
	}
	root, err := moduleRoot()
	if err != nil {
		return Version{}, err
	}
	v := Version{Minor: m[1], ModuleDir: filepath.Join(root, "lcp", "v"+m[1])}
	gomod, err := os.ReadFile(filepath.Join(v.ModuleDir, "go.mod"))
	if err != nil {
		avail, _ := filepath.Glob(filepath.Join(root, "lcp", "v1.*"))
		for i := range avail {
			avail[i] = strings.TrimPrefix(filepath.Base(avail[i]), "v")
		}
		return Version{}, fmt.Errorf("no wrapper module for Kubernetes %s (%w); available: %s; "+
			"generate one with test/e2e/lcp/gen-gomod.sh", m[1], err, strings.Join(avail, ", "))
	}
	for _, line := range strings.Split(string(gomod), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "k8s.io/kubernetes" && strings.HasPrefix(f[1], "v1.") {
			v.Kubernetes = f[1]
			break
		}
	}
	if v.Kubernetes == "" {
		return Version{}, fmt.Errorf("%s/go.mod does not require k8s.io/kubernetes", v.ModuleDir)
	}
	if m[2] != "" && m[2] != "x" && v.Kubernetes != "v"+m[1]+"."+m[2] {
		return Version{}, fmt.Errorf("K8S_VERSION %s: the wrapper module %s pins %s; regenerate it with "+
			"test/e2e/lcp/gen-gomod.sh v%s.%s or ask for %s", want, v.ModuleDir, v.Kubernetes, m[1], m[2], m[1])
	}
	h := sha256.New()
	fmt.Fprintf(h, "recipe %d\n", buildRecipe)
	for _, name := range []string{"go.mod", "go.sum", filepath.Join("cmd", "etcd", "main.go")} {
		b, err := os.ReadFile(filepath.Join(v.ModuleDir, name))
		if err != nil {
			return Version{}, fmt.Errorf("reading the wrapper module: %w", err)
		}
		h.Write(b)
	}
	v.BinDir = filepath.Join(CacheDir(), "bin", v.Kubernetes+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	return v, nil
}

// CacheDir is where built binaries are kept, outside any clone:
// $LCP_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/kubedra-lcp.
func CacheDir() string {
	if d := os.Getenv("LCP_CACHE_DIR"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "kubedra-lcp")
}

// moduleRoot walks up from the working directory (go test runs a package's
// tests in its source dir) to the test/e2e module. $E2E_MODULE_DIR overrides.
func moduleRoot() (string, error) {
	if d := os.Getenv("E2E_MODULE_DIR"); d != "" {
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/kubedra/kubedra/test/e2e\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("cannot find the test/e2e module (go.mod of github.com/kubedra/kubedra/test/e2e) " +
				"above the working directory; set E2E_MODULE_DIR")
		}
		dir = parent
	}
}

// Built reports whether all binaries of v exist and were built from its module.
func (v Version) Built() bool {
	for _, b := range Binaries {
		if fi, err := os.Stat(filepath.Join(v.BinDir, b)); err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	stamp, err := os.ReadFile(filepath.Join(v.BinDir, ".stamp"))
	return err == nil && strings.TrimSpace(string(stamp)) == v.Kubernetes+" "+filepath.Base(v.BinDir)[len(v.Kubernetes)+1:]
}

// EnsureBuilt builds the binaries of v unless they are cached. It holds an
// exclusive lock on BinDir/.lock meanwhile (the same lock up.sh takes), so
// parallel test binaries wait for one build instead of starting their own.
// Build output goes to progress (nil: discarded). A cold build takes 15-40
// minutes on 2 cores; with a warm GOCACHE it is a ~50 s relink.
func EnsureBuilt(ctx context.Context, v Version, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	if err := os.MkdirAll(v.BinDir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(filepath.Join(v.BinDir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := flockWait(ctx, lock, progress, v.BinDir); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too
	if v.Built() {
		return nil
	}
	return build(ctx, v, progress)
}

func flockWait(ctx context.Context, f *os.File, progress io.Writer, dir string) error {
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		return nil
	}
	fmt.Fprintf(progress, "[lcp] another build holds %s/.lock; waiting for it\n", dir)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the build lock %s/.lock: %w", dir, ctx.Err())
		case <-tick.C:
			if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
				return nil
			}
		}
	}
}

func build(ctx context.Context, v Version, progress io.Writer) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		if _, serr := os.Stat("/usr/local/go/bin/go"); serr != nil {
			return errors.New("the go command is not on PATH (needed to build the control plane)")
		}
		goBin = "/usr/local/go/bin/go"
	}
	minor := strings.SplitN(strings.TrimPrefix(v.Kubernetes, "v"), ".", 3)
	var ld []string
	ld = append(ld, "-s", "-w")
	for _, p := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ld = append(ld, "-X", p+".gitVersion="+v.Kubernetes, "-X", p+".gitMajor="+minor[0],
			"-X", p+".gitMinor="+minor[1], "-X", p+".gitTreeState=clean")
	}
	for _, stale := range mustGlob(filepath.Join(v.BinDir, ".build.*")) {
		os.RemoveAll(stale) // left over by an interrupted build; we hold the lock
	}
	tmp, err := os.MkdirTemp(v.BinDir, ".build.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags", strings.Join(ld, " "), "-o", tmp + "/",
		"./cmd/etcd", "k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager",
		"k8s.io/kubernetes/cmd/kube-scheduler", "k8s.io/kubernetes/cmd/kubectl"}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = v.ModuleDir
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=readonly")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out := &lineWriter{w: progress, prefix: "[lcp build] "}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	fmt.Fprintf(progress, "[lcp] building %s (%s) into %s from %s: a cold build is ~27 CPU-minutes "+
		"(15-40 min on 2 cores), a relink with a warm Go build cache ~1 min\n",
		strings.Join(Binaries, ", "), v.Kubernetes, v.BinDir, v.ModuleDir)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the control plane (%s) in %s failed after %s: %w (go output above)",
			v.Kubernetes, v.ModuleDir, time.Since(start).Round(time.Second), err)
	}
	for _, b := range Binaries {
		if err := os.Rename(filepath.Join(tmp, b), filepath.Join(v.BinDir, b)); err != nil {
			return err
		}
	}
	stamp := v.Kubernetes + " " + filepath.Base(v.BinDir)[len(v.Kubernetes)+1:] + "\n"
	if err := os.WriteFile(filepath.Join(v.BinDir, ".stamp"), []byte(stamp), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(progress, "[lcp] build done in %s\n", time.Since(start).Round(time.Second))
	return nil
}

func mustGlob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}

// lineWriter prefixes each line written to it.
type lineWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.buf = append(l.buf, p...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		fmt.Fprintf(l.w, "%s%s\n", l.prefix, l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}
