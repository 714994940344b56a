package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/internal/confine"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// FileName is the file kubedra looks for in the working folder and the
// folders above it. docs/config.md documents it.
const FileName = ".kubedra.yaml"

// Env names the config file explicitly (like --config); "none" turns
// discovery off.
const Env = "KUBEDRA_CONFIG"

// Config is a .kubedra.yaml: the defaults a repository sets for every
// kubedra command run inside it. Flags beat KUBEDRA_* environment variables,
// which beat the file.
type Config struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// Rules are user rules files, relative to the config file's folder.
	Rules []string `json:"rules,omitempty"`
	// FailOn is check's gate: any, unmapped or lossy.
	FailOn string `json:"failOn,omitempty"`
	// Target is the Kubernetes version output must work on, e.g. "1.34".
	Target string `json:"target,omitempty"`
	// Strategy is migrate's strategy (see kubedra migrate --help).
	Strategy string `json:"strategy,omitempty"`
	// AllowLossy applies documented lossy mappings in migrate.
	AllowLossy *bool `json:"allowLossy,omitempty"`
	// KueueMapsClasses says the cluster's Kueue Configuration maps the
	// DeviceClasses claims use (migrate --kueue-maps-classes).
	KueueMapsClasses *bool `json:"kueueMapsClasses,omitempty"`
	// Ignore opts findings out by file, kind, namespace, name or resource.
	Ignore []plan.IgnoreRule `json:"ignore,omitempty"`

	// Path is the file the config was read from ("" when there is none).
	Path string `json:"-"`
	// Lines are the lines of the file's top-level keys, so that an error
	// about a value names where it is.
	Lines map[string]int `json:"-"`
}

// Where names a key's place in the config file: "path:line" ("path"
// when the line is unknown).
func (c *Config) Where(key string) string {
	if n := c.Lines[key]; n > 0 {
		return fmt.Sprintf("%s:%d", c.Path, n)
	}
	return c.Path
}

// Load finds and reads the config: explicit names the file (from
// --config; "" when not given), else KUBEDRA_CONFIG (from getenv), else
// the first .kubedra.yaml in the working folder wd or a folder above it
// ("" wd: no discovery). "none" turns the config off. No file found is not
// an error: the Config is empty.
func Load(explicit string, getenv func(string) string, wd string) (*Config, error) {
	name := explicit
	if name == "" && getenv != nil {
		name = getenv(Env)
	}
	switch name {
	case "none":
		return &Config{}, nil
	case "":
		found, err := find(wd)
		if err != nil || found == "" {
			return &Config{}, err
		}
		name = found
	default:
		if !filepath.IsAbs(name) {
			name = filepath.Join(wd, name)
		}
	}
	discovered := explicit == "" && (getenv == nil || getenv(Env) == "")
	data, err := confine.ReadFile(name, 0)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := Parse(data)
	if err != nil {
		if line, msg := inventory.LineOf(err, 0); line > 0 {
			return nil, fmt.Errorf("%s:%d: %s", name, line, msg)
		}
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	cfg.Path = name
	if discovered {
		if err := cfg.confineRules(); err != nil {
			return nil, err
		}
	}
	return cfg, nil
}

// confineRules refuses a config found by discovery (a repository's, not
// the user's) whose rules files lead outside its folder: none of them is
// read (rules: [/etc/shadow] would otherwise be echoed by the rules'
// parse errors).
func (c *Config) confineRules() error {
	paths, _ := c.Value("rules")
	roots := confine.New("", c.Dir())
	for _, p := range paths {
		if _, err := roots.Within(p); err != nil {
			return fmt.Errorf("config %s: rules file %w; name it with --rules, or the config with --config, to use it", c.Path, err)
		}
	}
	return nil
}

// find walks from the working folder up to the root.
func find(dir string) (string, error) {
	if dir == "" {
		return "", nil
	}
	for {
		p := filepath.Join(dir, FileName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("finding %s: %w", FileName, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Parse decodes and validates a config file. Unknown keys are errors,
// so that a typo (failon:) does not silently do nothing.
func Parse(data []byte) (*Config, error) {
	lines, err := keyLines(data)
	if err != nil {
		return nil, err
	}
	var cfg Config
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, err
	}
	cfg.Lines = lines
	if cfg.FailOn != "" && !slices.Contains(plan.Gates, plan.Gate(cfg.FailOn)) {
		return nil, inventory.AtLine(lines["failOn"], fmt.Errorf("failOn %q: use any, unmapped or lossy", cfg.FailOn))
	}
	if cfg.Strategy != "" {
		switch plan.Strategy(cfg.Strategy) {
		case plan.Claims, plan.ExtendedResource, plan.Auto:
		default:
			return nil, inventory.AtLine(lines["strategy"], fmt.Errorf("strategy %q: use claims, extended-resource or auto", cfg.Strategy))
		}
	}
	if cfg.Target != "" {
		if _, err := rules.ParseVersion(cfg.Target); err != nil {
			return nil, inventory.AtLine(lines["target"], fmt.Errorf("target: %w", err))
		}
	}
	if cfg.APIVersion != "" && cfg.APIVersion != "kubedra.dev/v1alpha1" {
		return nil, fmt.Errorf("apiVersion %q: want kubedra.dev/v1alpha1", cfg.APIVersion)
	}
	if cfg.Kind != "" && cfg.Kind != "Config" {
		return nil, fmt.Errorf("kind %q: want Config", cfg.Kind)
	}
	for i, r := range cfg.Ignore {
		if err := r.Check(); err != nil {
			return nil, fmt.Errorf("ignore[%d]: %w", i, err)
		}
	}
	return &cfg, nil
}

// Dir is the folder that relative paths in the config are resolved from.
func (c *Config) Dir() string {
	if c.Path == "" {
		return ""
	}
	return filepath.Dir(c.Path)
}

// Value returns the config's value for a key as flag text (rules files
// resolved from the config's folder), and whether it is set.
func (c *Config) Value(key string) ([]string, bool) {
	switch key {
	case "rules":
		if len(c.Rules) == 0 {
			return nil, false
		}
		out := make([]string, len(c.Rules))
		for i, r := range c.Rules {
			if !filepath.IsAbs(r) && c.Dir() != "" {
				r = filepath.Join(c.Dir(), r)
			}
			out[i] = r
		}
		return out, true
	case "failOn":
		return []string{c.FailOn}, c.FailOn != ""
	case "target":
		return []string{c.Target}, c.Target != ""
	case "strategy":
		return []string{c.Strategy}, c.Strategy != ""
	case "allowLossy":
		if c.AllowLossy == nil {
			return nil, false
		}
		return []string{fmt.Sprint(*c.AllowLossy)}, true
	case "kueueMapsClasses":
		if c.KueueMapsClasses == nil {
			return nil, false
		}
		return []string{fmt.Sprint(*c.KueueMapsClasses)}, true
	}
	return nil, false
}

// Ignores are the config's ignore rules as a planning option; wd resolves
// relative input paths.
func (c *Config) Ignores(wd string) *plan.Ignores {
	if c == nil || len(c.Ignore) == 0 {
		return nil
	}
	return &plan.Ignores{Rules: c.Ignore, Dir: c.Dir(), WorkDir: wd, Source: FileName}
}
