package flags

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/kubedra/kubedra/cmd/kubedra/iostreams"
	"github.com/kubedra/kubedra/config"
)

// TestApplyDefaultsPrecedence: flags > KUBEDRA_* > .kubedra.yaml > built-in default.
func TestApplyDefaultsPrecedence(t *testing.T) {
	t.Parallel()
	tru := true
	cfg := &config.Config{Path: "/repo/.kubedra.yaml", FailOn: "lossy", Target: "1.33", Rules: []string{"r.yaml", "/abs/s.yaml"}, AllowLossy: &tru, KueueMapsClasses: &tru}
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want map[string]string
	}{
		{name: "file only", want: map[string]string{"fail-on": "lossy", "target-version": "1.33", "rules": "[/repo/r.yaml,/abs/s.yaml]", "allow-lossy": "true", "kueue-maps-classes": "true", "output": "table"}},
		{name: "env beats file", env: map[string]string{"KUBEDRA_FAIL_ON": "unmapped", "KUBEDRA_RULES": "a.yaml, b.yaml", "KUBEDRA_OUTPUT": "sarif"},
			want: map[string]string{"fail-on": "unmapped", "target-version": "1.33", "rules": "[a.yaml,b.yaml]", "allow-lossy": "true", "kueue-maps-classes": "true", "output": "sarif"}},
		{name: "flag beats env", args: []string{"--fail-on=any", "--rules=c.yaml"}, env: map[string]string{"KUBEDRA_FAIL_ON": "unmapped", "KUBEDRA_RULES": "a.yaml"},
			want: map[string]string{"fail-on": "any", "target-version": "1.33", "rules": "[c.yaml]", "allow-lossy": "true", "kueue-maps-classes": "true", "output": "table"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			fs.String("fail-on", "any", "")
			fs.String("target-version", "1.34", "")
			fs.StringArray("rules", nil, "")
			fs.Bool("allow-lossy", false, "")
			fs.Bool("kueue-maps-classes", false, "")
			fs.StringP("output", "o", "table", "")
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			streams, _, _ := iostreams.Test("", tt.env, "/")
			if err := ApplyDefaults(fs, streams, cfg); err != nil {
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
	streams, _, _ := iostreams.Test("", map[string]string{"KUBEDRA_ALLOW_LOSSY": "maybe"}, "/")
	err := ApplyDefaults(fs, streams, nil)
	if err == nil || !strings.Contains(err.Error(), "KUBEDRA_ALLOW_LOSSY") {
		t.Errorf("err = %v, want one naming KUBEDRA_ALLOW_LOSSY", err)
	}
}
