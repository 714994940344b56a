// Package schedule holds the scheduling equivalence suite: for each scenario
// (testdata/<scenario>.yaml, a workload written for device plugins) it builds
// two worlds in a real control plane and checks that the scheduler decides
// the same in both:
//
//   - the device-plugin world: fake nodes whose status advertises the plugin's
//     extended resources (nvidia.com/gpu, nvidia.com/mig-1g.10gb,
//     aws.amazon.com/neuron, vpc.amazonaws.com/efa) and carries the GPU
//     feature discovery labels, running the original workload;
//   - the DRA world: the same nodes without extended resources or device
//     labels, with ResourceSlices shaped like the real drivers' (gpu.nvidia.com
//     full GPUs and MIG devices, neuron.aws.com devices with device groups,
//     dra.net EFA interfaces) and the drivers' DeviceClasses, running what
//     `kubedra migrate` made of the workload.
//
// Each world lives in a harness.Sandbox, so the scenarios run in parallel.
// The same pods must be bound to the same (logical) nodes or stay pending in
// both worlds and match the scenario's expectation; in the DRA world every
// bound pod's claims must be allocated with the expected number of devices,
// on the pod's node, with the expected attributes (MIG profile, product name,
// one Neuron/EFA device group).
package schedule
