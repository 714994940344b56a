package app

import (
	"bytes"
	"testing"
)

func TestAuditNamespaceFlag(t *testing.T) {
	streams, _, _ := TestStreams("", nil, "")
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
