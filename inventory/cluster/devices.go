package cluster

import (
	"context"
	"encoding/json"

	resourceapi "k8s.io/api/resource/v1"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/kubedra/kubedra/inventory"
	"github.com/kubedra/kubedra/inventory/files"
)

// DumpDevices are the whole ResourceSlices and DeviceClasses of a dump,
// which its Facts only count: simulate publishes the slices on their
// nodes and selects devices with the classes.
type DumpDevices struct {
	// Slices are the ResourceSlices of each node, by node name, in the
	// dump's order; a slice without a node is left out.
	Slices  map[string][]*resourceapi.ResourceSlice
	Classes []*resourceapi.DeviceClass
	// Bad are the objects that could not be decoded.
	Bad []BadObject
}

// BadObject is an object of a dump that could not be decoded: its
// document (where it is, what it is) and why.
type BadObject struct {
	Doc *inventory.Document
	Err error
}

// ReadDumpDevices reads the resource.k8s.io/v1 ResourceSlices and
// DeviceClasses of the dump file path (relative to dir), each document at
// its line (inventory/files). What cannot be read or parsed holds none;
// ReadDump, which reads the same file, reports it.
func ReadDumpDevices(ctx context.Context, path, dir string) *DumpDevices {
	out := &DumpDevices{Slices: map[string][]*resourceapi.ResourceSlice{}}
	_ = files.Read(ctx, []string{path}, nil, files.Options{Dir: dir, Ordered: true}, func(f *files.File) error {
		for _, d := range f.Docs {
			if d.Node.GetApiVersion() == "resource.k8s.io/v1" {
				out.add(d)
			}
		}
		return nil
	})
	return out
}

// add keeps the object of d when it is a ResourceSlice or a DeviceClass.
func (o *DumpDevices) add(d *inventory.Document) {
	switch d.Node.GetKind() {
	case "ResourceSlice":
		var s resourceapi.ResourceSlice
		if err := decode(d.Node, &s); err != nil {
			o.Bad = append(o.Bad, BadObject{Doc: d, Err: err})
			return
		}
		if s.Spec.NodeName != nil {
			o.Slices[*s.Spec.NodeName] = append(o.Slices[*s.Spec.NodeName], &s)
		}
	case "DeviceClass":
		var c resourceapi.DeviceClass
		if err := decode(d.Node, &c); err != nil {
			o.Bad = append(o.Bad, BadObject{Doc: d, Err: err})
			return
		}
		o.Classes = append(o.Classes, &c)
	}
}

// decode decodes the object of n into a typed object, through JSON.
func decode(n *yaml.RNode, into any) error {
	data, err := n.MarshalJSON()
	if err != nil {
		return err
	}
	return json.Unmarshal(data, into)
}
