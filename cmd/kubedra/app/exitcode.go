package app

import (
	"errors"
	"fmt"

	"github.com/kubedra/kubedra/cmd/kubedra/app/flags"
)

// Exit codes are kubedra's contract with scripts and CI; docs/exit-codes.md
// documents them and exitcode_test.go checks them through Main.
const (
	// ExitOK: the command did its job (findings or not, for scan and migrate).
	ExitOK = 0
	// ExitError: kubedra could not do its job: a usage error, an input that
	// could not be read or parsed, an I/O or API failure. Every other input
	// was still processed and reported first.
	ExitError = 1
	// ExitFindings: a gate found something (check, audit).
	ExitFindings = 2
)

// ExitCodeError ends a command with a given exit code. When Err is nil the
// command has already said everything (e.g. a gate that failed, or inputs
// that were reported as skipped), and Main prints nothing more.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e *ExitCodeError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitCodeError) Unwrap() error { return e.Err }

// exit ends a run that has said everything: ExitError when it could not
// do all of its job, else ExitFindings when a gate found something, else
// nil (1 beats 2).
func exit(failed, found bool) error {
	switch {
	case failed:
		return &ExitCodeError{Code: ExitError}
	case found:
		return &ExitCodeError{Code: ExitFindings}
	}
	return nil
}

// exitCode maps an error returned by a command to the process exit code and
// the message to print (empty: print nothing).
func exitCode(err error) (int, string) {
	if err == nil {
		return ExitOK, ""
	}
	var ec *ExitCodeError
	if errors.As(err, &ec) {
		if ec.Err == nil {
			return ec.Code, ""
		}
		return ec.Code, ec.Err.Error()
	}
	var fe *flags.Error
	if errors.As(err, &fe) {
		return ExitError, fe.Error()
	}
	return ExitError, err.Error()
}
