package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// KubedraBin returns the kubedra binary under test: $KUBEDRA_BIN (make e2e
// sets it to bin/kubedra after building it).
func KubedraBin() (string, error) {
	bin := os.Getenv("KUBEDRA_BIN")
	if bin == "" {
		return "", errors.New("KUBEDRA_BIN is not set: run the e2e tests with `make e2e`, or set KUBEDRA_BIN to a built kubedra binary")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(abs); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("KUBEDRA_BIN=%s is not an executable file (%v)", bin, err)
	}
	return abs, nil
}

// KubedraResult is what one kubedra invocation produced.
type KubedraResult struct {
	Stdout, Stderr []byte
	ExitCode       int
}

// RunKubedra runs the kubedra binary with args, stdin (nil: empty) and env
// (nil: the test's environment with NO_COLOR=1). A non-zero exit code is not
// an error (callers check ExitCode); failing to run the binary is.
func RunKubedra(ctx context.Context, env []string, stdin []byte, args ...string) (KubedraResult, error) {
	bin, err := KubedraBin()
	if err != nil {
		return KubedraResult{}, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, "NO_COLOR=1")
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	res := KubedraResult{Stdout: out.Bytes(), Stderr: errb.Bytes()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return res, fmt.Errorf("running %s: %w", bin, err)
	}
	return res, nil
}
