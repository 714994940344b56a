// Package app is kubedra's command tree: each verb binds its flags (the
// shared ones through package flags' groups) to Options, calls one
// function of package action and hands the result to package report; exit
// codes are exitcode.go's (docs/design.md).
package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
)

// Main runs kubedra with args (args[0] is the program name, as in os.Args)
// and returns the process exit code. It never calls os.Exit, so tests and
// testscript run it in-process.
func Main(args []string, streams IOStreams) int {
	name := "kubedra"
	if len(args) > 0 {
		name = programName(args[0])
		args = args[1:]
	}
	root := NewCmdRoot(name, streams)
	root.SetArgs(args)
	ctx, stop := interruptible()
	cmd, err := root.ExecuteContextC(ctx)
	if stop() && err != nil {
		err = fmt.Errorf("interrupted: %w", err)
	}
	code, msg := exitCode(err)
	if msg != "" {
		fmt.Fprintf(streams.ErrOut, "%s: %s\n", root.DisplayName(), msg)
		var fe *flags.Error
		if errors.As(err, &fe) {
			if cmd == nil {
				cmd = root
			}
			fmt.Fprintf(streams.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
	return code
}

// programName returns how the user invoked kubedra: "kubectl dra" when the
// binary is installed as the kubectl plugin kubectl-dra, else "kubedra".
func programName(arg0 string) string {
	base := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	if base == "kubectl-dra" {
		return "kubectl dra"
	}
	return "kubedra"
}

// NewCmdRoot builds the command tree. name is "kubedra" or "kubectl dra".
func NewCmdRoot(name string, streams IOStreams) *cobra.Command {
	root := &cobra.Command{
		Use:   name,
		Short: "Move Kubernetes workloads from device plugins to Dynamic Resource Allocation",
		Long: heredoc.Doc(`
			kubedra finds workloads that request devices through device plugins
			(nvidia.com/gpu, aws.amazon.com/neuron, vpc.amazonaws.com/efa, ...) and moves
			them to Dynamic Resource Allocation (resource.k8s.io): ResourceClaimTemplates
			with validated CEL selectors, DeviceClasses and a cutover plan.
		`),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if strings.Contains(name, " ") {
		// As a kubectl plugin the binary is kubectl-dra; cobra shows the
		// display name in usage, help and CommandPath (cobra's convention for
		// kubectl plugins).
		root.Use = strings.ReplaceAll(name, " ", "-")
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: name}
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &flags.Error{Err: err} })
	root.CompletionOptions.HiddenDefaultCmd = true

	root.AddCommand(
		NewCmdVersion(streams),
		NewCmdScan(streams, nil),
		NewCmdRules(streams),
		NewCmdBundle(streams, nil),
		NewCmdCheck(streams, nil),
		NewCmdFn(streams),
		NewCmdMigrate(streams, nil),
		NewCmdAudit(streams, nil),
		NewCmdSimulate(streams, nil),
	)
	if name != "kubedra" {
		// Examples are written for the kubedra binary; as a kubectl plugin
		// they must read the way the user types them.
		var rename func(*cobra.Command)
		rename = func(c *cobra.Command) {
			c.Example = strings.ReplaceAll(c.Example, "kubedra ", name+" ")
			for _, sub := range c.Commands() {
				rename(sub)
			}
		}
		rename(root)
	}
	return root
}

// runOr hands the parsed options to runF, a test's stand-in, when there is
// one, else to the command's run.
func runOr[O any](cmd *cobra.Command, opts *O, runF func(*O) error, run func(context.Context, *O) error) error {
	if runF != nil {
		return runF(opts)
	}
	return run(cmd.Context(), opts)
}
