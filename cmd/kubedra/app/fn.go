package app

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	"github.com/MakeNowJust/heredoc"
	"github.com/spf13/cobra"
	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/detect"
	"github.com/kubedra/kubedra/rewrite/plan"
	"github.com/kubedra/kubedra/rules"
)

// FnConfig is kubedra fn's functionConfig: its fields at the top level, under
// spec:, or as a ConfigMap's data:.
type FnConfig struct {
	// Mode is "check" (items pass through unchanged and every finding
	// becomes a result) or "migrate" (items are migrated like `kubedra
	// migrate -` and the requests left on device plugins become results).
	Mode          string   `yaml:"mode,omitempty"`
	FailOn        string   `yaml:"failOn,omitempty"`
	TargetVersion string   `yaml:"targetVersion,omitempty"`
	Rules         []string `yaml:"rules,omitempty"`
	// Migrate mode only, as migrate's flags of the same names.
	Strategy          string `yaml:"strategy,omitempty"`
	AllowLossy        bool   `yaml:"allowLossy,omitempty"`
	Share             bool   `yaml:"share,omitempty"`
	KeepNodeSelectors bool   `yaml:"keepNodeSelectors,omitempty"`
}

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
	err := framework.Execute(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		return fnProcess(rl, mode)
	}), rw)
	var results framework.Results
	if errors.As(err, &results) {
		return &ExitCodeError{Code: ExitFindings, Err: fmt.Errorf("%d device-plugin request(s) fail the gate:\n%s", len(results), results.Error())}
	}
	return err
}

// resourceListHeader matches the top-level apiVersion of a KRM ResourceList.
var resourceListHeader = regexp.MustCompile(`(?m)^apiVersion: *["']?config\.kubernetes\.io/v1["']? *$`)

// resourceListKind matches the top-level kind of a KRM ResourceList.
var resourceListKind = regexp.MustCompile(`(?m)^kind: *["']?ResourceList["']? *$`)

// answerResourceList handles kustomize or kpt running `kubedra check -` or
// `kubedra migrate -` as an exec function: when stdin is the only input and
// holds a KRM ResourceList, it answers as `kubedra fn` in mode and returns
// done. Otherwise it replaces streams.In with a replay of what it read.
func answerResourceList(streams *IOStreams, paths []string, mode string) (done bool, err error) {
	if len(paths) != 1 || paths[0] != "-" || streams.In == nil {
		return false, nil
	}
	data, err := io.ReadAll(streams.In)
	if err != nil {
		return true, fmt.Errorf("reading stdin: %w", err)
	}
	streams.In = bytes.NewReader(data)
	if !resourceListHeader.Match(data) || !resourceListKind.Match(data) {
		return false, nil
	}
	return true, fnRun(*streams, streams.In, mode)
}

// fnProcess checks (or, in mode migrate, migrates) rl's items and appends
// results. It returns the error results (as framework.Results) when any
// finding fails the gate.
func fnProcess(rl *framework.ResourceList, mode string) error {
	cfg, err := fnConfig(rl.FunctionConfig, mode)
	if err != nil {
		return err
	}
	set, err := checkLoadRules(cfg.Rules)
	if err != nil {
		return err
	}
	target := rules.DefaultTarget
	if cfg.TargetVersion != "" {
		if target, err = rules.ParseVersion(cfg.TargetVersion); err != nil {
			return fmt.Errorf("functionConfig: %w", err)
		}
	}
	if cfg.Mode == "migrate" {
		if err := fnMigrate(rl, cfg, target); err != nil {
			return err
		}
	}
	docs := make([]*inventory.Document, len(rl.Items))
	for i, item := range rl.Items {
		path, idx := fnOrigin(item, i)
		docs[i] = &inventory.Document{Node: item, Origin: inventory.Origin{Path: path, Index: idx, Line: item.YNode().Line, ListIndex: -1}}
	}
	findings := detect.Documents(docs, detect.Options{TemplatePaths: set.TemplatePaths()})
	items := plan.Items(findings, set, rules.Options{Target: target})
	var failing framework.Results
	for _, it := range items {
		r := &framework.Result{
			Message:     report.Message(it),
			Severity:    framework.Info,
			ResourceRef: &yaml.ResourceIdentifier{TypeMeta: yaml.TypeMeta{APIVersion: it.APIVersion, Kind: it.Kind}, NameMeta: yaml.NameMeta{Name: it.Name, Namespace: it.Namespace}},
			Field:       &framework.Field{Path: fmt.Sprintf("%s.%s[name=%s].resources.limits.%s", it.PodTemplatePath, fnContainerList(it.ContainerType), it.Container, it.Resource)},
			Tags:        map[string]string{"rule": report.RuleID(it)},
		}
		if it.File != "" {
			r.File = &framework.File{Path: it.File, Index: it.Index}
		}
		switch {
		case cfg.Mode == "migrate" && it.Status != rules.DRABacked && it.Ignored == "":
			// What migrate left on the device plugin: reported, never a
			// failed build (check mode is the gate).
			r.Severity = framework.Warning
		case Fails(it, cfg.FailOn):
			r.Severity = framework.Error
			failing = append(failing, r)
		case it.Ignored != "":
			r.Message += " (ignored: " + it.Ignored + ")"
		case it.Status != rules.DRABacked:
			r.Severity = framework.Warning
		}
		if it.IgnoreInvalid {
			r.Message += "; " + report.IgnoreReasonMessage
		}
		rl.Results = append(rl.Results, r)
	}
	if len(failing) > 0 {
		return failing
	}
	return nil
}

// fnMigrate replaces rl's items with their migration: the same pipeline
// as `kubedra migrate -` on the items as one YAML stream, so what the
// function emits is what the CLI would print. Item annotations (path,
// index) pass through; new ResourceClaimTemplates follow their workload.
func fnMigrate(rl *framework.ResourceList, cfg FnConfig, target rules.Version) error {
	var in, out, errs bytes.Buffer
	if err := (&kio.ByteWriter{Writer: &in, KeepReaderAnnotations: true}).Write(rl.Items); err != nil {
		return fmt.Errorf("encoding items: %w", err)
	}
	opts := &MigrateOptions{
		IO:         IOStreams{In: &in, Out: &out, ErrOut: &errs},
		Paths:      []string{"-"},
		Strategy:   cmp.Or(cfg.Strategy, "claims"),
		Target:     target,
		AllowLossy: cfg.AllowLossy, Share: cfg.Share, KeepNodeSelectors: cfg.KeepNodeSelectors,
		Rules: cfg.Rules, Color: "never",
	}
	if err := opts.validate(); err != nil {
		return fmt.Errorf("functionConfig: %w", err)
	}
	if err := migrateRun(context.Background(), opts); err != nil {
		return fmt.Errorf("migrating items: %w\n%s", err, errs.String())
	}
	items, err := (&kio.ByteReader{Reader: &out, OmitReaderAnnotations: true}).Read()
	if err != nil {
		return fmt.Errorf("reading migrated items: %w", err)
	}
	rl.Items = items
	return nil
}

// fnContainerList names the pod-spec list a container is in.
func fnContainerList(t inventory.ContainerType) string {
	switch t {
	case inventory.InitContainer, inventory.SidecarContainer:
		return "initContainers"
	case inventory.EphemeralContainer:
		return "ephemeralContainers"
	}
	return "containers"
}

// fnOrigin reads the file path and index that kustomize, kpt or kio put in
// an item's annotations ("" and the item's position when there are none).
func fnOrigin(item *yaml.RNode, pos int) (string, int) {
	a := item.GetAnnotations()
	path := a[kioutil.PathAnnotation]
	if path == "" {
		path = a[kioutil.LegacyPathAnnotation]
	}
	idx := a[kioutil.IndexAnnotation]
	if idx == "" {
		idx = a[kioutil.LegacyIndexAnnotation]
	}
	if n, err := strconv.Atoi(idx); err == nil {
		return path, n
	}
	return path, pos
}

// fnConfig decodes the functionConfig.
func fnConfig(fc *yaml.RNode, mode string) (FnConfig, error) {
	cfg := FnConfig{Mode: mode, FailOn: FailOnAny}
	if fc == nil || fc.IsNilOrEmpty() {
		return cfg, nil
	}
	src := fc
	for _, f := range []string{"spec", "data"} {
		if n := fc.Field(f); n != nil && n.Value != nil {
			src = n.Value
			break
		}
	}
	s, err := src.String()
	if err != nil {
		return cfg, err
	}
	if err := yaml.Unmarshal([]byte(s), &cfg); err != nil {
		return cfg, fmt.Errorf("functionConfig: %w", err)
	}
	switch cfg.Mode {
	case "":
		cfg.Mode = mode
	case "check":
	case "migrate":
	default:
		return cfg, fmt.Errorf("functionConfig: mode %q: use check or migrate", cfg.Mode)
	}
	if cfg.FailOn == "" {
		cfg.FailOn = FailOnAny
	}
	if cfg.FailOn != FailOnAny && cfg.FailOn != FailOnLossy && cfg.FailOn != FailOnUnmapped {
		return cfg, fmt.Errorf("functionConfig: failOn %q: use any, lossy or unmapped", cfg.FailOn)
	}
	return cfg, nil
}
