package app

import (
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
	if b.Version == "" {
		b.Version = "devel"
		if info, ok := debug.ReadBuildInfo(); ok {
			if v := info.Main.Version; v != "" && v != "(devel)" {
				b.Version = v
			}
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					if b.Commit == "" {
						b.Commit = s.Value
					}
				case "vcs.time":
					if b.Date == "" {
						b.Date = s.Value
					}
				}
			}
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
