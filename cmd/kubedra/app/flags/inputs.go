package flags

import (
	"bytes"
	"fmt"

	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/cmd/kubedra/iostreams"
	"github.com/kubedra/kubedra/config"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// Inputs are the flags scan, check, migrate and simulate share and what
// they make of them: the inputs, rules, target, config file, colour and
// quiet.
type Inputs struct {
	IO        iostreams.IOStreams
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

// NewInputs are Inputs with their defaults, before the flags are parsed.
func NewInputs(streams iostreams.IOStreams) Inputs {
	return Inputs{IO: streams, Target: rules.DefaultTarget}
}

// Bind binds the shared flags; verb, what and quiet fill in their help.
func (o *Inputs) Bind(cmd *cobra.Command, verb, what, quiet string) {
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
	// A command that reads a cluster has -n/--namespace already (its
	// scope); it passes that on to the charts (ChartNamespace).
	if f.Lookup("namespace") == nil {
		f.StringVarP(&o.Charts.Namespace, "namespace", "n", "", `namespace the charts among the inputs render in (.Release.Namespace; as helm template --namespace; default "default")`)
	}
	_ = cmd.RegisterFlagCompletionFunc("color", cobra.FixedCompletions([]string{report.ColorAuto, report.ColorAlways, report.ColorNever}, cobra.ShellCompDirectiveNoFileComp))
}

// Setup takes the paths (arguments, then -f), fills the flags not given
// from KUBEDRA_* and the config file, and checks --color and --example.
func (o *Inputs) Setup(cmd *cobra.Command, args []string, noInput string) error {
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
		return &Error{Err: fmt.Errorf("unknown --color %q: use auto, always or never", o.Color)}
	}
	switch {
	case o.Example && len(o.Paths) > 0:
		return Errorf("--example takes no paths")
	case !o.Example && len(o.Paths) == 0:
		if !o.IO.InTTY {
			// Data may be piped in: a Helm 3 post-renderer given
			// --post-renderer-args migrate without the "-".
			noInput += "; stdin is not a terminal: pass - to read it"
			if cmd.Name() == "migrate" {
				noInput += " (a Helm 3 post-renderer: --post-renderer-args migrate --post-renderer-args -; Helm 4: the plugin, docs/helm.md)"
			}
		}
		return Errorf("no input: %s", noInput)
	}
	return nil
}

// Resolve is what the command runs on: its input (the working folder's
// paths, or the embedded example), the rules, stdout's colour and the
// ignores.
func (o *Inputs) Resolve() (action.Input, *rules.Set, colorprofile.Profile, *plan.Ignores, error) {
	in := action.Input{Paths: o.Paths, Stdin: o.IO.In, Dir: o.IO.Dir(), Charts: o.Charts}
	if o.Example {
		in.Paths, in.Stdin, in.StdinName = []string{"-"}, bytes.NewReader(ExampleManifest()), ExamplePath
	}
	set, err := rules.LoadFrom(o.IO.Dir(), o.Rules...)
	if err != nil {
		return in, nil, 0, nil, fmt.Errorf("loading rules: %w", err)
	}
	profile, err := report.ColorProfile(o.Color, o.IO.OutTTY, o.IO.Getenv)
	if err != nil {
		return in, nil, 0, nil, &Error{Err: err}
	}
	return in, set, profile, o.cfg.Ignores(o.IO.Dir()), nil
}
