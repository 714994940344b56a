package app

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/config"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
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

// envChecks validate environment values of flags whose values are checked
// after parsing (string flags), so that a bad value names the variable
// rather than the flag the user did not type.
var envChecks = map[string]func(string) error{
	"fail-on": func(v string) error {
		if _, err := action.ParseGate(v); err != nil {
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
func ApplyDefaults(flags *pflag.FlagSet, streams IOStreams, cfg *config.Config) error {
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

// InputFlags are the flags scan, check and migrate share and what they
// make of them: the inputs, rules, target, config file, colour and quiet.
type InputFlags struct {
	IO        IOStreams
	Paths     []string
	Filenames []string
	Rules     []string
	Target    rules.Version
	Example   bool
	Color     string
	Quiet     bool
	// Config names the config file ("" finds .kubedra.yaml, "none" skips).
	Config string
	// Charts are the values Helm charts among the inputs render with.
	Charts action.ChartValues
	cfg    *config.Config
}

// bind binds the shared flags; verb, what and quiet fill in their help.
func (o *InputFlags) bind(cmd *cobra.Command, verb, what, quiet string) {
	f := cmd.Flags()
	f.StringArrayVarP(&o.Filenames, "filename", "f", nil, "file, folder or - to "+verb+" (repeatable; same as a PATH argument)")
	f.StringArrayVar(&o.Rules, "rules", nil, "rules file overlaid on the built-in rules (repeatable; later files win)")
	f.Var(&o.Target, "target-version", fmt.Sprintf("Kubernetes version the output must work on (%s to %s)", rules.MinTarget, rules.MaxTarget))
	f.StringVar(&o.Color, "color", report.ColorAuto, "colour the "+what+": auto, always or never (NO_COLOR is honoured)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, quiet)
	f.StringVar(&o.Config, "config", "", "config file (default: .kubedra.yaml in the working folder or above; none to disable)")
	// helm template's value flags, for the charts among the inputs (-f is
	// --filename here, so --values has no short form).
	f.StringArrayVar(&o.Charts.Values, "values", nil, "Helm values file for the charts among the inputs (repeatable; as helm template -f)")
	f.StringArrayVar(&o.Charts.Set, "set", nil, "Helm value KEY=VALUE for the charts among the inputs (repeatable; as helm template --set)")
	f.StringArrayVar(&o.Charts.SetString, "set-string", nil, "Helm string value KEY=VALUE for the charts (repeatable)")
	f.StringArrayVar(&o.Charts.SetFile, "set-file", nil, "Helm value KEY=PATH read from a file for the charts (repeatable)")
	f.StringArrayVar(&o.Charts.SetJSON, "set-json", nil, "Helm JSON value KEY=JSON for the charts (repeatable)")
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{report.ColorAuto, report.ColorAlways, report.ColorNever}, cobra.ShellCompDirectiveNoFileComp))
}

// setup takes the paths (arguments, then -f), fills the flags not given
// from KUBEDRA_* and the config file, and checks --color and --example.
func (o *InputFlags) setup(cmd *cobra.Command, args []string, noInput string) error {
	o.Paths = append(args, o.Filenames...)
	cfg, err := config.Load(o.Config, o.IO.Getenv, o.IO.Dir())
	if err != nil {
		return err
	}
	if err := ApplyDefaults(cmd.Flags(), o.IO, cfg); err != nil {
		return err
	}
	o.cfg = cfg
	if _, err := report.ColorProfile(o.Color, false, nil); err != nil {
		return &FlagError{Err: fmt.Errorf("unknown --color %q: use auto, always or never", o.Color)}
	}
	switch {
	case o.Example && len(o.Paths) > 0:
		return FlagErrorf("--example takes no paths")
	case !o.Example && len(o.Paths) == 0:
		return FlagErrorf("no input: %s", noInput)
	}
	return nil
}

// run is what the command runs on: its input (the working folder's paths,
// or the embedded example), the rules, stdout's colour and the ignores.
func (o *InputFlags) run() (action.Input, *rules.Set, colorprofile.Profile, *plan.Ignores, error) {
	in := action.Input{Paths: o.Paths, Stdin: o.IO.In, Dir: o.IO.Dir(), Charts: o.Charts}
	if o.Example {
		in.Paths, in.Stdin, in.StdinName = []string{"-"}, bytes.NewReader(ExampleManifest()), ExamplePath
	}
	set, err := loadRules(o.IO, o.Rules)
	if err != nil {
		return in, nil, 0, nil, fmt.Errorf("loading rules: %w", err)
	}
	profile, err := report.ColorProfile(o.Color, o.IO.OutTTY, o.IO.Getenv)
	if err != nil {
		return in, nil, 0, nil, &FlagError{Err: err}
	}
	return in, set, profile, o.cfg.Ignores(o.IO.Dir()), nil
}
