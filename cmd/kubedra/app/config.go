package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// ConfigFileName is the file kubedra looks for in the working folder and
// the folders above it. docs/config.md documents it.
const ConfigFileName = ".kubedra.yaml"

// configEnv names the config file explicitly (like --config); "none" turns
// discovery off.
const configEnv = "KUBEDRA_CONFIG"

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
	// Ignore opts findings out by file, kind, namespace, name or resource.
	Ignore []plan.IgnoreRule `json:"ignore,omitempty"`

	// Path is the file the config was read from ("" when there is none).
	Path string `json:"-"`
}

// configKeys maps the file's keys to the flags they default; a key applies
// to a command only when the command has that flag.
var configKeys = []struct{ key, flag string }{
	{"rules", "rules"},
	{"failOn", "fail-on"},
	{"target", "target-version"},
	{"strategy", "strategy"},
	{"allowLossy", "allow-lossy"},
}

// LoadConfig finds and reads the config: explicit names the file (from
// --config; "" when not given), else KUBEDRA_CONFIG, else the first
// .kubedra.yaml in the working folder or a folder above it. "none" turns
// the config off. No file found is not an error: the Config is empty.
func LoadConfig(streams IOStreams, explicit string) (*Config, error) {
	name := explicit
	if name == "" {
		name = streams.Getenv(configEnv)
	}
	switch name {
	case "none":
		return &Config{}, nil
	case "":
		found, err := findConfig(streams)
		if err != nil || found == "" {
			return &Config{}, err
		}
		name = found
	default:
		if !filepath.IsAbs(name) && streams.Getwd != nil {
			wd, err := streams.Getwd()
			if err != nil {
				return nil, fmt.Errorf("finding %s: %w", name, err)
			}
			name = filepath.Join(wd, name)
		}
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", name, err)
	}
	cfg.Path = name
	return cfg, nil
}

// findConfig walks from the working folder up to the root.
func findConfig(streams IOStreams) (string, error) {
	if streams.Getwd == nil {
		return "", nil
	}
	dir, err := streams.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding %s: %w", ConfigFileName, err)
	}
	for {
		p := filepath.Join(dir, ConfigFileName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("finding %s: %w", ConfigFileName, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// ParseConfig decodes and validates a config file. Unknown keys are errors,
// so that a typo (failon:) does not silently do nothing.
func ParseConfig(data []byte) (*Config, error) {
	var cfg Config
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return nil, err
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

// value returns the config's value for a key as flag text, and whether it
// is set.
func (c *Config) value(key string) ([]string, bool) {
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
	}
	return nil, false
}

// EnvName is the environment variable that mirrors a flag:
// --fail-on -> KUBEDRA_FAIL_ON.
func EnvName(flag string) string {
	return "KUBEDRA_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// ApplyDefaults fills the flags the user did not set on the command line:
// first from KUBEDRA_* environment variables, then from cfg. List flags
// take comma-separated values from the environment. Flags that have no
// meaning as a default (help, config) are left alone.
func ApplyDefaults(flags *pflag.FlagSet, streams IOStreams, cfg *Config) error {
	fromEnv := map[string]bool{}
	var errs []error
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "help" || f.Name == "config" {
			return
		}
		env := EnvName(f.Name)
		v, ok := "", false
		if streams.LookupEnv != nil {
			v, ok = streams.LookupEnv(env)
		}
		if !ok {
			return
		}
		if err := setFlag(f, splitList(f, v)); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			return
		}
		fromEnv[f.Name] = true
	})
	if cfg != nil {
		for _, k := range configKeys {
			f := flags.Lookup(k.flag)
			if f == nil || f.Changed || fromEnv[f.Name] {
				continue
			}
			vals, ok := cfg.value(k.key)
			if !ok {
				continue
			}
			if err := setFlag(f, vals); err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", cfg.Path, k.key, err))
			}
		}
	}
	if len(errs) > 0 {
		return &FlagError{Err: errors.Join(errs...)}
	}
	return nil
}

// splitList splits an environment value for list flags.
func splitList(f *pflag.Flag, v string) []string {
	switch f.Value.Type() {
	case "stringArray", "stringSlice":
		var out []string
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return []string{v}
}

// setFlag sets a default without marking the flag as changed on the
// command line (a list flag's first Set replaces its default).
func setFlag(f *pflag.Flag, vals []string) error {
	for _, v := range vals {
		if err := f.Value.Set(v); err != nil {
			return err
		}
	}
	return nil
}

// configure loads the config a command runs with and fills the flags the
// user did not set from KUBEDRA_* variables, then from the file.
func configure(flags *pflag.FlagSet, streams IOStreams, explicit string) (*Config, error) {
	cfg, err := LoadConfig(streams, explicit)
	if err != nil {
		return nil, err
	}
	if err := ApplyDefaults(flags, streams, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Ignores are the config's ignore rules as a planning option; wd resolves
// relative input paths.
func (c *Config) Ignores(streams IOStreams) *plan.Ignores {
	if c == nil || len(c.Ignore) == 0 {
		return nil
	}
	return &plan.Ignores{Rules: c.Ignore, Dir: c.Dir(), WorkDir: workdir(streams), Source: ConfigFileName}
}

// workdir is the working folder, or "" when it cannot be known.
func workdir(streams IOStreams) string {
	if streams.Getwd == nil {
		return ""
	}
	wd, _ := streams.Getwd()
	return wd
}
