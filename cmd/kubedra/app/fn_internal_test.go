package app

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/internal/krmtest"
)

// fnLists are ResourceLists for kubedra fn: the rewrite goldens' and the
// shared corpus's documents, each file's as one list and all of them as
// one, with and without kio's index annotations, under functionConfigs of
// both modes.
func fnLists(t *testing.T) map[string][]byte {
	t.Helper()
	configs := map[string]string{
		"check":              "apiVersion: kubedra.dev/v1alpha1\nkind: Check\nmetadata: {name: c}\nspec: {failOn: unmapped}\n",
		"migrate":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  mode: migrate\n",
		"migrate extended":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  mode: migrate\n  strategy: extended-resource\n",
		"migrate lossy 1.34": "apiVersion: kubedra.dev/v1alpha1\nkind: Fn\nspec: {mode: migrate, allowLossy: true, targetVersion: \"1.34\"}\n",
	}
	out := map[string][]byte{}
	var all []*yaml.RNode
	for _, annotated := range []bool{false, true} {
		for p, nodes := range krmtest.Documents(t, "../../..", annotated) {
			if annotated {
				all = append(all, nodes...)
			}
			for name, fc := range configs {
				if list := krmtest.List(nodes, yaml.MustParse(fc)); list != nil {
					out[fmt.Sprintf("%s (%s, annotated %v)", p, name, annotated)] = list
				}
			}
		}
	}
	for name, fc := range configs {
		out["all ("+name+")"] = krmtest.List(all, yaml.MustParse(fc))
	}
	// Documents migrate leaves unchanged (duplicate keys) among others it
	// warns about: the whole list says the first after every warning.
	pod := func(name, container string) string {
		return "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: " + name + "\n  spec:\n    containers:\n    - name: c\n" + container
	}
	gpu, fpga := "      resources:\n        limits:\n          nvidia.com/gpu: 1\n", "      resources:\n        limits:\n          example.com/fpga: 1\n"
	out["unchanged among warnings (migrate)"] = []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n" +
		pod("dup-a", "      image: x\n      image: y\n"+gpu) + pod("fpga-b", fpga) + pod("dup-c", gpu+"      resources: {}\n") + pod("fpga-d", fpga) +
		"functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data: {mode: migrate}\n")
	if len(out) < 100 {
		t.Fatalf("only %d lists", len(out))
	}
	return out
}

// fnAnswer runs fn on list, a batch of items at a time when batch > 0,
// else whole; done is false when the batches gave up (nothing written).
func fnAnswer(list []byte, batch int) (out string, code int, done bool) {
	streams, stdout, _ := TestStreams("", nil, "")
	var err error
	done = true
	if batch > 0 {
		done, err = fnStream(streams, list, "check", batch)
	} else {
		err = fnWhole(streams, list, "check")
	}
	var ec *ExitCodeError
	if errors.As(err, &ec) {
		code = ec.Code
	} else if err != nil {
		code = -1
	}
	return stdout.String(), code, done
}

// TestFnStreamAsWhole: kubedra fn's answer a batch of items at a time is
// byte for byte (and exit code for exit code) its answer on the whole list
// parsed at once, in check and migrate mode, whatever the batch size; a
// list the batches cannot answer as the whole is (items tied to others in
// migrate mode, aliases, malformed items) writes nothing and is answered
// whole.
func TestFnStreamAsWhole(t *testing.T) {
	streamed := map[bool]int{}
	for name, list := range fnLists(t) {
		want, wantCode, _ := fnAnswer(list, 0)
		migrate := strings.Contains(name, "(migrate")
		for _, batch := range []int{1, 3, fnBatch} {
			got, code, done := fnAnswer(list, batch)
			if !done {
				if got != "" {
					t.Fatalf("%s, batches of %d: gave up after writing %d bytes", name, batch, len(got))
				}
				continue
			}
			streamed[migrate]++
			if got != want || code != wantCode {
				t.Fatalf("%s, batches of %d: exit %d, want %d; the answer differs from the whole list's:\n--- whole\n%s\n--- batches\n%s", name, batch, code, wantCode, want, got)
			}
		}
	}
	t.Logf("answered a batch at a time: %d in check mode, %d in migrate mode", streamed[false], streamed[true])
	if streamed[false] < 150 || streamed[true] < 100 {
		t.Fatalf("only %d check and %d migrate answers came a batch at a time", streamed[false], streamed[true])
	}
}

// TestFnStreamAnnotations: kyaml's path and index annotations (internal,
// legacy, both, none; on every item or some; disagreeing) come back from
// the batches as from the whole list, which reconciles them across all its
// items; where the whole list is refused, the batches give up.
func TestFnStreamAnnotations(t *testing.T) {
	pod := func(i int, annotations string) string {
		return fmt.Sprintf("- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p%d\n%s  spec:\n    containers:\n    - name: c\n      resources:\n        limits: {nvidia.com/gpu: 1}\n", i, annotations)
	}
	formats := map[string]string{
		"none":     "",
		"legacy":   "    annotations:\n      config.kubernetes.io/path: a.yaml\n      config.kubernetes.io/index: '0'\n",
		"internal": "    annotations:\n      internal.config.kubernetes.io/path: a.yaml\n      internal.config.kubernetes.io/index: '0'\n",
		"both":     "    annotations:\n      config.kubernetes.io/path: a.yaml\n      internal.config.kubernetes.io/path: a.yaml\n",
		"mismatch": "    annotations:\n      config.kubernetes.io/path: a.yaml\n      internal.config.kubernetes.io/path: b.yaml\n",
		"other":    "    annotations:\n      team: ml\n",
		// What kustomize v5.8 hands an exec function.
		"kustomize": "    annotations:\n      internal.config.kubernetes.io/previousKinds: Pod\n      kustomize.config.k8s.io/id: |\n        kind: Pod\n        name: p\n        version: v1\n" +
			"      config.kubernetes.io/index: '0'\n      internal.config.kubernetes.io/index: '0'\n      internal.config.kubernetes.io/annotations-migration-resource-id: '0'\n" +
			"      internal.config.kubernetes.io/id: '1'\n      config.k8s.io/id: '1'\n",
	}
	for _, items := range [][]string{
		{"none", "none", "none"}, {"legacy", "legacy", "legacy"}, {"internal", "internal"}, {"both", "both", "both"},
		{"none", "none", "none", "legacy"}, {"other", "none", "internal", "none"}, {"none", "none", "both", "none", "none"},
		{"legacy", "none", "internal"}, {"internal", "other", "other", "legacy"}, {"none", "mismatch"}, {"both", "internal"},
		{"kustomize", "kustomize", "kustomize"}, {"none", "kustomize", "both"},
	} {
		for _, mode := range []string{"check", "migrate"} {
			var b strings.Builder
			b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
			for i, f := range items {
				b.WriteString(pod(i, formats[f]))
			}
			b.WriteString("functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data: {mode: " + mode + "}\n")
			list := []byte(b.String())
			want, wantCode, _ := fnAnswer(list, 0)
			for _, batch := range []int{1, 2} {
				got, code, done := fnAnswer(list, batch)
				if !done {
					if got != "" || wantCode != 1 {
						t.Fatalf("%v %s, batches of %d: gave up (%d bytes written) on a list answered with exit %d", items, mode, batch, len(got), wantCode)
					}
					continue
				}
				if got != want || code != wantCode {
					t.Fatalf("%v %s, batches of %d: exit %d, want %d:\n--- whole\n%s\n--- batches\n%s", items, mode, batch, code, wantCode, want, got)
				}
			}
		}
	}
}
