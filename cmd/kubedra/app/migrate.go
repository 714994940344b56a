package app

import (
	"context"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/MakeNowJust/heredoc"
	"github.com/charmbracelet/colorprofile"
	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/action"
	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/rewrite/emit"
)

// MigrateOptions are migrate's flags and dependencies.
type MigrateOptions struct {
	flags.Inputs
	flags.Planning
	Write, Plan bool
	// Output is --plan's format (-o yaml|json).
	Output report.Format
	Out    string
	// OutMerge and WriteReadOnly are --out-merge and --write-read-only.
	OutMerge, WriteReadOnly bool
}

// NewCmdMigrate builds `kubedra migrate`.
func NewCmdMigrate(streams IOStreams, runF func(*MigrateOptions) error) *cobra.Command {
	opts := &MigrateOptions{Inputs: flags.NewInputs(streams)}
	cmd := &cobra.Command{
		Use:   "migrate [PATH|-]...",
		Short: "Rewrite workloads from device-plugin requests to DRA resource claims",
		Long: heredoc.Doc(`
			Rewrite every device-plugin request a rule maps (nvidia.com/gpu: 2, ...) into
			Dynamic Resource Allocation: the resource leaves limits and requests, the pod
			template gains resourceClaims that reference a new ResourceClaimTemplate, and
			each container gains resources.claims. Device-label nodeSelector and affinity
			terms become CEL selectors and are removed (--keep-node-selectors keeps them).

			Nothing else changes: comments, key order, quoting and indentation are kept,
			files and documents without device requests stay byte-identical, and running
			migrate twice changes nothing the second time. Lossy and unmapped requests are
			left as they are and reported on stderr with file:line, why, and what to do.
			Helm templates ({{ }}) are never rewritten: a chart gets a strategy (no change
			with extended resources, a values-kubedra.yaml beside Chart.yaml, or kubedra
			as Helm's post-renderer), printed with the command to run. In kustomize trees,
			patches get their claims in a file their kustomization lists, and
			kubedra-namereference.yaml makes namePrefix/nameSuffix rename the references.
			Quotas gain the DRA key that counts the claims, Kueue configurations the
			deviceClassMappings, and LimitRanges lose device defaults.

			Output: a unified diff on stdout (default), the files rewritten in place
			(-w, atomically, modes kept), a migrated copy of the tree (--out DIR), or, for
			- (stdin), the migrated stream on stdout. A file that fails to parse or rewrite
			is left untouched and reported; the others proceed, and the exit code is 1.

			Strategies: claims (default) rewrites workloads; extended-resource leaves them
			unchanged and writes DeviceClasses with extendedResourceName (KEP-5004; needs
			DRAExtendedResource, on by default from 1.36, or --force); auto picks per
			workload and says why.
		`),
		Example: heredoc.Doc(`
			# review the change as a diff
			$ kubedra migrate ./manifests

			# rewrite in place, or into a copy of the tree
			$ kubedra migrate -w ./manifests
			$ kubedra migrate --out ./migrated ./manifests

			# a rendered stream
			$ kustomize build overlays/prod | kubedra migrate - | kubectl apply --dry-run=server -f -

			# choose per workload for a 1.37 cluster
			$ kubedra migrate --strategy auto --target-version 1.37 ./manifests
		`),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Setup(cmd, args, "give a path, a folder or - for stdin"); err != nil {
				return err
			}
			if err := opts.validate(); err != nil {
				return err
			}
			return runOr(cmd, opts, runF, migrateRun)
		},
	}
	opts.Inputs.Bind(cmd, "migrate", "diff", "no summary on stderr")
	f := cmd.Flags()
	opts.Planning.Bind(f)
	f.BoolVarP(&opts.Write, "write", "w", false, "rewrite the files in place (atomically)")
	f.StringVar(&opts.Out, "out", "", "write a migrated copy of the input tree into this folder (new or empty; not inside an input)")
	f.BoolVar(&opts.OutMerge, "out-merge", false, "write into a --out folder that is not empty")
	f.BoolVar(&opts.WriteReadOnly, "write-read-only", false, "also rewrite files without write permission with -w (their mode is kept); the diff shows what that does")
	f.Var(&opts.Target, "target", "same as --target-version")
	_ = f.MarkHidden("target")
	f.BoolVar(&opts.Plan, "plan", false, "print the migration plan (every file's edits, every kustomize unit with its proof) on stdout and change nothing")
	report.AddFormatFlag(cmd, &opts.Output, report.PlanFormats, "format of --plan")
	f.BoolVar(&opts.Example, "example", false, "migrate the built-in example manifest")
	return cmd
}

func (o *MigrateOptions) validate() error {
	if o.Example {
		o.Paths = []string{"-"}
	}
	if o.Write && o.Out != "" {
		return flags.Errorf("-w and --out do not go together")
	}
	if o.Output != report.PlanFormats.Default() && !o.Plan {
		return flags.Errorf("-o %s: the output format is --plan's; without --plan, migrate prints a diff (or writes with -w, --out)", o.Output)
	}
	if o.OutMerge && o.Out == "" {
		return flags.Errorf("--out-merge needs --out")
	}
	if o.WriteReadOnly && o.Out != "" {
		return flags.Errorf("--write-read-only is for -w (and the diff of what -w does), not --out")
	}
	if slices.Contains(o.Paths, "-") {
		if len(o.Paths) > 1 {
			return flags.Errorf("- (stdin) cannot be mixed with other paths: its migrated stream goes to stdout")
		}
		if o.Write || o.Out != "" {
			return flags.Errorf("stdin is migrated to stdout: -w and --out need paths")
		}
		if o.ClaimsFile != "" {
			return flags.Errorf("--claims-file needs paths: stdin is migrated to one stream")
		}
	}
	if o.ClaimsFile != "" && (strings.ContainsRune(o.ClaimsFile, '/') || strings.ContainsRune(o.ClaimsFile, filepath.Separator) || o.ClaimsFile == "." || o.ClaimsFile == "..") {
		return flags.Errorf("--claims-file %q: give a file name, not a path (it is created beside each migrated file)", o.ClaimsFile)
	}
	return o.CheckStrategy(o.Target)
}

// migrateRun migrates: flags -> action.Migrate -> the plan, diff, stream
// or files -> the summary on stderr.
func migrateRun(ctx context.Context, opts *MigrateOptions) error {
	if !opts.Example {
		if done, err := answerResourceList(&opts.IO, opts.Paths, "migrate"); done {
			return err
		}
	}
	// Migrate parses every document and keeps few: a lazier GC (-28% CPU,
	// reference/perf.md) under a soft limit, for a 250 MB peak RSS budget.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit(128 << 20)))
	in, set, prof, ignore, err := opts.Resolve()
	if err != nil {
		return err
	}
	mopts := action.MigrateOptions{Rules: set, Out: opts.IO.Out, Color: prof != colorprofile.NoTTY, OutDir: opts.Out, PlanOnly: opts.Plan,
		MergeOut: opts.OutMerge, WriteReadOnly: opts.WriteReadOnly,
		Plan: opts.Options(opts.Target, ignore)}
	switch {
	case in.Paths[0] == "-":
		mopts.Output = emit.Stream
	case opts.Write:
		mopts.Output = emit.Write
	case opts.Out != "":
		mopts.Output = emit.Tree
	}
	res, err := action.Migrate(ctx, in, mopts)
	if err != nil {
		return &flags.Error{Err: err}
	}
	if opts.Plan {
		if err := report.Plan(opts.IO.Out, opts.Output, res.Plan); err != nil {
			return err
		}
	}
	if !opts.Quiet {
		report.MigrateSummary(opts.IO.ErrOut, res)
	}
	return exit(res.Failed > 0, false)
}
