package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/charmbracelet/colorprofile"
)

// Color modes for --color.
const (
	ColorAuto   = "auto"
	ColorAlways = "always"
	ColorNever  = "never"
)

// ColorProfile decides how much colour output gets: colorprofile.NoTTY for
// plain text, otherwise a colour profile. mode is the --color flag ("" is
// auto), tty whether the output is a terminal, and getenv reads the
// environment (injected so tests control it).
//
// The order is kubedra's, not colorprofile's: the flag wins, then a
// non-empty NO_COLOR (no-color.org) means none, then a non-empty
// CLICOLOR_FORCE means colour, then colour only on a terminal.
// colorprofile.Detect alone would ignore NO_COLOR=yes-style values on
// some paths and let CLICOLOR_FORCE beat NO_COLOR on a pipe.
func ColorProfile(mode string, tty bool, getenv func(string) string) (colorprofile.Profile, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	forced := false
	switch mode {
	case ColorNever:
		return colorprofile.NoTTY, nil
	case ColorAlways:
		forced = true
	case "", ColorAuto:
		switch {
		case getenv("NO_COLOR") != "":
			return colorprofile.NoTTY, nil
		case getenv("CLICOLOR_FORCE") != "" && getenv("CLICOLOR_FORCE") != "0":
			forced = true
		case !tty:
			return colorprofile.NoTTY, nil
		}
	default:
		return colorprofile.NoTTY, fmt.Errorf("unknown color mode %q: use auto, always or never", mode)
	}
	term := getenv("TERM")
	switch ct := strings.ToLower(getenv("COLORTERM")); {
	case ct == "truecolor" || ct == "24bit":
		return colorprofile.TrueColor, nil
	case strings.Contains(term, "256color"):
		return colorprofile.ANSI256, nil
	case (term == "" || term == "dumb") && !forced:
		return colorprofile.NoTTY, nil
	}
	return colorprofile.ANSI, nil
}

// Writer wraps w so that styled text is downsampled to p (and stripped of
// every escape for colorprofile.NoTTY).
func Writer(w io.Writer, p colorprofile.Profile) io.Writer {
	cw := colorprofile.NewWriter(w, nil)
	cw.Profile = p
	return cw
}
