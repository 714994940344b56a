// Package browser tests kubedra's HTML report in a real headless Chromium,
// driven over the DevTools protocol with chromedp: the page loads from a
// file with no network, logs no console error, and shows the pool map.
//
// It needs no control plane. The test is skipped when Chromium is not
// installed, unless KUBEDRA_BROWSER=1 (set by make e2e, which .ci/run runs
// after installing Debian's chromium): then a missing browser fails it.
package browser
