package app

import (
	"cmp"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/kubedra/kubedra/cmd/kubedra/app/report"
)

// Set by the linker: -X github.com/kubedra/kubedra/cmd/kubedra/app.version=...
var (
	version string
	commit  string
	date    string
)

// BuildInfo describes the running binary.
type BuildInfo report.VersionInfo

// Build returns the version the linker injected, or, for `go install` builds,
// what the module build info records.
func Build() BuildInfo {
	b := BuildInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if b.Version != "" || !ok {
		b.Version = cmp.Or(b.Version, "devel")
		return b
	}
	b.Version = "devel"
	if v := info.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = cmp.Or(b.Commit, s.Value)
		case "vcs.time":
			b.Date = cmp.Or(b.Date, s.Value)
		}
	}
	return b
}

// NewCmdVersion prints the version.
func NewCmdVersion(streams IOStreams) *cobra.Command {
	var output report.Format
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the kubedra version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := Build()
			return report.Version(streams.Out, report.VersionInfo(b), output, short)
		},
	}
	report.AddFormatFlag(cmd, &output, report.VersionFormats, "")
	cmd.Flags().BoolVar(&short, "short", false, "print only the version")
	return cmd
}
