package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/archives"
	"github.com/capture-ledger/ledgerctl/pkg/cli/capture"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/cli/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/cli/dev"
	"github.com/capture-ledger/ledgerctl/pkg/cli/doctor"
	"github.com/capture-ledger/ledgerctl/pkg/cli/drain"
	"github.com/capture-ledger/ledgerctl/pkg/cli/fga"
	"github.com/capture-ledger/ledgerctl/pkg/cli/hosts"
	"github.com/capture-ledger/ledgerctl/pkg/cli/migrate"
	"github.com/capture-ledger/ledgerctl/pkg/cli/reconcile"
	"github.com/capture-ledger/ledgerctl/pkg/cli/rules"
	"github.com/capture-ledger/ledgerctl/pkg/cli/search"
	"github.com/capture-ledger/ledgerctl/pkg/cli/serve"
	"github.com/capture-ledger/ledgerctl/pkg/cli/share"
	"github.com/capture-ledger/ledgerctl/pkg/cli/version"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// NewRootCmd builds the whole command tree.
func NewRootCmd(f *cmdutil.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "ledgerctl",
		Short: "Keep the ledger of WACZ web archives and decide who may read them",
		Long: `ledgerctl keeps the ledger of WACZ archives a capture server wrote into S3,
decides who may read each one through OpenFGA relationships, hands out
300-second presigned URLs, drives link-following crawls (a runner captures
each level), and reconciles captures whose registration failed.

Configuration comes from flags, then the shell, then .env.local, then .env
(see docs/configuration.md); an empty value counts as unset.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// The executing command's flags (its own plus the inherited
		// persistent ones) are the top layer of the configuration.
		PersistentPreRun: func(cmd *cobra.Command, _ []string) { f.Flags = cmd.Flags() },
	}
	root.SetUsageTemplate(root.UsageTemplate() + "\n" + cmdutil.ExitStatusHelp + "\n")
	f.Flags = root.PersistentFlags()
	config.BindFlags(f.Flags, "DATABASE_URL")
	root.PersistentFlags().BoolVar(&f.JSONErrors, "json-errors", false, "print errors on stderr as one JSON object")
	root.PersistentFlags().BoolVarP(&f.Verbose, "verbose", "v", false, "say on stderr which env files were read (names only)")
	root.AddCommand(
		version.NewCmdVersion(f),
		migrate.NewCmdMigrate(f),
		dev.NewCmdDev(f),
		fga.NewCmdFGA(f),
		reconcile.NewCmdReconcile(f),
		serve.NewCmdServe(f),
		drain.NewCmdDrain(f),
		archives.NewCmdArchives(f),
		capture.NewCmdCapture(f),
		share.NewCmdShare(f),
		rules.NewCmdRules(f),
		crawl.NewCmdCrawl(f),
		crawl.NewCmdTargets(f),
		doctor.NewCmdDoctor(f),
		search.NewCmdSearch(f),
		hosts.NewCmdHosts(f),
	)
	root.CompletionOptions.HiddenDefaultCmd = false
	// The completion command is built now rather than at Execute, so that
	// refuseUnknownSubcommands sees it too; it takes its output stream when
	// built, so the streams are set first.
	root.SetOut(f.Streams.Out)
	root.SetErr(f.Streams.Err)
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c != root {
		c.Example = "  ledgerctl completion bash > /etc/bash_completion.d/ledgerctl\n  ledgerctl completion zsh > \"${fpath[1]}/_ledgerctl\"\n  ledgerctl completion fish > ~/.config/fish/completions/ledgerctl.fish"
	}
	// Usage errors are marked where cobra makes them, never recognised by
	// their text: bad flags through the flag-error hook, bad arguments
	// through each command's Args, unknown commands by the groups below.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageError{Err: err} })
	refuseUnknownSubcommands(root)
	markArgErrors(root)
	return root
}

// markArgErrors makes the argument checks of c and every command below it
// return usage errors (exit 2) in words (argsError), not cobra's
// "requires at least 1 arg(s)". A group's own check (refuseUnknownSubcommands)
// already says what is wrong and is kept as it is.
func markArgErrors(c *cobra.Command) {
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				var usage cmdutil.UsageError
				if errors.As(err, &usage) {
					return err
				}
				return argsError(cmd, args)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markArgErrors(sub)
	}
}

// argsError is the usage error for arguments a command's check refused,
// written from its Use line: the placeholders missing ("missing URL") or
// the arguments it does not take, then the usage line and its first
// example.
func argsError(cmd *cobra.Command, args []string) error {
	required, most := operands(cmd.Use)
	// The command's path without "ledgerctl": every error is already
	// printed after "ledgerctl: ".
	path := strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
	var msg string
	switch {
	case len(args) < len(required):
		missing := required[len(args):]
		for i, m := range missing {
			missing[i] = strings.TrimSuffix(m, "...")
		}
		msg = fmt.Sprintf("%s: missing %s", path, strings.Join(missing, ", "))
	case most == 0:
		msg = fmt.Sprintf("%s takes no arguments (got %q)", path, args[0])
	case most > 0 && len(args) > most:
		msg = fmt.Sprintf("%s takes at most %d argument(s), got %d: %q is one too many", path, most, len(args), args[most])
	default:
		msg = fmt.Sprintf("%s: %d argument(s) are not what it takes", path, len(args))
	}
	msg += "\nusage: " + cmd.UseLine()
	for _, line := range strings.Split(cmd.Example, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			msg += "\nfor example: " + line
			break
		}
	}
	return cmdutil.UsageError{Err: errors.New(msg)}
}

// operands reads the positional placeholders of a Use line ("capture URL...
// --org ORG [--engine browser|http]"): required are those outside brackets
// and parentheses, most is how many the line allows at all (-1: no limit,
// a placeholder ending in "..."). A placeholder is an upper-case word not
// following a flag (--org ORG names the flag's value).
func operands(use string) (required []string, most int) {
	words := strings.Fields(use)
	depth := 0
	for i, w := range words {
		if i == 0 {
			continue // the command's name
		}
		bare := strings.Trim(w, "[]()|")
		open := depth + strings.Count(w, "[") + strings.Count(w, "(")
		afterFlag := strings.HasPrefix(strings.Trim(words[i-1], "[("), "-")
		if bare != "" && bare[0] >= 'A' && bare[0] <= 'Z' && !afterFlag {
			switch {
			case most < 0:
			case strings.HasSuffix(bare, "..."):
				most = -1
			default:
				most++
			}
			if open == 0 {
				required = append(required, bare)
			}
		}
		depth = open - strings.Count(w, "]") - strings.Count(w, ")")
	}
	return required, most
}

// refuseUnknownSubcommands makes every command group (one with subcommands
// and nothing to run itself), the root included, refuse an argument that
// names no subcommand: a usage error (exit 2) with cobra's "did you mean"
// suggestions, instead of printing help and exiting 0. Without arguments a
// group still prints its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	if c.HasSubCommands() && !c.Runnable() {
		c.Args = cobra.ArbitraryArgs
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2 // cobra's default, which it applies only to the root
		}
		c.RunE = func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return cmdutil.Usagef("%s (see %s --help)", msg, cmd.CommandPath())
		}
	}
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
}
