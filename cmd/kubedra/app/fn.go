package app

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/inventory/files"
)

// NewCmdFn builds `kubedra fn`, a KRM function (config.kubernetes.io/v1
// ResourceList on stdin and stdout) for kustomize and kpt.
func NewCmdFn(streams IOStreams) *cobra.Command {
	return &cobra.Command{
		Use:   "fn",
		Short: "Run as a KRM function: check or migrate a ResourceList from stdin",
		Long: heredoc.Doc(`
			Read a config.kubernetes.io/v1 ResourceList on stdin.

			mode check (the default): check the items like kubedra check and write
			them back unchanged with one result per finding (severity error when it
			fails the gate, with file and index when the items carry them). Exit 2
			when a finding fails the gate, which fails kustomize build.

			mode migrate: migrate the items like kubedra migrate - (claim templates
			follow their workloads, item annotations are kept) and report what stays
			on device plugins as warning results; it never fails the build.

			functionConfig fields (top level, under spec:, or a ConfigMap's data:):
			mode (check or migrate), failOn (any, lossy, unmapped), targetVersion,
			rules, and for migrate strategy, allowLossy, share, keepNodeSelectors.
		`),
		Example: heredoc.Doc(`
			# kustomization.yaml
			transformers:
			- kubedra.yaml

			# kubedra.yaml
			apiVersion: kubedra.dev/v1alpha1
			kind: Check
			metadata:
			  name: dra
			  annotations:
			    config.kubernetes.io/function: |
			      exec:
			        path: /usr/local/bin/kubedra
			        args: [fn]
			spec:
			  failOn: unmapped

			$ kustomize build --enable-alpha-plugins --enable-exec overlays/prod
		`),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fnRun(streams, streams.In, "check")
		},
	}
}

// fnRun runs the KRM function on the ResourceList read from in; mode is the
// default when the functionConfig names none.
func fnRun(streams IOStreams, in io.Reader, mode string) error {
	rw := &kio.ByteReadWriter{Reader: in, Writer: streams.Out, KeepReaderAnnotations: true}
	return framework.Execute(fnProcessor{fn: action.Fn{Mode: mode, Dir: streams.Dir()}}, rw)
}

// fnProcessor is `kubedra fn` as kyaml's framework.ResourceListProcessor:
// action.Fn works on the items, report renders what it found as the list's
// results, and findings that fail the gate (check mode) end the function
// with ExitFindings, which fails kustomize build.
type fnProcessor struct{ fn action.Fn }

func (p fnProcessor) Process(rl *framework.ResourceList) error {
	res, err := p.fn.Run(rl.Items, rl.FunctionConfig)
	if err != nil {
		return err
	}
	rl.Items = res.Items
	if res.Check == nil {
		rl.Results = report.KRMResults(res.Diagnostics, res.Origins)
		return nil
	}
	results, failing := report.CheckKRMResults(report.Check{Report: res.Check.Report, FailOn: string(res.Check.FailOn), Failing: res.Check.Failing})
	rl.Results = results
	if len(failing) > 0 {
		return &ExitCodeError{Code: ExitFindings, Err: fmt.Errorf("%d device-plugin request(s) fail the gate:\n%s", len(failing), failing.Error())}
	}
	return nil
}

// answerResourceList answers as `kubedra fn` in mode when stdin is the only
// input and starts with a KRM ResourceList (kustomize or kpt running
// `kubedra check -` or `migrate -` as an exec function); it peeks only,
// so a large plain stream still streams into the command.
func answerResourceList(streams *IOStreams, paths []string, mode string) (done bool, err error) {
	if len(paths) != 1 || paths[0] != "-" || streams.In == nil {
		return false, nil
	}
	br := bufio.NewReaderSize(streams.In, peekSize)
	streams.In = br
	head, err := br.Peek(peekSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return true, fmt.Errorf("reading stdin: %w", err)
	}
	if !files.IsResourceList(head) {
		return false, nil
	}
	return true, fnRun(*streams, br, mode)
}

// peekSize is how much of stdin answerResourceList looks at.
const peekSize = 1 << 20
