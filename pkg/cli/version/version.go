package version

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

// BuildInfo is what `ledgerctl version` reports. Committed is the date of
// the commit the binary was built from, not when it was built; Date carries
// the same value under the name earlier versions printed.
type BuildInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit,omitempty"`
	Committed string `json:"committed,omitempty"`
	Date      string `json:"date,omitempty"` // the same as committed, kept for scripts reading it
	Go        string `json:"go"`
}

func buildInfo() BuildInfo {
	b := BuildInfo{Version: cmdutil.Version, Commit: cmdutil.Commit, Committed: cmdutil.Date, Go: runtime.Version()}
	if b.Commit == "" {
		if info, ok := debug.ReadBuildInfo(); ok {
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					b.Commit = s.Value
				case "vcs.time":
					b.Committed = s.Value
				}
			}
		}
	}
	b.Date = b.Committed
	return b
}

func NewCmdVersion(f *cmdutil.Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "version",
		Example: "  ledgerctl version\n  ledgerctl version --json",
		Short:   "Print the version, the commit and its date",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b := buildInfo()
			if asJSON {
				return json.NewEncoder(f.Streams.Out).Encode(b)
			}
			fmt.Fprintf(f.Streams.Out, "ledgerctl %s", b.Version)
			if b.Commit != "" {
				fmt.Fprintf(f.Streams.Out, " (commit %s", b.Commit)
				if b.Committed != "" {
					fmt.Fprintf(f.Streams.Out, ", committed %s", b.Committed)
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
