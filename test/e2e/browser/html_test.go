package browser_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/kubedra/kubedra/test/e2e/harness"
)

// chromium finds the browser, or skips (fails with KUBEDRA_BROWSER=1).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("KUBEDRA_BROWSER") == "1" {
		t.Fatal("KUBEDRA_BROWSER=1 but no chromium on PATH: apt-get install -y chromium (.ci/run does)")
	}
	t.Skip("no chromium on PATH (set KUBEDRA_BROWSER=1 to require it)")
	return ""
}

// TestAuditPage renders `kubedra audit -o html --bundle` for the mixed
// cluster fixture and loads it in headless Chromium with the network off:
// no console error or exception, no request but the file itself, every
// pool on the map in its device-mode column, the conflicting pool marked,
// and a screenshot (docs/audit-map.png with KUBEDRA_UPDATE_SCREENSHOT=1).
func TestAuditPage(t *testing.T) {
	browser := chromium(t)
	bin, err := harness.KubedraBin()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	dump, err := filepath.Abs("testdata/cluster.yaml")
	if err != nil {
		t.Fatal(err)
	}
	run := func(code int, args ...string) []byte {
		t.Helper()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = dir
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		got := 0
		if ee, ok := err.(*exec.ExitError); ok {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != code {
			t.Fatalf("kubedra %s: exit %d, want %d\n%s", strings.Join(args, " "), got, code, stderr.String())
		}
		return out
	}
	run(0, "bundle", "--driver", "nvidia", "--from-dump", dump, "--out", "cutover")
	page := run(2, "audit", "--from-dump", dump, "-o", "html", "--bundle", "cutover")
	file := filepath.Join(dir, "audit.html")
	if err := os.WriteFile(file, page, 0o644); err != nil {
		t.Fatal(err)
	}

	actx, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-gpu", true))...)
	defer acancel()
	var mu sync.Mutex
	var requests []string
	bctx, bcancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, e.Request.URL)
			mu.Unlock()
		}
	}))
	defer bcancel()
	// Start the browser, then subscribe to the console before the page
	// loads, so that no message is lost.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatal(err)
	}
	cctx, ccancel := context.WithCancel(bctx)
	var problems []string
	consoleDone := make(chan struct{})
	messages := chromedp.Console(cctx)
	go func() {
		defer close(consoleDone)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				problems = append(problems, m.String())
			}
		}
	}()
	if err := chromedp.Do(bctx, chromedp.Navigate("file://"+file), chromedp.WaitVisible(chromedp.ID("map"))); err != nil {
		t.Fatal(err)
	}
	columns, err := chromedp.Run(bctx, chromedp.Evaluate[map[string]string](`Object.fromEntries([...document.querySelectorAll('#map .pool')].map(p => [p.dataset.pool, p.closest('section').dataset.mode]))`))
	if err != nil {
		t.Fatal(err)
	}
	conflicting, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#map .pool.conflict')].map(p => p.dataset.pool)`))
	if err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	ccancel()
	<-consoleDone
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error("console: " + p)
	}
	for _, u := range requests {
		if u != "file://"+file {
			t.Errorf("the page requested %s: it must be self-contained", u)
		}
	}
	want := map[string]string{"gpu-dra": "DRA", "gpu-mixed": "both", "gpu-plugin": "plugin", "m7i.2xlarge": "none", "trn": "DRA"}
	for pool, mode := range want {
		if columns[pool] != mode {
			t.Errorf("pool %s is in column %q, want %q (map: %v)", pool, columns[pool], mode, columns)
		}
	}
	if len(conflicting) != 1 || conflicting[0] != "gpu-mixed" {
		t.Errorf("pools marked conflicting: %v, want [gpu-mixed]", conflicting)
	}
	if len(shot) < 10_000 {
		t.Errorf("screenshot is %d bytes", len(shot))
	}
	out := filepath.Join(t.TempDir(), "audit-map.png")
	if os.Getenv("KUBEDRA_UPDATE_SCREENSHOT") == "1" {
		out = "../../../docs/audit-map.png"
	}
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", out, len(shot))
}
