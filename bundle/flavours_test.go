package bundle

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// Every phase and every rollback builds with kustomize for facts that hold
// each plugin as its own chart, manifest or operator ships it; the patch
// ANDs the mode label into each of the plugin's own terms and the rollback
// restores them exactly. The NVIDIA chart's DaemonSet is in the dump twice
// (a List and a repeated document): it is patched once.
func TestFlavoursBuild(t *testing.T) {
	tests := []struct {
		driver, facts string
		// patched DaemonSet (namespace.name) and its number of terms; ""
		// when it is kept off by labels instead.
		patched string
		terms   int
		labels  map[string]string
	}{
		{"nvidia", "flavours/nvidia-chart.yaml", "nvidia-device-plugin.nvdp-nvidia-device-plugin", 3, nil},
		{"nvidia", "flavours/gpu-operator.yaml", "", 0, map[string]string{"nvidia.com/gpu.deploy.device-plugin": "false"}},
		{"neuron", "flavours/neuron.yaml", "kube-system.neuron-device-plugin-daemonset", 2, nil},
		{"efa", "flavours/efa.yaml", "kube-system.aws-efa-k8s-device-plugin", 1, nil},
		{"amd", "flavours/amd.yaml", "kube-system.amdgpu-device-plugin-daemonset", 0, nil},
		{"intel-gpu", "flavours/intel-gpu.yaml", "kube-system.intel-gpu-plugin", 0, nil},
		{"intel-gaudi", "flavours/intel-gaudi.yaml", "habana-system.habanalabs-device-plugin-daemonset", 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.driver+"/"+tt.facts, func(t *testing.T) {
			facts := readFacts(t, tt.facts)
			res, err := Generate(Options{Driver: mustDriver(t, tt.driver), Facts: facts, PoolLabel: "e2e.kubedra.io/pool", Out: "cutover"})
			if err != nil {
				t.Fatal(err)
			}
			buildKustomizations(t, res.Tree)
			for k, v := range tt.labels {
				if res.Manifest.NodeLabels[k] != v {
					t.Errorf("node labels %v lack %s=%s", res.Manifest.NodeLabels, k, v)
				}
			}
			if tt.patched == "" {
				if _, ok := res.Tree["phase-1/kustomization.yaml"]; ok {
					t.Errorf("phase 1 patches a plugin its owner reconciles:\n%s", res.Tree["phase-1/kustomization.yaml"])
				}
				return
			}
			var k struct{ Resources []string }
			if err := yaml.Unmarshal(res.Tree["phase-1/kustomization.yaml"], &k); err != nil {
				t.Fatal(err)
			}
			if len(k.Resources) != 1 || k.Resources[0] != tt.patched+".yaml" {
				t.Fatalf("phase 1 resources: %v, want [%s.yaml] once", k.Resources, tt.patched)
			}
			patch := affinityOf(t, res.Tree["phase-1/"+tt.patched+".yaml"])
			back := affinityOf(t, res.Tree["rollback/phase-1/"+tt.patched+".yaml"])
			want := tt.terms
			if want == 0 {
				want = 1 // no affinity: one term with the exclusion alone
			}
			if patch == nil || len(patch.NodeSelectorTerms) != want {
				t.Fatalf("patch terms: %+v, want %d", patch, want)
			}
			for i, term := range patch.NodeSelectorTerms {
				last := term.MatchExpressions[len(term.MatchExpressions)-1]
				if last.Key != ModeLabel || last.Operator != corev1.NodeSelectorOpNotIn {
					t.Errorf("term %d lacks the exclusion: %+v", i, term)
				}
				if tt.terms > 0 && len(term.MatchExpressions) != len(back.NodeSelectorTerms[i].MatchExpressions)+1 {
					t.Errorf("term %d: patch %+v is not the original %+v plus the exclusion", i, term, back.NodeSelectorTerms[i])
				}
			}
			if tt.terms == 0 && back != nil {
				t.Errorf("rollback of a plugin without affinity sets one: %+v", back)
			}
			if tt.terms > 0 && (back == nil || len(back.NodeSelectorTerms) != tt.terms) {
				t.Errorf("rollback terms: %+v, want the plugin's %d", back, tt.terms)
			}
		})
	}
}

func affinityOf(t *testing.T, b []byte) *corev1.NodeSelector {
	t.Helper()
	var ds struct {
		Spec struct {
			Template struct {
				Spec corev1.PodSpec
			}
		}
	}
	if err := yaml.Unmarshal(b, &ds); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	a := ds.Spec.Template.Spec.Affinity
	if a == nil || a.NodeAffinity == nil {
		return nil
	}
	if !strings.Contains(string(b), "requiredDuringScheduling") {
		return nil
	}
	return a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}
