package action

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/kubedra/kubedra/rules"
)

// Explain resolves one container requesting a resource, as migrate
// would with --allow-lossy, and encodes what it becomes for the target
// (rules show); nil set: the built-in rules.
func Explain(set *rules.Set, opts rules.ExplainOptions) (*rules.Explanation, error) {
	return loadRules(set).Explain(opts)
}

// ValidateRules loads each rules file the way kubedra loads rules ("-"
// reads stdin; relative paths are read from dir, "" for the process's
// working folder) and returns, per file, nil or what is wrong with it as
// FILE:LINE: message, the file named as given.
func ValidateRules(dir string, files []string, stdin io.Reader) []error {
	errs := make([]error, len(files))
	for i, f := range files {
		if f == "-" {
			data, err := io.ReadAll(stdin)
			if err == nil {
				_, err = rules.LoadBytes("-", data)
			}
			errs[i] = err
			continue
		}
		if _, err := os.Stat(Input{Dir: dir}.open(f)); err != nil {
			errs[i] = fmt.Errorf("%s: %w", f, errors.Unwrap(err))
			continue
		}
		_, errs[i] = rules.LoadFrom(dir, f)
	}
	return errs
}
