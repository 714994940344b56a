package app

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime/debug"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/inventory/files"
	"github.com/kubedra/kubedra/rewrite/emit"
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

			functionConfig fields (top level, under spec:, or a ConfigMap's data:,
			not both spec and data):
			mode (check or migrate), failOn (any, lossy, unmapped), targetVersion,
			rules, and for migrate strategy, allowLossy, share, keepNodeSelectors.
			An unknown field is an error.

			Every input is answered with a ResourceList: empty stdin, input that is
			not a ResourceList, a bad functionConfig or a malformed item gets the
			items back unchanged with an error result naming what and where, exit 1.
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
// default when the functionConfig names none. It answers every input with
// a ResourceList: when it cannot do its job (stdin empty or not a
// ResourceList, a bad functionConfig, items that are not objects) the
// answer holds the items it was given, unchanged, and an error result
// saying why, so that kustomize and kpt show it; the exit code is then 1.
// Items that are objects are checked or migrated whatever the others hold.
func fnRun(streams IOStreams, in io.Reader, mode string) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return fnFailed(streams, nil, nil, fmt.Errorf("reading stdin: %w", err))
	}
	if done, err := fnStream(streams, data, mode, fnBatch); done {
		return err
	}
	return fnWhole(streams, data, mode)
}

// fnWhole is fnRun on the whole list parsed at once.
func fnWhole(streams IOStreams, data []byte, mode string) error {
	rl, err := files.ParseResourceList(data)
	if err != nil {
		return fnFailed(streams, nil, nil, fmt.Errorf("stdin: %w", err))
	}
	// kyaml's framework moves the item annotations between their legacy
	// and internal names around a function; so does kubedra.
	annotations, err := kio.PreprocessResourcesForInternalAnnotationMigration(rl.Items)
	if err != nil {
		return fnFailed(streams, rl, rl.Items, fmt.Errorf("stdin: %w", err))
	}
	p := fnProcessor{fn: action.Fn{Mode: mode, Dir: streams.Dir()}}
	out, results, runErr := p.process(rl)
	if runErr != nil && out == nil {
		if err := kio.ReconcileInternalAnnotations(rl.Items, annotations); err != nil {
			return fnFailed(streams, nil, nil, err)
		}
		return fnFailed(streams, rl, rl.Items, runErr)
	}
	if err := kio.ReconcileInternalAnnotations(out, annotations); err != nil {
		return fnFailed(streams, rl, rl.Items, err)
	}
	var malformed []error
	for _, m := range rl.Malformed {
		results = append(results, &framework.Result{Severity: framework.Error, Message: "stdin: " + m.Error() + "; it is written back as it came"})
		malformed = append(malformed, m)
	}
	if err := report.WriteResourceList(streams.Out, withMalformed(out, rl.Malformed), rl.FunctionConfig, results); err != nil {
		return err
	}
	if len(malformed) > 0 {
		return &ExitCodeError{Code: ExitError, Err: fmt.Errorf("%d item(s) of the ResourceList are not objects:\n%w", len(malformed), errors.Join(malformed...))}
	}
	return runErr
}

// fnFailed answers a run that could not do its job: the items as they
// came (none when stdin was not a ResourceList) and err as an error result.
func fnFailed(streams IOStreams, rl *files.ResourceList, items []*yaml.RNode, err error) error {
	var fc *yaml.RNode
	var malformed []files.MalformedItem
	if rl != nil {
		fc, malformed = rl.FunctionConfig, rl.Malformed
	}
	results := framework.Results{{Severity: framework.Error, Message: err.Error()}}
	if werr := report.WriteResourceList(streams.Out, withMalformed(items, malformed), fc, results); werr != nil {
		return werr
	}
	return &ExitCodeError{Code: ExitError, Err: err}
}

// withMalformed puts the malformed items back among items, each at the
// place it had in the input.
func withMalformed(items []*yaml.RNode, malformed []files.MalformedItem) []*yaml.Node {
	out := make([]*yaml.Node, 0, len(items)+len(malformed))
	for _, n := range items {
		out = append(out, n.YNode())
	}
	for _, m := range malformed {
		at := min(m.Index, len(out))
		out = append(out[:at], append([]*yaml.Node{m.Node}, out[at:]...)...)
	}
	return out
}

// fnProcessor is `kubedra fn`'s work on a read ResourceList: action.Fn
// works on the items, report renders what it found as the list's results,
// and findings that fail the gate (check mode) end the function with
// ExitFindings, which fails kustomize build.
type fnProcessor struct{ fn action.Fn }

// process returns the items to write back and the results; an error with
// nil items means nothing could be done (the input's items go back).
func (p fnProcessor) process(rl *files.ResourceList) ([]*yaml.RNode, framework.Results, error) {
	res, err := p.fn.Run(rl.Items, rl.FunctionConfig)
	if err != nil {
		return nil, nil, err
	}
	results, err := fnResults(res)
	return res.Items, results, err
}

// fnResults are the results of a run; an error when findings fail the gate.
func fnResults(res *action.FnResult) (framework.Results, error) {
	if res.Check == nil {
		return report.KRMResults(res.Diagnostics, res.Origins), nil
	}
	results, failing := report.CheckKRMResults(report.Check{Report: res.Check.Report, FailOn: string(res.Check.FailOn), Failing: res.Check.Failing})
	if len(failing) > 0 {
		return results, &ExitCodeError{Code: ExitFindings, Err: fmt.Errorf("%d device-plugin request(s) fail the gate:\n%s", len(failing), failing.Error())}
	}
	return results, nil
}

// fnStream answers as fnRun does, the list split at its items
// (files.SplitResourceList) and checked or migrated a batch at a time
// (action.FnStream), so that its items are never one node tree: each
// batch is parsed, its annotations moved as kyaml's framework moves them,
// checked or migrated, and its items written to a spool; nothing reaches
// stdout before the last batch is done. done is false, with nothing written, when the
// list cannot be split or a batch shows that the answer must come from the
// whole list (an item that does not parse alone or is not an object, an
// annotation error, action.ErrWhole): fnRun then parses it whole.
func fnStream(streams IOStreams, data []byte, mode string, batch int) (done bool, err error) {
	list, ok := files.SplitResourceList(data)
	if !ok {
		return false, nil
	}
	// A batch's nodes go as the next comes: what stays is the text, the
	// spool's first 8 MiB and, in check mode, the findings. A lazier GC
	// under a soft limit 256 MiB above the text keeps 100,000 GPU pods at
	// ~340-360 MB peak RSS in check mode and ~220 MB in migrate mode
	// (BenchmarkFnPods); the whole list's parse, when it comes to that,
	// runs without them.
	defer debug.SetGCPercent(debug.SetGCPercent(200))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit(256 << 20)))
	run, err := action.Fn{Mode: mode, Dir: streams.Dir()}.Stream(list.FunctionConfig, list.Text(0, list.Len()))
	if err != nil {
		return false, nil
	}
	var spool emit.Spool
	defer spool.Discard()
	var format annotationFormat
	written := 0
	write := func(items []*yaml.RNode, annotations map[string]map[string]string) bool {
		if kio.ReconcileInternalAnnotations(items, format.with(annotations)) != nil {
			return false
		}
		for _, n := range items {
			if report.WriteResourceListItem(&spool, n.YNode()) != nil {
				return false
			}
		}
		written += len(items)
		return true
	}
	for from := 0; from < list.Len(); from += batch {
		b, err := list.Parse(from, min(from+batch, list.Len()))
		if err != nil || len(b.Malformed) > 0 {
			return false, nil
		}
		annotations, err := kio.PreprocessResourcesForInternalAnnotationMigration(b.Items)
		if err != nil {
			return false, nil
		}
		format.add(annotations)
		out, err := run.Batch(b.Items)
		if err != nil || !write(out, annotations) {
			return false, nil
		}
	}
	results, ok, runErr := fnStreamEnd(run, write)
	if !ok {
		return false, nil
	}
	if err := report.WriteSpooledResourceList(streams.Out, &spool, written, list.FunctionConfig, results); err != nil {
		return true, err
	}
	return true, runErr
}

// fnStreamEnd ends a run a batch at a time: the items it adds after the
// last batch are written, and its results made; the findings they come
// from go once they are made. ok is false when the run gives up.
func fnStreamEnd(run *action.FnStream, write func([]*yaml.RNode, map[string]map[string]string) bool) (framework.Results, bool, error) {
	res, err := run.Finish()
	if err != nil || !write(res.Items, nil) {
		return nil, false, nil
	}
	results, err := fnResults(res)
	return results, true, err
}

// fnBatch is how many items fnRun parses and checks or migrates at once.
const fnBatch = 256

// annotationFormat is what kio.ReconcileInternalAnnotations decides from
// all of a list's items at once (kio.PreprocessResourcesForInternalAnnotationMigration
// gives each item's): whether the items carry kyaml's internal annotations,
// the legacy ones or both, which every item that carries any must agree
// on, and which each item's are made to match. The first item that carries
// any decides; an item that disagrees fails the reconciliation of its
// batch, as it fails the whole list's.
type annotationFormat struct {
	known            bool
	internal, legacy bool
}

// add learns the format from a batch's annotations when it is not known.
func (f *annotationFormat) add(annotations map[string]map[string]string) {
	for _, a := range annotations {
		if f.known {
			return
		}
		f.internal = hasAny(a, kioutil.PathAnnotation, kioutil.IndexAnnotation, kioutil.IdAnnotation)
		f.legacy = hasAny(a, kioutil.LegacyPathAnnotation, kioutil.LegacyIndexAnnotation, kioutil.LegacyIdAnnotation)
		f.known = f.internal || f.legacy
	}
}

// with is a batch's annotations with one more entry, standing for the
// list's format (an item that carries none while it is not known), so that
// the batch is reconciled as the whole list would be.
func (f annotationFormat) with(annotations map[string]map[string]string) map[string]map[string]string {
	out := make(map[string]map[string]string, len(annotations)+1)
	maps.Copy(out, annotations)
	format := map[string]string{}
	if f.internal {
		format[kioutil.PathAnnotation] = ""
	}
	if f.legacy {
		format[kioutil.LegacyPathAnnotation] = ""
	}
	out["kubedra-list-format"] = format
	return out
}

func hasAny(m map[string]string, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
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
