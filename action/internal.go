package action

import (
	"errors"
	"fmt"

	"github.com/kubedra/kubedra/rewrite/plan"
)

// internalError is a recovered panic.
type internalError struct{ v any }

func (e internalError) Error() string {
	return fmt.Sprintf("internal error (a bug in kubedra: please report it with this input): %v", e.v)
}

// guard runs fn, turning a panic into an internalError.
func guard(fn func()) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = internalError{v}
		}
	}()
	fn()
	return nil
}

// ruleOf is the rule id of an error that stops one input:
// plan.RuleInternal for a bug (reported naming the input, which is left as
// it was while the others are still processed: exit 1, never the gate's
// 2), else def.
func ruleOf(err error, def string) string {
	if errors.As(err, new(internalError)) {
		return plan.RuleInternal
	}
	return def
}
