package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// Format is an output format name, the value of -o/--output.
type Format string

// Formats lists what one command renders: the first is the default, and
// Aliases are other names users type for the same format ("md").
type Formats struct {
	Names   []Format
	Aliases map[string]Format
}

// NewFormats lists names (the first is the default).
func NewFormats(names ...Format) Formats { return Formats{Names: names} }

// Default is the first format.
func (fs Formats) Default() Format { return fs.Names[0] }

// Parse returns the format s names, or an error listing the formats.
func (fs Formats) Parse(s string) (Format, error) {
	if a, ok := fs.Aliases[s]; ok {
		return a, nil
	}
	if slices.Contains(fs.Names, Format(s)) {
		return Format(s), nil
	}
	return "", fmt.Errorf("unknown output format %q: use %s", s, fs)
}

// String is the comma-separated list of names.
func (fs Formats) String() string {
	names := make([]string, len(fs.Names))
	for i, n := range fs.Names {
		names[i] = string(n)
	}
	return strings.Join(names, ", ")
}

// formatValue is a pflag.Value that accepts only the formats of its
// command, so that `-o bogus` fails when flags are parsed, whatever else is
// given (helm pkg/cli/output binds its format the same way).
type formatValue struct {
	p  *Format
	fs Formats
}

func (v *formatValue) String() string { return string(*v.p) }
func (v *formatValue) Type() string   { return "format" }
func (v *formatValue) Set(s string) error {
	f, err := v.fs.Parse(s)
	if err != nil {
		return err
	}
	*v.p = f
	return nil
}

// AddFormatFlag binds -o/--output to p, set to the default, with shell
// completion of the names; what describes the flag in its usage ("" means
// "output format").
func AddFormatFlag(cmd *cobra.Command, p *Format, fs Formats, what string) {
	*p = fs.Default()
	if what == "" {
		what = "output format"
	}
	cmd.Flags().VarP(&formatValue{p: p, fs: fs}, "output", "o", what+": "+fs.String())
	names := make([]string, len(fs.Names))
	for i, n := range fs.Names {
		names[i] = string(n)
	}
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(names, cobra.ShellCompDirectiveNoFileComp))
}

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
