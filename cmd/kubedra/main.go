// Command kubedra moves Kubernetes workloads from device plugins to Dynamic
// Resource Allocation (DRA). All logic lives in package app; this file only
// builds the real streams and exits with the code app.Main returns.
package main

import (
	"os"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
)

func main() {
	os.Exit(app.Main(os.Args, app.SystemStreams()))
}
