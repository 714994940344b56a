package app

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/cluster/clustertest"
)

func auditStreams() (IOStreams, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut,
		LookupEnv: func(string) (string, bool) { return "", false }}, &out, &errOut
}

// runAudit parses args like the CLI, swaps the cluster for fakes seeded
// from testdata/cluster/<fixture>, and runs the audit in-process.
func runAudit(t *testing.T, fixture string, args ...string) (string, error) {
	t.Helper()
	streams, out, _ := auditStreams()
	var opts *AuditOptions
	cmd := NewCmdAudit(streams, func(o *AuditOptions) error { opts = o; return nil })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("flags %v: %v", args, err)
	}
	opts.NewReader = func(genericclioptions.RESTClientGetter) (*cluster.Reader, error) {
		f, err := clustertest.Load(filepath.Join("..", "..", "..", "testdata", "cluster", fixture))
		if err != nil {
			return nil, err
		}
		return f.Reader(), nil
	}
	opts.Context = context.Background()
	err := auditRun(opts)
	return out.String(), err
}

func TestAuditLiveAndDumpAgree(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "dump.yaml")
	live, lerr := runAudit(t, "mixed.yaml", "-o", "json", "--dump", dump)
	offline, derr := runAudit(t, "", "-o", "json", "--from-dump", dump)
	if live != offline {
		t.Errorf("live and --from-dump differ:\n%s\n---\n%s", live, offline)
	}
	if code, _ := exitCode(lerr); code != ExitFindings {
		t.Errorf("live exit %d, want %d", code, ExitFindings)
	}
	if code, _ := exitCode(derr); code != ExitFindings {
		t.Errorf("dump exit %d, want %d", code, ExitFindings)
	}
	data, err := os.ReadFile(dump)
	if err != nil || !bytes.Contains(data, []byte("kind: ClusterInfo")) {
		t.Errorf("dump lacks ClusterInfo: %v", err)
	}
}

func TestAuditNamespaceFlag(t *testing.T) {
	streams, _, _ := auditStreams()
	var got *AuditOptions
	cmd := NewCmdAudit(streams, func(o *AuditOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-n", "ml", "--context", "prod", "--kubeconfig", "/k", "--request-timeout", "5s", "--as", "bob", "-o", "yaml"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	cf := got.ConfigFlags
	if !got.namespaceSet || *cf.Namespace != "ml" || *cf.Context != "prod" || *cf.KubeConfig != "/k" ||
		*cf.Timeout != "5s" || *cf.Impersonate != "bob" || got.Output != "yaml" {
		t.Errorf("flags not parsed: %+v", got)
	}
	for _, bad := range [][]string{{"-o", "csv"}, {"--dump", "a", "--from-dump", "b"}, {"-A", "-n", "x"}, {"extra-arg"}} {
		cmd := NewCmdAudit(streams, func(*AuditOptions) error { return nil })
		cmd.SetArgs(bad)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v: want a usage error", bad)
		}
	}
}
