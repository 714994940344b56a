package report

import (
	"bufio"
	"fmt"
	"io"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// WriteResourceList writes a KRM function's answer: a
// config.kubernetes.io/v1 ResourceList with items, the functionConfig
// (when there is one) and results, in the bytes kio.ByteWriter writes with
// KeepReaderAnnotations. It encodes item by item: the YAML encoder keeps
// every event of a document until the document ends, so one encode of a
// 100,000-item list held gigabytes. Items that are not objects (a
// malformed item written back as it came) are written as they are.
func WriteResourceList(w io.Writer, items []*yaml.Node, fc *yaml.RNode, results framework.Results) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "apiVersion: %s\nkind: %s\n", kio.ResourceListAPIVersion, kio.ResourceListKind)
	if err := writeList(bw, "items", items, clearEmptyAnnotations); err != nil {
		return err
	}
	if err := writeTail(bw, fc, results); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteResourceListItem writes one item as WriteResourceList writes each,
// for WriteSpooledResourceList.
func WriteResourceListItem(w io.Writer, n *yaml.Node) error {
	return writeItem(w, n, clearEmptyAnnotations)
}

// WriteSpooledResourceList writes what WriteResourceList writes for n
// items, given as the text WriteResourceListItem wrote for each (a list
// answered a batch of items at a time, its items spooled).
func WriteSpooledResourceList(w io.Writer, items io.WriterTo, n int, fc *yaml.RNode, results framework.Results) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "apiVersion: %s\nkind: %s\n", kio.ResourceListAPIVersion, kio.ResourceListKind)
	if n == 0 {
		fmt.Fprint(bw, "items: []\n")
	} else {
		fmt.Fprint(bw, "items:\n")
		if _, err := items.WriteTo(bw); err != nil {
			return err
		}
	}
	if err := writeTail(bw, fc, results); err != nil {
		return err
	}
	return bw.Flush()
}

// writeTail writes what follows a ResourceList's items: the functionConfig
// (when there is one) and the results (when there are any).
func writeTail(w io.Writer, fc *yaml.RNode, results framework.Results) error {
	if fc != nil {
		if err := encode(w, &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
			{Kind: yaml.ScalarNode, Value: "functionConfig"}, fc.YNode()}}); err != nil {
			return err
		}
	}
	if len(results) == 0 {
		return nil
	}
	if _, err := fmt.Fprint(w, "results:\n"); err != nil {
		return err
	}
	// One result at a time: a check of 100,000 GPU pods has as many, and
	// their nodes all at once were most of its memory.
	for _, r := range results {
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		n, err := yaml.Parse(string(b))
		if err != nil {
			return err
		}
		if err := writeItem(w, n.YNode(), nil); err != nil {
			return err
		}
	}
	return nil
}

// clearEmptyAnnotations is what kio.ByteWriter does to each item: a copy
// without an empty annotations map.
func clearEmptyAnnotations(n *yaml.Node) (*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return n, nil
	}
	c := yaml.CopyYNode(n)
	return c, yaml.ClearEmptyAnnotations(yaml.NewRNode(c))
}

// writeList writes key: and the nodes as its block sequence, one encode a
// node, each through prep when it is not nil (an empty list is []).
func writeList(w io.Writer, key string, nodes []*yaml.Node, prep func(*yaml.Node) (*yaml.Node, error)) error {
	if len(nodes) == 0 {
		_, err := fmt.Fprintf(w, "%s: []\n", key)
		return err
	}
	if _, err := fmt.Fprintf(w, "%s:\n", key); err != nil {
		return err
	}
	for _, n := range nodes {
		if err := writeItem(w, n, prep); err != nil {
			return err
		}
	}
	return nil
}

// writeItem writes n (through prep when it is not nil) as an entry of a
// block sequence.
func writeItem(w io.Writer, n *yaml.Node, prep func(*yaml.Node) (*yaml.Node, error)) error {
	if prep != nil {
		var err error
		if n, err = prep(n); err != nil {
			return err
		}
	}
	return encode(w, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{n}})
}

// encode writes n as kyaml's encoder does (indent 2, compact sequences).
func encode(w io.Writer, n *yaml.Node) error {
	enc := yaml.NewEncoder(w)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}); err != nil {
		return err
	}
	return enc.Close()
}
