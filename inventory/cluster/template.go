package cluster

import (
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// podDocument returns a workload's pod template as inventory/detect reads
// manifests: a v1 Pod document whose spec is the template. The cluster
// holds typed objects and detection reads YAML nodes, so the template is
// converted here, by the source, once; audit then runs the same detection
// and rules on it that scan runs on a file. The document names no object
// (workloads with one template share it) and its Origin has no path (it
// was read from a cluster).
func podDocument(spec *corev1.PodSpec) (*inventory.Document, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(spec)
	if err != nil {
		return nil, err
	}
	node, err := yaml.FromMap(map[string]any{"apiVersion": "v1", "kind": "Pod", "spec": m})
	if err != nil {
		return nil, err
	}
	return &inventory.Document{Node: node, Origin: inventory.Origin{ListIndex: -1}}, nil
}

// addDocuments gives each workload the Document of its template, made once
// per distinct template, or the reason it could not be made.
func addDocuments(ws []Workload) {
	type made struct {
		doc *inventory.Document
		err error
	}
	byTemplate := map[string]made{}
	for i := range ws {
		w := &ws[i]
		if w.Template == nil {
			continue
		}
		key, err := json.Marshal(w.Template)
		if err == nil {
			m, ok := byTemplate[string(key)]
			if !ok {
				m.doc, m.err = podDocument(w.Template)
				byTemplate[string(key)] = m
			}
			w.Document, err = m.doc, m.err
		}
		if err != nil {
			w.DocumentError = fmt.Sprintf("pod template of %s: %v", inventory.ObjectRef{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}, err)
		}
	}
}
