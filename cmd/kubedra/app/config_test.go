package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/kubedra/kubedra/action"
)

func configStreams(wd string, env map[string]string) IOStreams {
	return IOStreams{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Getwd:     func() (string, error) { return wd, nil },
	}
}

// TestApplyDefaultsPrecedence: flags > KUBEDRA_* > .kubedra.yaml > built-in default.
func TestApplyDefaultsPrecedence(t *testing.T) {
	t.Parallel()
	tru := true
	cfg := &action.Config{Path: "/repo/.kubedra.yaml", FailOn: "lossy", Target: "1.33", Rules: []string{"r.yaml", "/abs/s.yaml"}, AllowLossy: &tru}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want map[string]string
	}{
		{name: "file only", want: map[string]string{"fail-on": "lossy", "target-version": "1.33", "rules": "[/repo/r.yaml,/abs/s.yaml]", "allow-lossy": "true", "output": "table"}},
		{name: "env beats file", env: map[string]string{"KUBEDRA_FAIL_ON": "unmapped", "KUBEDRA_RULES": "a.yaml, b.yaml", "KUBEDRA_OUTPUT": "sarif"},
			want: map[string]string{"fail-on": "unmapped", "target-version": "1.33", "rules": "[a.yaml,b.yaml]", "allow-lossy": "true", "output": "sarif"}},
		{name: "flag beats env", args: []string{"--fail-on=any", "--rules=c.yaml"}, env: map[string]string{"KUBEDRA_FAIL_ON": "unmapped", "KUBEDRA_RULES": "a.yaml"},
			want: map[string]string{"fail-on": "any", "target-version": "1.33", "rules": "[c.yaml]", "allow-lossy": "true", "output": "table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.String("fail-on", "any", "")
			fs.String("target-version", "1.34", "")
			fs.StringArray("rules", nil, "")
			fs.Bool("allow-lossy", false, "")
			fs.StringP("output", "o", "table", "")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := ApplyDefaults(fs, configStreams("/", tt.env), cfg); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			fs.VisitAll(func(f *pflag.Flag) { got[f.Name] = f.Value.String() })
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestApplyDefaultsBadEnv(t *testing.T) {
	t.Parallel()
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.Bool("allow-lossy", false, "")
	err := ApplyDefaults(fs, configStreams("/", map[string]string{"KUBEDRA_ALLOW_LOSSY": "maybe"}), nil)
	if err == nil || !strings.Contains(err.Error(), "KUBEDRA_ALLOW_LOSSY") {
		t.Errorf("err = %v, want one naming KUBEDRA_ALLOW_LOSSY", err)
	}
}

func checkWrite(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
