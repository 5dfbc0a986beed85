package crawl

import (
	"errors"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// newCmdCrawlPoliteness is `ledgerctl crawl politeness`; newCmdCrawl adds
// it to the crawl command.
func newCmdCrawlPoliteness(opts *CrawlOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "politeness CRAWL_ID",
		Short: "Prove a crawl was polite: per host, the gaps between captures and the delay they were held to",
		Long: `Per host of the crawl: the captures, the gaps between one capture's end and
the next one's start (min and median, in ms), overlaps (a capture that started
before the previous one ended) and short gaps (sooner than the delay), both of
which must be 0; the delay and where it came from (setting: perHostDelayMs;
crawl-delay: robots.txt's, longer; cap: a Crawl-delay cut to
CAPTURE_LEDGER_CRAWL_DELAY_MAX_MS), the back-offs a 429 or 503 caused, and
what robots.txt said (fetched, absent, unreachable, unparsable; unknown for a
crawl the Windmill flow ran). The same report as GET /api/crawls/{id}/politeness.
Exits 1 when any host had an overlap or a short gap.`,
		Example: "  ledgerctl crawl politeness 3f0c… --as alice --org acme\n  ledgerctl crawl politeness 3f0c… --as alice --org acme --json",
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
			st, ok := svc.Store.(politeness.Store)
			if !ok {
				return errors.New("this crawl store keeps no pacing evidence")
			}
			rep, err := (&politeness.Service{Crawls: svc, Store: st}).Report(cmd.Context(), c, args[0])
			if err != nil {
				return Error(err, opts.JSON, NoCrawl(c, args[0]))
			}
			if opts.JSON {
				if err := opts.print(rep); err != nil {
					return err
				}
			} else {
				printPoliteness(opts, rep)
			}
			if !rep.OK {
				lang := opts.f.Lang()
				if opts.JSON {
					lang = i18n.English
				}
				return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: errors.New(words.Say(lang, "notPolite", rep.CrawlID))}
			}
			return nil
		},
	}
}

func printPoliteness(opts *CrawlOptions, rep politeness.Report) {
	lang := opts.f.Lang()
	ms := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatFloat(*p, 'f', 1, 64)
	}
	rows := make([][]string, len(rep.Hosts))
	for i, h := range rep.Hosts {
		delay := words.Say(lang, "delay", h.DelayMs, say(lang, "source", h.DelaySource))
		if h.DelaySource == "cap" && h.CrawlDelayMs != nil {
			delay = words.Say(lang, "delayCapped", h.DelayMs, *h.CrawlDelayMs)
		}
		backoff := "-"
		if h.Backoff != nil {
			backoff = words.Say(lang, "backoffs", h.Backoff.Count, h.Backoff.MaxMs)
		}
		robots := say(lang, "robots", h.Robots.Outcome)
		if h.Robots.Status != nil {
			robots += " " + strconv.Itoa(*h.Robots.Status)
		}
		if h.Robots.Skipped > 0 {
			robots += words.Say(lang, "keptOut", h.Robots.Skipped)
		}
		rows[i] = []string{h.Host, strconv.Itoa(h.Captures), strconv.Itoa(h.Gaps), ms(h.MinGapMs), ms(h.MedianGapMs),
			strconv.Itoa(h.Overlaps), strconv.Itoa(h.ShortGaps), delay, backoff, robots}
	}
	ui.New(opts.f.Streams.Out).Table(columns(lang, "colHost", "colCaptures", "colGaps", "colMinMs", "colMedianMs", "colOverlaps", "colShort", "colDelay", "colBackoff", "colRobots"), rows)
}
