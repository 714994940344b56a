package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/kubedra/kubedra/inventory"
	chartvalues "github.com/kubedra/kubedra/inventory/chart/values"
	"github.com/kubedra/kubedra/proof"
)

// maxDRASwitches bounds the renders spent on a chart's own DRA switches.
const maxDRASwitches = 6

// ownDRA tries the chart's own DRA values: a boolean value that is false
// and whose key names DRA (ollama's ollama.gpu.draEnabled, a dra.enabled,
// useDRA), set to true. A switch fits when the chart rendered with it
// gives every pod the devices it has through claims, with no device-plugin
// request of the render left (package proof, which does not share the
// planner's reasoning). It returns the values file that sets it and why;
// nil and what was tried otherwise ("" when the chart has no such value).
func (c *chartChooser) ownDRA(ctx context.Context) ([]byte, string) {
	coalesced, err := c.in.Chart.Coalesced()
	if err != nil {
		return nil, ""
	}
	switches := draSwitches(coalesced, nil)
	if len(switches) == 0 {
		return nil, ""
	}
	if len(switches) > maxDRASwitches {
		switches = switches[:maxDRASwitches]
	}
	before := proof.Pods(nodes(c.in.Docs))
	var tried []string
	for _, key := range switches {
		vals := map[string]any{}
		chartvalues.SetValue(vals, key, true)
		text, err := sigsyaml.Marshal(vals)
		if err != nil {
			continue
		}
		set := chartvalues.KeyString(key) + "=true"
		merged, err := c.in.Chart.MergeValues(text)
		if err != nil {
			tried = append(tried, set+": "+err.Error())
			continue
		}
		c.choice.ProbeRenders++
		docs, err := c.in.Chart.RenderValues(ctx, merged)
		if err != nil {
			tried = append(tried, set+": the chart does not render with it: "+err.Error())
			continue
		}
		rendered := nodes(docs)
		after := proof.Pods(rendered)
		if left := pluginRequests(after, c.in.Rendered); left != "" {
			tried = append(tried, set+": "+left+" still asks for devices through the device plugin")
			continue
		}
		if probs := proof.Compare(before, after, c.opts.Classes.With(rendered)); len(probs) > 0 {
			tried = append(tried, set+": a pod would not get the devices it has: "+probs[0].String())
			continue
		}
		c.choice.Sets = []string{set}
		return text, fmt.Sprintf("the chart's own DRA values: %s moves the requests to claims (rendered with it, every pod keeps its devices); check the chart's other DRA values (%s) against the cluster's DeviceClasses",
			set, strings.Join(draSiblings(coalesced, key), ", "))
	}
	return nil, "the chart's own DRA values do not fit (" + strings.Join(tried, "; ") + ")"
}

// draSwitches are the paths of the false booleans under vals whose keys
// name DRA, in key order.
func draSwitches(vals map[string]any, at []string) [][]string {
	var out [][]string
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		p := append(slices.Clone(at), k)
		switch v := vals[k].(type) {
		case map[string]any:
			out = append(out, draSwitches(v, p)...)
		case bool:
			if !v && slices.ContainsFunc(p, namesDRA) {
				out = append(out, p)
			}
		}
	}
	return out
}

// draSiblings are the other values beside a switch that name DRA
// (draDriverClass, draExistingClaimTemplate), as key=value.
func draSiblings(vals map[string]any, key []string) []string {
	parent, ok := chartvalues.ValueAt(vals, key[:len(key)-1]).(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(parent)) {
		if k != key[len(key)-1] && namesDRA(k) {
			out = append(out, fmt.Sprintf("%s=%v", chartvalues.KeyString(append(slices.Clone(key[:len(key)-1]), k)), parent[k]))
		}
	}
	if len(out) == 0 {
		return []string{"none beside it"}
	}
	return out
}

// namesDRA reports whether a values key has DRA as one of its words:
// draEnabled, useDRA, dra, dra_enabled; not hydraEnabled or drain.
func namesDRA(key string) bool {
	return slices.Contains(words(key), "dra")
}

// words splits a key into lower-case words at case changes and at
// anything not a letter: draEnabled -> dra enabled, useDRA -> use dra,
// DRAEnabled -> dra enabled.
func words(key string) []string {
	var out []string
	rs := []rune(key)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		upper := unicode.IsUpper(r)
		// fooBar: a word starts at B; DRAEnabled: at E (an upper letter
		// followed by a lower one after upper letters).
		if upper && unicode.IsLower(prev) || upper && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) {
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

// pluginRequests names the first pod container of after that still asks
// for a resource the render asked for (rendered), or "".
func pluginRequests(after []proof.Pod, rendered []inventory.Finding) string {
	asked := map[string]bool{}
	for _, f := range rendered {
		asked[f.Resource] = true
	}
	for _, p := range after {
		for _, c := range p.Containers {
			for r, n := range c.Extended {
				if n > 0 && asked[r] {
					return p.Key() + " container " + c.Name + " (" + r + ")"
				}
			}
		}
	}
	return ""
}
