// Package values reads and writes paths in Helm values maps (the keys
// helm's --set names, e.g. resources.limits.nvidia\.com/gpu). It is apart
// from inventory/chart so that the chart strategy in rewrite/plan can use
// it without linking the Helm SDK.
package values

import "strings"

// A values path is a list of keys into a chart's values (resources,
// limits, nvidia.com/gpu); KeyString writes it as helm's --set does.

// KeyString is a values path as helm's --set writes it (dots in keys
// escaped): resources.limits.nvidia\.com/gpu.
func KeyString(p []string) string {
	parts := make([]string, len(p))
	for i, k := range p {
		parts[i] = strings.ReplaceAll(k, ".", `\.`)
	}
	return strings.Join(parts, ".")
}

// SplitKey reads a values path written by KeyString.
func SplitKey(s string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '.':
			cur.WriteByte('.')
			i++
		case s[i] == '.':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(out, cur.String())
}

// ValueAt is the value at path p in vals, or nil.
func ValueAt(vals map[string]any, p []string) any {
	var cur any = vals
	for _, k := range p {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// HasValue reports whether vals holds the key at path p (a null value
// counts).
func HasValue(vals map[string]any, p []string) bool {
	m, ok := ValueAt(vals, p[:len(p)-1]).(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[p[len(p)-1]]
	return ok
}

// SetValue sets the leaf at path p in vals, making maps on the way.
func SetValue(vals map[string]any, p []string, v any) {
	m := vals
	for _, k := range p[:len(p)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[p[len(p)-1]] = v
}

// FileName is the values file of the values-file strategy, which migrate
// writes beside Chart.yaml.
const FileName = "values-kubedra.yaml"

// ReleaseName is the release a chart renders as, as `helm template` does
// without a name.
const ReleaseName = "release-name"

// ShellQuote quotes s for a POSIX shell when it needs it (the commands
// kubedra prints: helm template with the user's flags).
func ShellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
