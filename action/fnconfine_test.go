package action_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/internal/testfs"
)

// Issue 29 item 4: a KRM functionConfig comes with the repository: the
// rules files it names must lie in the function's working folder, or it
// is refused before any is read, without echoing their content.
func TestFnConfigRulesConfined(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "shadow")
	testfs.WriteFile(t, secret, "root:$6$secret-hash:19000:0:99999:7:::\n")
	wd := t.TempDir()
	os.Symlink(secret, filepath.Join(wd, "link.yaml"))
	for _, r := range []string{secret, "link.yaml", "../" + filepath.Base(outside) + "/shadow"} {
		fc := yaml.MustParse("apiVersion: kubedra.dev/v1alpha1\nkind: Kubedra\nrules: [" + r + "]\n")
		_, err := action.Fn{Mode: "check", Dir: wd}.Run(nil, fc)
		if err == nil || !strings.Contains(err.Error(), "outside") || strings.Contains(err.Error(), "secret-hash") {
			t.Errorf("rules %s: %v", r, err)
		}
	}
}
