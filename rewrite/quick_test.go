package rewrite

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestQuickEncodeIsEncoder: wherever quickEncode encodes a tree, its bytes
// are the encoder's, in both sequence styles: every mapping and sequence
// of every document of the goldens and of the shared corpus (when
// present), and trees with the scalars whose presentation it decides.
func TestQuickEncodeIsEncoder(t *testing.T) {
	var trees []*yaml.Node
	for _, doc := range []string{
		"a: yes\nb: on\nc: \"yes\"\nd: True\ne: 1\nf: \"1\"\ng: 010\nh: x/y.z_w-v\ni: null\nj: \"null\"\nk: 0\n",
		"- a\n- b: 1\n  c:\n  - d\n  - e: f\n    g: h\n- - nested\n",
		"a:\n  b:\n    c:\n    - d: e\n      f:\n        g: h\n",
		"a: {}\nb: []\nc: &x y\nd: *x\ne: 'q'\nf: |\n  text\n",
		"k: TRUE\nl: False\nm: NULL\nn: Null\no: \"on\"\np: -1\nq: 1.5\nr: 1e3\n",
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			t.Fatal(err)
		}
		trees = append(trees, &n)
	}
	// Strings as kubedra builds them (tag !!str, or none as kyaml's
	// LookupCreate makes keys; no style): the words the encoder must quote
	// or may leave plain.
	for _, w := range []string{"null", "Null", "NULL", "true", "True", "FALSE", "yes", "on", "off", "y", "n", "gpu", "a.b/c_d-e", "nan", "inf", "e1", "x1"} {
		trees = append(trees, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{builtString("k"), builtString(w)}},
			&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "k"}, {Kind: yaml.ScalarNode, Value: w}}})
	}
	roots := []string{"testdata", "../../shared/corpus/dev"}
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml") {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			dec := yaml.NewDecoder(bytes.NewReader(data))
			for {
				n := new(yaml.Node)
				if err := dec.Decode(n); err != nil {
					break // the end, or a template (not YAML)
				}
				trees = append(trees, n)
			}
			return nil
		})
	}
	quicked, compared := 0, 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode || n.Kind == yaml.DocumentNode {
			for _, st := range []style{{indent: 2, compact: true}, {indent: 2, compact: false}} {
				compared++
				got, ok := quickEncode(n, st)
				if !ok {
					continue
				}
				quicked++
				want, err := encoderYAML(n, st)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("quickEncode (compact %v) gives\n%s\nthe encoder\n%s", st.compact, got, want)
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	for _, n := range trees {
		walk(n)
	}
	t.Logf("%d trees of %d encoded quickly, each the encoder's bytes", quicked, compared)
	if quicked < compared/10 {
		t.Errorf("quickEncode took %d trees of %d", quicked, compared)
	}
}

func builtString(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: yaml.NodeTagString, Value: v}
}
