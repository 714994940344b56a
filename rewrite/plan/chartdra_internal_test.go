package plan

import (
	"slices"
	"testing"
)

// TestNamesDRA: the keys a chart's DRA switch goes by, and the keys that
// only contain the letters.
func TestNamesDRA(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{
		"draEnabled": true, "useDRA": true, "DRAEnabled": true, "dra": true, "dra_enabled": true, "enable-dra": true,
		"hydraEnabled": false, "drain": false, "sandra": false, "enabled": false, "draft": false,
	} {
		if got := namesDRA(key); got != want {
			t.Errorf("namesDRA(%q) = %v (words %v), want %v", key, got, words(key), want)
		}
	}
}

// TestDRASwitches: false booleans under a key naming DRA, at any depth,
// in key order; true ones and other kinds are not switches.
func TestDRASwitches(t *testing.T) {
	t.Parallel()
	vals := map[string]any{
		"ollama": map[string]any{"gpu": map[string]any{"enabled": false, "draEnabled": false, "draDriverClass": "gpu.nvidia.com"}},
		"dra":    map[string]any{"enabled": false, "on": true},
		"hydra":  map[string]any{"enabled": false},
	}
	got := draSwitches(vals, nil)
	want := [][]string{{"dra", "enabled"}, {"ollama", "gpu", "draEnabled"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("switches %v, want %v", got, want)
	}
}
