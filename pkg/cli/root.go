package cli

import (
	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// NewRootCmd builds the whole command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "ledgerctl",
		Short: "Keep the ledger of WACZ web archives and decide who may read them",
		Long: `ledgerctl keeps the ledger of WACZ archives a capture server wrote into S3,
decides who may read each one through OpenFGA relationships, hands out
300-second presigned URLs, runs polite link-following crawls, reconciles
captures whose registration failed, and indexes page text for search.

Configuration comes from flags, then the shell, then .env.local, then .env
(see docs/configuration.md); an empty value counts as unset.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// The executing command's flags (its own plus the inherited
		// persistent ones) are the top layer of the configuration.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) { f.flags = cmd.Flags() },
	}
	root.SetUsageTemplate(root.UsageTemplate() + "\n" + exitStatusHelp + "\n")
	f.flags = root.PersistentFlags()
	config.BindFlags(f.flags, "DATABASE_URL")
	root.PersistentFlags().BoolVar(&f.jsonErrors, "json-errors", false, "print errors on stderr as one JSON object")
	root.AddCommand(
		newCmdVersion(f),
		newCmdMigrate(f),
		newCmdDev(f),
		newCmdFGA(f),
		newCmdReconcile(f),
		newCmdServe(f),
		newCmdDrain(f),
		newCmdArchives(f),
		newCmdRules(f),
		newCmdCrawl(f),
		newCmdTargets(f),
	)
	root.CompletionOptions.HiddenDefaultCmd = false
	return root
}
