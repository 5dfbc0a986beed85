package crawl

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
)

func newCmdCrawlStop(opts *CrawlOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "stop CRAWL_ID",
		Short: "Stop a running crawl: no new page starts, the archives already admitted stay",
		Long: `Stop a running crawl for a person who may start crawls for its
organization (can_submit on it, claimed with --org). The crawl ends
succeeded with the stop reason "stopped". The archives of the levels
already admitted stay, and so do those of every capture of the current
level that began before the stop: captures are registered as they land,
the stop registers those still waiting, and a capture in flight at the
stop runs to its end and is registered then. The level itself is not
admitted and its links are not followed. Stopping a crawl that has ended
changes nothing and exits 0 (with --json, "stopped": false).`,
		Example: "  ledgerctl crawl stop 3f0c… --as alice --org acme",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			res, err := svc.Stop(cmd.Context(), c, args[0])
			if err != nil {
				return Error(err, opts.JSON, noStop(c, args[0]))
			}
			if opts.JSON {
				return opts.print(res)
			}
			lang := opts.f.Lang()
			if res.Stopped {
				fmt.Fprintln(opts.f.Streams.Out, words.Say(lang, "stopped", args[0]))
				return nil
			}
			state := say(lang, "state", res.State)
			if res.StopReason != nil {
				state = words.Say(lang, "stateBecause", state, say(lang, "stop", *res.StopReason))
			}
			fmt.Fprintln(opts.f.Streams.Out, words.Say(lang, "alreadyEnded", args[0], state))
			return nil
		},
	}
}

// noStop is the message of a crawl the caller may not stop or that is
// absent (the same answer for both).
func noStop(c crawl.Caller, id string) string {
	return fmt.Sprintf("no crawl %s that %s may stop (absent, or not a crawl of %s on which %s may submit)",
		id, c.Subject, orgList(c.Orgs), c.Subject)
}
