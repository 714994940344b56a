package report

import (
	"fmt"
	"io"
)

// VersionFormats are the formats of `kubedra version`.
var VersionFormats = NewFormats("text", "json")

// VersionInfo describes a kubedra binary.
type VersionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Version writes v: one line of text (the version alone when short), or
// JSON fields.
func Version(w io.Writer, v VersionInfo, format Format, short bool) error {
	switch {
	case format == "json":
		return JSON(w, v)
	case short:
		_, err := fmt.Fprintln(w, v.Version)
		return err
	}
	fmt.Fprintf(w, "kubedra %s", v.Version)
	if v.Commit != "" {
		fmt.Fprintf(w, " (commit %s", v.Commit)
		if v.Date != "" {
			fmt.Fprintf(w, ", built %s", v.Date)
		}
		fmt.Fprint(w, ")")
	}
	_, err := fmt.Fprintf(w, " %s %s\n", v.GoVersion, v.Platform)
	return err
}
