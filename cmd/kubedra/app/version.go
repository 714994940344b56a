package app

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set by the linker: -X github.com/kubedra/kubedra/cmd/kubedra/app.version=...
var (
	version string
	commit  string
	date    string
)

// BuildInfo describes the running binary.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Date      string `json:"date,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

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
	var output string
	var short bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the kubedra version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := Build()
			switch output {
			case "json":
				enc := json.NewEncoder(streams.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			case "", "text":
			default:
				return FlagErrorf("unknown output format %q: use text or json", output)
			}
			if short {
				fmt.Fprintln(streams.Out, b.Version)
				return nil
			}
			fmt.Fprintf(streams.Out, "kubedra %s", b.Version)
			if b.Commit != "" {
				fmt.Fprintf(streams.Out, " (commit %s", b.Commit)
				if b.Date != "" {
					fmt.Fprintf(streams.Out, ", built %s", b.Date)
				}
				fmt.Fprint(streams.Out, ")")
			}
			fmt.Fprintf(streams.Out, " %s %s\n", b.GoVersion, b.Platform)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: text or json")
	cmd.Flags().BoolVar(&short, "short", false, "print only the version")
	return cmd
}
