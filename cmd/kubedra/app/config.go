package app

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubedra/kubedra/action"
)

// configKeys maps the file's keys to the flags they default; a key applies
// to a command only when the command has that flag.
var configKeys = []struct{ key, flag string }{
	{"rules", "rules"},
	{"failOn", "fail-on"},
	{"target", "target-version"},
	{"strategy", "strategy"},
	{"allowLossy", "allow-lossy"},
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
func ApplyDefaults(flags *pflag.FlagSet, streams IOStreams, cfg *action.Config) error {
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
			vals, ok := cfg.Value(k.key)
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
func configure(flags *pflag.FlagSet, streams IOStreams, explicit string) (*action.Config, error) {
	cfg, err := action.LoadConfig(explicit, streams.Getenv, workdir(streams))
	if err != nil {
		return nil, err
	}
	if err := ApplyDefaults(flags, streams, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// workdir is the working folder, or "" when it cannot be known.
func workdir(streams IOStreams) string {
	if streams.Getwd == nil {
		return ""
	}
	wd, _ := streams.Getwd()
	return wd
}
