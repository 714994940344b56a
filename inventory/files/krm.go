package files

import (
	"cmp"
	"regexp"
	"strconv"

	"sigs.k8s.io/kustomize/kyaml/kio/kioutil"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
)

// resourceListHeader and resourceListKind match the top-level apiVersion
// and kind of a KRM ResourceList; documentEnd a document marker.
var (
	resourceListHeader = regexp.MustCompile(`(?m)^apiVersion: *["']?config\.kubernetes\.io/v1["']? *$`)
	resourceListKind   = regexp.MustCompile(`(?m)^kind: *["']?ResourceList["']? *$`)
	documentEnd        = regexp.MustCompile(`(?m)^(---|\.\.\.)[ \t]*$`)
)

// IsResourceList reports whether a stream that starts with head is a KRM
// ResourceList: its first document has the ResourceList apiVersion and
// kind at the top level (kustomize and kpt write them first).
func IsResourceList(head []byte) bool {
	if m := documentEnd.FindIndex(head); m != nil && m[0] == 0 {
		head = head[m[1]:] // a leading marker opens the first document
	}
	if m := documentEnd.FindIndex(head); m != nil {
		head = head[:m[0]]
	}
	return resourceListHeader.Match(head) && resourceListKind.Match(head)
}

// Items are a ResourceList's items as Documents, each at the file and
// index that kustomize, kpt or kio put in its annotations ("" and its
// position in the list when there are none).
func Items(items []*yaml.RNode) []*inventory.Document {
	docs := make([]*inventory.Document, len(items))
	for i, item := range items {
		a := item.GetAnnotations()
		path := cmp.Or(a[kioutil.PathAnnotation], a[kioutil.LegacyPathAnnotation])
		idx := i
		if n, err := strconv.Atoi(cmp.Or(a[kioutil.IndexAnnotation], a[kioutil.LegacyIndexAnnotation])); err == nil {
			idx = n
		}
		docs[i] = &inventory.Document{Node: item, Origin: inventory.Origin{Path: path, Index: idx, Line: item.YNode().Line, ListIndex: -1}}
	}
	return docs
}
