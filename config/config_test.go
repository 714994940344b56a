package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubedra/kubedra/config"
	"github.com/kubedra/kubedra/internal/testfs"
)

func TestLoadDiscovery(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	testfs.WriteFile(t, filepath.Join(root, config.FileName), "failOn: unmapped\nrules: [rules/site.yaml]\n")
	other := filepath.Join(root, "other.yaml")
	testfs.WriteFile(t, other, "failOn: lossy\n")

	tests := []struct {
		name     string
		wd       string
		explicit string
		env      map[string]string
		wantPath string
		wantFail string
		wantErr  string
	}{
		{name: "in working folder", wd: root, wantPath: filepath.Join(root, config.FileName), wantFail: "unmapped"},
		{name: "found above", wd: sub, wantPath: filepath.Join(root, config.FileName), wantFail: "unmapped"},
		{name: "none found", wd: t.TempDir()},
		{name: "env names file", wd: sub, env: map[string]string{"KUBEDRA_CONFIG": other}, wantPath: other, wantFail: "lossy"},
		{name: "flag beats env", wd: sub, explicit: filepath.Join(root, config.FileName), env: map[string]string{"KUBEDRA_CONFIG": other}, wantPath: filepath.Join(root, config.FileName), wantFail: "unmapped"},
		{name: "none disables", wd: sub, env: map[string]string{"KUBEDRA_CONFIG": "none"}},
		{name: "relative to working folder", wd: root, explicit: "other.yaml", wantPath: other, wantFail: "lossy"},
		{name: "missing explicit file", wd: root, explicit: "nope.yaml", wantErr: "reading config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := config.Load(tt.explicit, func(k string) string { return tt.env[k] }, tt.wd)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Path != tt.wantPath || cfg.FailOn != tt.wantFail {
				t.Errorf("got path %q failOn %q, want %q %q", cfg.Path, cfg.FailOn, tt.wantPath, tt.wantFail)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"unknown key", "fail_on: any\n", `line 1: unknown key "fail_on"`},
		{"keys are case-sensitive", "FAILON: any\n", `line 1: unknown key "FAILON" (keys are case-sensitive: failOn)`},
		{"nested keys too", "ignore:\n- Kind: Job\n  reason: x\n", `line 2: unknown key "Kind" in ignore[0]`},
		{"bad gate", "target: \"1.34\"\nfailOn: sometimes\n", `line 2: failOn "sometimes": use any, unmapped or lossy`},
		{"bad strategy", "strategy: fast\n", `line 1: strategy "fast"`},
		{"ignore without reason", "ignore:\n- kind: Job\n", "reason is required"},
		{"ignore matching everything", "ignore:\n- reason: x\n", "at least one of"},
		{"bad glob", "ignore:\n- name: '[a'\n  reason: x\n", "pattern"},
		{"wrong kind", "kind: Foo\n", "want Config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
