package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set by the release build through -ldflags "-X …".
var (
	version = "dev"
	commit  = ""
	date    = ""
)

// BuildInfo is what `ledgerctl version` reports.
type BuildInfo struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Date    string `json:"date,omitempty"`
	Go      string `json:"go"`
}

func buildInfo() BuildInfo {
	b := BuildInfo{Version: version, Commit: commit, Date: date, Go: runtime.Version()}
	if b.Commit == "" {
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					b.Commit = s.Value
				case "vcs.time":
					b.Date = s.Value
				}
			}
		}
	}
	return b
}

func newCmdVersion(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version",
		Example: "  ledgerctl version\n  ledgerctl version --json",
		Short:   "Print the version, commit and build date",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := buildInfo()
			if asJSON {
				return json.NewEncoder(f.Streams.Out).Encode(b)
			}
			fmt.Fprintf(f.Streams.Out, "ledgerctl %s", b.Version)
			if b.Commit != "" {
				fmt.Fprintf(f.Streams.Out, " (commit %s", b.Commit)
				if b.Date != "" {
					fmt.Fprintf(f.Streams.Out, ", built %s", b.Date)
				}
				fmt.Fprint(f.Streams.Out, ")")
			}
			fmt.Fprintf(f.Streams.Out, " %s\n", b.Go)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
