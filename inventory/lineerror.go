package inventory

import (
	"errors"
	"strconv"
)

// LineError is an error about one line of an input: the position is a
// field, so that whoever turns it into a Diagnostic takes the line from
// here, never from the message's text.
type LineError struct {
	Line int // 1-based
	Err  error
}

// AtLine wraps err with the line it is about; an error that has a line
// already keeps it.
func AtLine(line int, err error) error {
	if err == nil || line <= 0 {
		return err
	}
	var le *LineError
	if errors.As(err, &le) {
		return err
	}
	return &LineError{Line: line, Err: err}
}

func (e *LineError) Error() string { return "line " + strconv.Itoa(e.Line) + ": " + e.Err.Error() }

func (e *LineError) Unwrap() error { return e.Err }

// LineOf splits err into the line it is about (def when it names none) and
// the message without the position.
func LineOf(err error, def int) (int, string) {
	var le *LineError
	if errors.As(err, &le) && err == error(le) {
		return le.Line, le.Err.Error()
	}
	if errors.As(err, &le) {
		return le.Line, err.Error()
	}
	return def, err.Error()
}
