package flags

import _ "embed"

//go:embed example.yaml
var exampleYAML []byte

// ExamplePath is the file name the embedded example is reported under.
const ExamplePath = "example.yaml"

// ExampleManifest returns the embedded example that `scan --example` and
// `migrate --example` work on: a GPU Deployment pinned by product label, a
// PyTorchJob, a Neuron+EFA Job, a MIG notebook and an unmapped FPGA. The
// caller may keep the slice; it is a copy.
func ExampleManifest() []byte {
	return append([]byte(nil), exampleYAML...)
}
