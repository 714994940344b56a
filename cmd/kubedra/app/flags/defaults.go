package flags

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/kubedra/kubedra/cmd/kubedra/iostreams"
	"github.com/kubedra/kubedra/config"
	"github.com/kubedra/kubedra/rewrite/plan"
)

// configKeys maps the file's keys to the flags they default; a key applies
// to a command only when the command has that flag.
var configKeys = []struct{ key, flag string }{
	{"rules", "rules"},
	{"failOn", "fail-on"},
	{"target", "target-version"},
	{"strategy", "strategy"},
	{"allowLossy", "allow-lossy"},
	{"kueueMapsClasses", "kueue-maps-classes"},
}

// envChecks validate environment values of flags whose values are checked
// after parsing (string flags), so that a bad value names the variable
// rather than the flag the user did not type.
var envChecks = map[string]func(string) error{
	"fail-on": func(v string) error {
		if _, err := plan.ParseGate(v); err != nil {
			return errors.New("use any, unmapped or lossy")
		}
		return nil
	},
	"strategy": func(v string) error {
		switch plan.Strategy(v) {
		case plan.Claims, plan.ExtendedResource, plan.Auto:
			return nil
		}
		return errors.New("use claims, extended-resource or auto")
	},
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
func ApplyDefaults(fs *pflag.FlagSet, streams iostreams.IOStreams, cfg *config.Config) error {
	fromEnv := map[string]bool{}
	var errs []error
	fs.VisitAll(func(f *pflag.Flag) {
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
		if check := envChecks[f.Name]; check != nil {
			if err := check(v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
				return
			}
		}
		if err := setFlag(f, splitList(f, v)); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", env, v, err))
			return
		}
		fromEnv[f.Name] = true
	})
	if cfg != nil {
		for _, k := range configKeys {
			f := fs.Lookup(k.flag)
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
		return &Error{Err: errors.Join(errs...)}
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
