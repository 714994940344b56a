package rewrite

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	sigsyaml "sigs.k8s.io/yaml"
)

// FieldSpec is a kustomize transformer field: a path (slash-separated; list
// items are walked implicitly) in objects of a group and kind.
type FieldSpec struct {
	Group string `json:"group,omitempty"`
	Kind  string `json:"kind,omitempty"`
	Path  string `json:"path"`
}

type nameReference struct {
	Group      string      `json:"group"`
	Kind       string      `json:"kind"`
	FieldSpecs []FieldSpec `json:"fieldSpecs"`
}

type transformerConfig struct {
	NameReference []nameReference `json:"nameReference"`
}

// NameReferenceHeader heads the kustomize configurations file migrate writes.
const NameReferenceHeader = `# Written by kubedra migrate. kustomize (v5.8, api v0.21) has no built-in name
# reference from pod specs to ResourceClaimTemplates and ResourceClaims, so
# namePrefix and nameSuffix would rename the objects but not the references
# to them. This file gives kustomize those references; kubedra adds fields,
# never removes them (edit freely).
`

// NameReferences returns the kustomize configurations file that makes name
// transformers rename resourceClaimTemplateName and resourceClaimName at
// every pod-spec path in pods (paths to the pod spec, slash-separated),
// merged with old (the file as it is, nil if new). A file that already
// holds every field comes back unchanged.
func NameReferences(old []byte, pods []FieldSpec) ([]byte, error) {
	var cfg transformerConfig
	if len(bytes.TrimSpace(old)) > 0 {
		if err := sigsyaml.Unmarshal(old, &cfg); err != nil {
			return nil, fmt.Errorf("parsing kustomize configurations: %w", err)
		}
	}
	changed := false
	for _, target := range []struct{ kind, field string }{{"ResourceClaimTemplate", "resourceClaimTemplateName"}, {"ResourceClaim", "resourceClaimName"}} {
		i := slices.IndexFunc(cfg.NameReference, func(n nameReference) bool { return n.Kind == target.kind && n.Group == "resource.k8s.io" })
		if i < 0 {
			cfg.NameReference = append(cfg.NameReference, nameReference{Group: "resource.k8s.io", Kind: target.kind})
			i = len(cfg.NameReference) - 1
			changed = true
		}
		nr := &cfg.NameReference[i]
		for _, p := range pods {
			fs := FieldSpec{Group: p.Group, Kind: p.Kind, Path: p.Path + "/resourceClaims/" + target.field}
			if !slices.Contains(nr.FieldSpecs, fs) {
				nr.FieldSpecs = append(nr.FieldSpecs, fs)
				changed = true
			}
		}
		slices.SortStableFunc(nr.FieldSpecs, func(a, b FieldSpec) int {
			return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Path, b.Path))
		})
	}
	if !changed {
		return old, nil
	}
	out, err := sigsyaml.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return append([]byte(NameReferenceHeader), out...), nil
}
