package chart

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"github.com/kubedra/kubedra/internal/confine"
)

// validateSchema checks values against the chart's values.schema.json and
// its subcharts' as Helm's chartutil.ValidateAgainstSchema does, with one
// difference: a $ref to anything but the schema itself (http, https,
// file, urn) is not fetched. Helm's validator would fetch it over the
// network or read any local file; scan, check, migrate and fn touch
// neither (docs/security.md). Such a $ref accepts any value, as Helm
// treats a URN it cannot resolve.
func validateSchema(ch *chart.Chart, values map[string]any) error {
	var sb strings.Builder
	if ch.Schema != nil {
		if err := validateOne(values, ch.Schema); err != nil {
			fmt.Fprintf(&sb, "%s:\n%s", ch.Name(), err.Error())
		}
	}
	for _, sub := range ch.Dependencies() {
		raw, ok := values[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		vals, ok := raw.(map[string]any)
		if !ok {
			fmt.Fprintf(&sb, "%s:\ninvalid type for values: expected object (map), got %T\n", sub.Name(), raw)
			continue
		}
		if err := validateSchema(sub, vals); err != nil {
			sb.WriteString(err.Error())
		}
	}
	if sb.Len() > 0 {
		return errors.New(sb.String())
	}
	return nil
}

// noFetch resolves every external $ref to the schema that accepts
// everything, without reading it.
type noFetch struct{}

func (noFetch) Load(string) (any, error) { return true, nil }

func validateOne(values map[string]any, schemaJSON []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unable to validate schema: %v", r)
		}
	}()
	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{"file": noFetch{}, "http": noFetch{}, "https": noFetch{}, "urn": noFetch{}})
	const self = "file:///values.schema.json"
	if err := c.AddResource(self, schema); err != nil {
		return err
	}
	v, err := c.Compile(self)
	if err != nil {
		return err
	}
	if err := v.Validate(values); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+self+"#'\n") + "\n")
	}
	return nil
}

// symlinksWithin refuses a chart folder (at open, named path) holding a
// symlink that leads outside it: Helm's loader follows links, so a link to
// /etc/passwd would reach .Files.Get and the render.
func symlinksWithin(open, path string) error {
	roots := confine.New("", open)
	return filepath.WalkDir(open, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return err
		}
		if _, err := roots.Within(p); err != nil {
			rel, _ := filepath.Rel(open, p)
			return fmt.Errorf("chart file %s: %w", filepath.Join(path, rel), err)
		}
		return nil
	})
}

// valuesOf are the values of render values top (.Values).
func valuesOf(top chartutil.Values) map[string]any {
	v, _ := top["Values"].(chartutil.Values)
	return v.AsMap()
}

// RenderTimeout bounds one render of a chart, and MaxRender its output:
// Helm's engine has neither, so a template that loops or builds a huge
// string would run without end. A variable so that tests can shorten it.
var RenderTimeout = 2 * time.Minute

// MaxRender is the most a chart's render may produce.
const MaxRender = 256 << 20

// renderBounded renders ch with Helm's engine, ending with an error when
// ctx is done (a signal) or RenderTimeout passes first, or when the output
// is above MaxRender. An abandoned render runs on until the process ends.
func renderBounded(ctx context.Context, ch *chart.Chart, top chartutil.Values) (map[string]string, error) {
	type result struct {
		out map[string]string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- result{err: fmt.Errorf("rendering failed: %v", r)}
			}
		}()
		var e engine.Engine
		out, err := e.Render(ch, top)
		done <- result{out, err}
	}()
	timer := time.NewTimer(RenderTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, r.err
		}
		n := 0
		for _, t := range r.out {
			n += len(t)
		}
		if n > MaxRender {
			return nil, fmt.Errorf("the chart renders %d bytes, above the limit of %d: refused", n, MaxRender)
		}
		return r.out, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-timer.C:
		return nil, fmt.Errorf("the chart did not render within %s (a template that loops?): refused", RenderTimeout)
	}
}
