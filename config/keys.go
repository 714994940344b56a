package config

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/kubedra/kubedra/inventory"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// keyLines checks the keys of a config file exactly against the json
// names of Config's fields (the JSON decoder behind UnmarshalStrict
// matches them case-insensitively, so `FAILON:` would pass) and returns
// the line of each top-level key. Errors start with "line N: ".
func keyLines(data []byte) (map[string]int, error) {
	var doc kyaml.Node
	if err := inventory.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	lines := map[string]int{}
	if doc.Kind != kyaml.DocumentNode || len(doc.Content) == 0 {
		return lines, nil
	}
	root := doc.Content[0]
	if root.Kind == kyaml.ScalarNode && root.Tag == "!!null" {
		return lines, nil
	}
	if err := checkKeys(root, reflect.TypeFor[Config](), ""); err != nil {
		return nil, err
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		lines[root.Content[i].Value] = root.Content[i].Line
	}
	return lines, nil
}

// checkKeys walks n along t: every mapping key must be the json name of a
// field of the struct it decodes into.
func checkKeys(n *kyaml.Node, t reflect.Type, at string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind == kyaml.MappingNode:
		fields := map[string]reflect.Type{}
		var names []string
		jsonFields(t, fields, &names)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			ft, ok := fields[k.Value]
			if !ok {
				hint := ""
				for _, name := range names {
					if strings.EqualFold(name, k.Value) {
						hint = fmt.Sprintf(" (keys are case-sensitive: %s)", name)
					}
				}
				return inventory.AtLine(k.Line, fmt.Errorf("unknown key %q%s%s; known keys: %s", k.Value, in(at), hint, strings.Join(names, ", ")))
			}
			if err := checkKeys(n.Content[i+1], ft, at+"."+k.Value); err != nil {
				return err
			}
		}
	case t.Kind() == reflect.Slice && n.Kind == kyaml.SequenceNode:
		for i, el := range n.Content {
			if err := checkKeys(el, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonFields adds the json names of t's fields to fields and names, those
// of an inline struct (`json:",inline"`) as its own.
func jsonFields(t reflect.Type, fields map[string]reflect.Type, names *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" && opts == "inline" && f.Type.Kind() == reflect.Struct {
			jsonFields(f.Type, fields, names)
			continue
		}
		if name == "" || name == "-" {
			continue
		}
		fields[name] = f.Type
		*names = append(*names, name)
	}
}

func in(at string) string {
	if at == "" {
		return ""
	}
	return " in " + strings.TrimPrefix(at, ".")
}
