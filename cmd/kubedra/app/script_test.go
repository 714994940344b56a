package app_test

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/kubedra/kubedra/cmd/kubedra/app"
	"github.com/kubedra/kubedra/internal/golden"
)

// TestMain lets scripts run `exec kubedra ...` in-process through app.Main.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"kubedra": func() { os.Exit(app.Main(os.Args, app.SystemStreams())) },
		// The kubectl plugin: the same binary installed as kubectl-dra.
		"kubectl-dra": func() { os.Exit(app.Main(os.Args, app.SystemStreams())) },
	})
}

// TestScripts runs testdata/script/*.txtar: end-to-end CLI behaviour
// (output, exit codes, stdin). Update expected output with
// KUBEDRA_UPDATE_GOLDEN=1 and review the diff.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		UpdateScripts:       golden.Update(),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			// Scripts never colour and never reach a real cluster.
			env.Setenv("NO_COLOR", "1")
			env.Setenv("KUBECONFIG", env.WorkDir+"/no-such-kubeconfig")
			env.Setenv("HOME", env.WorkDir+"/home")
			return nil
		},
	})
}
