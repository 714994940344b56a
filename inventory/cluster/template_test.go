package cluster_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubedra/kubedra/inventory/cluster"
	"github.com/kubedra/kubedra/inventory/detect"
)

// Each distinct pod template becomes one Pod document that detection
// reads as it reads a manifest; equal templates share it.
func TestWorkloadDocuments(t *testing.T) {
	pod := func(name, res string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml"}}
		p.Spec.NodeSelector = map[string]string{"nvidia.com/gpu.product": "A100"}
		p.Spec.Containers = []corev1.Container{{Name: "cuda", Image: "cuda:12", Resources: corev1.ResourceRequirements{
			Limits: corev1.ResourceList{corev1.ResourceName(res): resource.MustParse("1")}}}}
		return p
	}
	c := cluster.NewCollector()
	c.AddPod(pod("a", "nvidia.com/gpu"))
	c.AddPod(pod("b", "nvidia.com/gpu"))
	c.AddPod(pod("c", "example.com/gpu"))
	ws := c.Facts().Workloads
	if len(ws) != 3 {
		t.Fatalf("workloads: %+v", ws)
	}
	if ws[0].Document == nil || ws[0].Document != ws[1].Document || ws[2].Document == ws[0].Document {
		t.Fatalf("documents: a %p, b %p, c %p: equal templates share one, others do not", ws[0].Document, ws[1].Document, ws[2].Document)
	}
	for _, w := range ws {
		if w.DocumentError != "" {
			t.Errorf("%s: %s", w.Name, w.DocumentError)
		}
	}
	fs := detect.Document(ws[2].Document, detect.Options{})
	if len(fs) != 1 {
		t.Fatalf("findings: %+v", fs)
	}
	f := fs[0]
	if f.Kind != "Pod" || f.PodTemplatePath != "spec" || f.Container != "cuda" || f.Resource != "example.com/gpu" || f.Quantity() != "1" ||
		len(f.Hints) != 1 || f.Hints[0].Key != "nvidia.com/gpu.product" {
		t.Errorf("finding: %+v", f)
	}
}
