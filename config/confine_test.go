package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kubedra/kubedra/config"
	"github.com/kubedra/kubedra/internal/testfs"
)

// Issue 29 item 4: a .kubedra.yaml found in a repository is the
// repository's, not the user's: the rules files it names must lie in its
// folder, or it is refused before any of them is read; one the user names
// (--config, KUBEDRA_CONFIG) may name rules anywhere.
func TestDiscoveredConfigRulesConfined(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "shadow")
	testfs.WriteFile(t, secret, "root:$6$secret-hash:19000:0:99999:7:::\n")
	for _, rules := range []string{secret, "../" + filepath.Base(outside) + "/shadow", "link.yaml"} {
		repo := t.TempDir()
		os.Symlink(secret, filepath.Join(repo, "link.yaml"))
		testfs.WriteFile(t, filepath.Join(repo, config.FileName), "rules: ["+rules+"]\n")
		if rules[0] == '.' {
			// relative to the repo: point at outside from the repo's parent
			os.Symlink(outside, filepath.Join(filepath.Dir(repo), filepath.Base(outside)))
		}
		_, err := config.Load("", nil, repo)
		if err == nil || !strings.Contains(err.Error(), "outside") || strings.Contains(err.Error(), "secret-hash") {
			t.Errorf("rules %s: %v", rules, err)
		}
		cfg, err := config.Load(filepath.Join(repo, config.FileName), nil, repo)
		if err != nil {
			t.Errorf("rules %s, config named by the user: %v", rules, err)
		} else if v, _ := cfg.Value("rules"); len(v) != 1 {
			t.Errorf("rules %s: %v", rules, v)
		}
	}
	repo := t.TempDir()
	testfs.WriteFile(t, filepath.Join(repo, config.FileName), "rules: [rules/site.yaml]\n")
	if _, err := config.Load("", nil, filepath.Join(repo)); err != nil {
		t.Errorf("rules inside the config's folder: %v", err)
	}
}

// A config that is a FIFO or a device is refused without being read
// (a FIFO would hang, /dev/zero read until memory runs out).
func TestConfigNotRegularRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, config.FileName)
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip(err)
	}
	for _, explicit := range []string{"", "/dev/zero"} {
		if _, err := config.Load(explicit, nil, dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%q: %v", explicit, err)
		}
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	testfs.WriteFile(t, big, "failOn: unmapped\n"+strings.Repeat("#", 5<<20)+"\n")
	if _, err := config.Load(big, nil, dir); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("5 MiB config: %v", err)
	}
}
