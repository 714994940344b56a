package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/rules"
)

func TestBundleFlags(t *testing.T) {
	tests := []struct {
		name                        string
		args                        []string
		want                        BundleOptions
		wantContext, wantKubeconfig string
		wantErr                     string
	}{
		{name: "list", args: []string{"--list-drivers"}, want: BundleOptions{ListDrivers: true, Output: "table", BundleOptions: action.BundleOptions{Target: rules.DefaultTarget, Strategy: "claims"}}},
		{name: "full", args: []string{"--driver", "neuron", "--from-dump", "d.yaml", "--out", "o", "--pools", "trn2-a,trn2-b", "--target-version", "1.36", "--strategy", "extended-resource", "--force", "--context", "prod", "--kubeconfig", "/k"},
			want: BundleOptions{Cluster: flags.Cluster{FromDump: "d.yaml"}, Force: true, Output: "table", BundleOptions: action.BundleOptions{
				Driver: "neuron", Out: "o", Pools: []string{"trn2-a", "trn2-b"}, Target: rules.Version{Major: 1, Minor: 36}, Strategy: "extended-resource"}},
			wantContext: "prod", wantKubeconfig: "/k"},
		{name: "bad output", args: []string{"--driver", "nvidia", "--out", "o", "-o", "bogus"}, wantErr: `unknown output format "bogus": use table, json, yaml`},
		{name: "kubectl flags are not bundle's", args: []string{"--driver", "nvidia", "--out", "o", "--as", "bob"}, wantErr: "unknown flag: --as"},
		{name: "no driver", args: []string{"--out", "o"}, wantErr: "--driver is required"},
		{name: "no out", args: []string{"--driver", "nvidia"}, wantErr: "--out is required"},
		{name: "both sources", args: []string{"--driver", "nvidia", "--out", "o", "--from-cluster", "--from-dump", "d"}, wantErr: "cannot be used together"},
		{name: "bad strategy", args: []string{"--driver", "nvidia", "--out", "o", "--strategy", "maybe"}, wantErr: "--strategy must be"},
		{name: "bad target", args: []string{"--driver", "nvidia", "--out", "o", "--target-version", "1.20"}, wantErr: "not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			streams, _, _ := TestStreams("", nil, "")
			var got *BundleOptions
			cmd := NewCmdBundle(streams, func(o *BundleOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("want error %q, got %v", tt.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if *got.ConfigFlags.Context != tt.wantContext || *got.ConfigFlags.KubeConfig != tt.wantKubeconfig {
				t.Errorf("--context %q --kubeconfig %q, want %q %q", *got.ConfigFlags.Context, *got.ConfigFlags.KubeConfig, tt.wantContext, tt.wantKubeconfig)
			}
			got.IO, got.ConfigFlags = IOStreams{}, nil
			if diff := cmp.Diff(tt.want, *got, cmp.AllowUnexported(BundleOptions{})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBundleMain runs bundle and verify through Main: the exit codes and
// where output goes.
func TestBundleMain(t *testing.T) {
	dump := filepath.Join("..", "..", "..", "bundle", "testdata", "example-cluster.yaml")
	out := filepath.Join(t.TempDir(), "cutover")

	code, stdout, stderr := Invoke(t, Invocation{Args: []string{"bundle", "--driver", "example", "--from-dump", dump, "--out", out}})
	if code != ExitOK || stdout != "" || !strings.Contains(stderr, "wrote 14 files") {
		t.Fatalf("bundle: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "PLAN.md")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr = Invoke(t, Invocation{Args: []string{"bundle", "--driver", "example", "--from-dump", dump, "--out", out}}); code != ExitError || !strings.Contains(stderr, "--force") {
		t.Errorf("second run without --force: exit %d, stderr %s", code, stderr)
	}
	// The unpatched plugin in the dump conflicts once a node is labelled.
	code, stdout, _ = Invoke(t, Invocation{Args: []string{"bundle", "verify", "--from-dump", dump, out}})
	if code != ExitFindings || !strings.Contains(stdout, "gpu-a-1  labelled") {
		t.Errorf("verify: exit %d, want %d\n%s", code, ExitFindings, stdout)
	}
	code, _, stderr = Invoke(t, Invocation{Args: []string{"bundle", "--driver", "nvidai", "--out", out + "2"}})
	if code != ExitError || !strings.Contains(stderr, "valid drivers are amd, efa, example") {
		t.Errorf("unknown driver: exit %d, stderr %s", code, stderr)
	}
	if _, err := os.Stat(out + "2"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed bundle left a folder behind: %v", err)
	}
	// An unknown -o fails when flags are parsed, with or without --list-drivers.
	for _, args := range [][]string{{"bundle", "--driver", "example", "--out", out + "3", "-o", "bogus"}, {"bundle", "verify", "-o", "bogus", out}} {
		if code, _, stderr = Invoke(t, Invocation{Args: args}); code != ExitError || !strings.Contains(stderr, `unknown output format "bogus"`) {
			t.Errorf("%v: exit %d, stderr %s", args, code, stderr)
		}
	}
	if _, err := os.Stat(out + "3"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("bundle -o bogus wrote a folder: %v", err)
	}
	code, stdout, _ = Invoke(t, Invocation{Args: []string{"bundle", "--list-drivers", "-o", "yaml"}})
	if code != ExitOK || !strings.Contains(stdout, "kind: DriverCatalogue") || !strings.Contains(stdout, "release: v0.5.0") {
		t.Errorf("--list-drivers -o yaml: exit %d\n%s", code, stdout)
	}
}
