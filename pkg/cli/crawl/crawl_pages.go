package crawl

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// newCmdCrawlPages is `ledgerctl crawl pages`; newCmdCrawl adds it to the
// crawl command.
func newCmdCrawlPages(opts *CrawlOptions) *cobra.Command {
	var state string
	cmd := &cobra.Command{
		Use:   "pages CRAWL_ID",
		Short: "List a crawl's pages: state, what decided each, why it failed, its archive",
		Long: `Every page of the crawl in the order it joined (seeds first, then level by
level): its URL, depth, state (captured, failed, skipped, pending — "not
captured" once the crawl has ended), what put it in the crawl or kept it out
(seed, robots.txt, or the first pinned rule that matches), why it failed or
was skipped, and the archive its capture became. --state shows only the pages
in one state (captured, failed, skipped, pending). The same rows as
GET /api/crawls/{id}/pages; with --json, one page per line as that route
gives it.`,
		Example: "  ledgerctl crawl pages 3f0c… --as alice --org acme\n  ledgerctl crawl pages 3f0c… --state failed --as alice --org acme\n  ledgerctl crawl pages 3f0c… --state failed --as alice --org acme --json",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			if state != "" && !slices.Contains(politeness.PageStates, state) {
				return cmdutil.Usagef("--state must be equal to one of the allowed values (%s)", strings.Join(politeness.PageStates, ", "))
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			st, ok := svc.Store.(politeness.PagesStore)
			if !ok {
				return errors.New("this crawl store keeps no pages")
			}
			v, err := svc.Get(cmd.Context(), c, args[0])
			if err != nil {
				return Error(err, opts.JSON, NoCrawl(c, args[0]))
			}
			pages := &politeness.PagesService{Crawls: svc, Store: st}
			enc := json.NewEncoder(opts.f.Streams.Out)
			var rows [][]string
			n, lang := 0, opts.f.Lang()
			for after := int64(0); ; {
				p, err := pages.Pages(cmd.Context(), c, v.CrawlID, after, politeness.MaxPageRows, state)
				if err != nil {
					return Error(err, opts.JSON, NoCrawl(c, args[0]))
				}
				for _, pg := range p.Pages {
					n++
					if opts.JSON {
						if err := enc.Encode(pg); err != nil {
							return err
						}
						continue
					}
					rows = append(rows, pageRow(pg, v.State, lang))
				}
				if p.Next == nil {
					break
				}
				after = *p.Next
			}
			if opts.JSON {
				return nil
			}
			if n == 0 {
				fmt.Fprintln(opts.f.Streams.Out, words.Say(lang, "noPageInState"))
				return nil
			}
			ui.New(opts.f.Streams.Out).Table(columns(lang, "colURL", "colDepth", "colState", "colDecidedBy", "colReason", "colArchive"), rows)
			return nil
		},
	}
	cmd.Flags().StringVar(&state, "state", "", "only the pages in this state: captured, failed, skipped or pending")
	return cmd
}

// pageRow is a page of a crawl in crawlState as a row of the table, in
// lang; a pending page reads as pendingKey says.
func pageRow(p politeness.Page, crawlState string, lang i18n.Lang) []string {
	state := say(lang, "page", p.State)
	if p.State == "pending" {
		state = words.Say(lang, pendingKey(crawlState))
	}
	by := decidedBy(p.DecidedBy, lang)
	switch p.DecidedBy.Kind {
	case "seed":
		by = words.Say(lang, "seed")
	case "robots":
		by = "robots.txt"
	}
	reason, archive := "-", "-"
	if p.Reason != nil && *p.Reason != "robots" {
		reason = cmdutil.Printable(*p.Reason)
	}
	if p.ArchiveID != nil {
		archive = *p.ArchiveID
	}
	return []string{cmdutil.Printable(p.URL), strconv.Itoa(p.Depth), state, by, reason, archive}
}
