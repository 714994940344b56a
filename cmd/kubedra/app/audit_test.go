package app_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
)

func TestAuditExitCodes(t *testing.T) {
	t.Parallel()
	fixture := func(name string) string { return filepath.Join("..", "..", "..", "testdata", "cluster", name) }
	partial := `apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: kubedra.dev/v1alpha1
kind: ClusterInfo
serverVersion: v1.37.2
resourceAPIVersions: [v1]
read: [nodes]
problems:
- {resource: pods, reason: "forbidden: pods is forbidden"}
`
	kubectlList := `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}}
`
	tests := []struct {
		name       string
		args       []string
		stdin      string
		want       int
		wantStdout string
		wantStderr string
	}{
		{"error findings", []string{"audit", "--from-dump", fixture("mixed.yaml")}, "", app.ExitFindings, "conflicting", ""},
		{"clean", []string{"audit", "--from-dump", fixture("clean.yaml"), "-o", "markdown"}, "", app.ExitOK, "| plugins | 1 |", ""},
		{"kubectl list on stdin", []string{"audit", "--from-dump", "-", "-o", "yaml"}, kubectlList, app.ExitOK, "kind: AuditReport", ""},
		{"host-service conflict in a dump of nodes and slices", []string{"audit", "--from-dump", fixture("host-services.yaml")}, "", app.ExitFindings, "error     node-conflict  pool br-gpu: a device plugin and a DRA driver both serve nvidia devices on 1 node(s): br-1", ""},
		{"partial read", []string{"audit", "--from-dump", "-"}, partial, app.ExitError, "Partial report", "partial report: could not read pods"},
		{"missing dump", []string{"audit", "--from-dump", "/nonexistent.yaml"}, "", app.ExitError, "", "reading dump"},
		{"broken dump", []string{"audit", "--from-dump", "-"}, "a: [", app.ExitError, "", "reading dump -"},
		{"bad format", []string{"audit", "-o", "csv"}, "", app.ExitError, "", "unknown output format"},
		{"html", []string{"audit", "--from-dump", fixture("mixed.yaml"), "-o", "html"}, "", app.ExitFindings, `<div class="pool conflict" data-pool="gpu-mixed"`, ""},
		{"bundle without html", []string{"audit", "--from-dump", fixture("mixed.yaml"), "--bundle", "cutover"}, "", app.ExitError, "", "--bundle is shown only by -o html"},
		{"html with a missing bundle", []string{"audit", "--from-dump", fixture("mixed.yaml"), "-o", "html", "--bundle", "/nonexistent"}, "", app.ExitError, "", "reading bundle /nonexistent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := app.Invoke(t, app.Invocation{Args: tt.args, Stdin: tt.stdin, Env: map[string]string{"NO_COLOR": "1"}})
			if code != tt.want {
				t.Errorf("exit %d, want %d; stderr: %s", code, tt.want, errOut)
			}
			if !strings.Contains(out, tt.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantStdout, out)
			}
			if !strings.Contains(errOut, tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, errOut)
			}
		})
	}
}
