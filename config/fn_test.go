package config

import (
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestParseFnKeys: a functionConfig's kubedra fields are read at the top
// level, under spec: or from a ConfigMap's string data, and a key kubedra
// does not know is refused with its line wherever it is.
func TestParseFnKeys(t *testing.T) {
	for _, tc := range []struct {
		name, fc, err string
		want          Fn
	}{
		{name: "top level", fc: "apiVersion: kubedra.dev/v1alpha1\nkind: Check\nmetadata: {name: x}\nfailOn: lossy\n",
			want: Fn{Mode: "check", FailOn: "lossy"}},
		{name: "spec", fc: "apiVersion: kubedra.dev/v1alpha1\nkind: Migrate\nspec:\n  mode: migrate\n  share: true\n  rules: [a.yaml]\n",
			want: Fn{Mode: "migrate", FailOn: "any", Share: true, Rules: []string{"a.yaml"}}},
		{name: "configmap strings", fc: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  mode: migrate\n  allowLossy: \"true\"\n  rules: \"[a.yaml, b.yaml]\"\n  targetVersion: \"1.36\"\n",
			want: Fn{Mode: "migrate", FailOn: "any", AllowLossy: true, Rules: []string{"a.yaml", "b.yaml"}, TargetVersion: "1.36"}},
		{name: "unknown top level", fc: "apiVersion: v1\nkind: X\nfailon: any\n", err: `line 3: unknown key "failon" (keys are case-sensitive: failOn)`},
		{name: "unknown in spec", fc: "apiVersion: v1\nkind: X\nspec:\n  mode: check\n  strict: true\n", err: `line 5: unknown key "strict" in spec`},
		{name: "unknown in data", fc: "apiVersion: v1\nkind: ConfigMap\ndata:\n  fail-on: any\n", err: `line 4: unknown key "fail-on" in data`},
		{name: "kubedra keys beside spec", fc: "apiVersion: v1\nkind: X\nmode: check\nspec: {failOn: any}\n", err: `line 3: unknown key "mode"`},
		{name: "typed wrongly", fc: "apiVersion: v1\nkind: X\nspec: {share: maybe}\n", err: "functionConfig"},
		{name: "spec and data", fc: "apiVersion: v1\nkind: X\nspec:\n  mode: check\ndata:\n  mode: migrate\n", err: "functionConfig: line 5: both spec (line 3) and data (line 5) hold kubedra's fields: keep one"},
		{name: "spec and empty data", fc: "apiVersion: v1\nkind: X\nspec: {mode: check}\ndata: {}\n", err: "both spec (line 3) and data (line 4)"},
		{name: "typed data in a list checked", fc: "apiVersion: v1\nkind: ConfigMap\ndata:\n  rules: \"[a.yaml, {b: 1}]\"\n", err: "line 4:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseFn(yaml.MustParse(tc.fc), "check")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Mode != tc.want.Mode || got.FailOn != tc.want.FailOn || got.AllowLossy != tc.want.AllowLossy || got.Share != tc.want.Share ||
				got.TargetVersion != tc.want.TargetVersion || strings.Join(got.Rules, ",") != strings.Join(tc.want.Rules, ",") {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
