package crawl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
)

// newCmdCrawlWhy is `ledgerctl crawl why`; newCmdCrawl adds it to the
// crawl command.
func newCmdCrawlWhy(opts *CrawlOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "why CRAWL_ID URL",
		Short: "What a crawl did with one URL, and why it was or was not captured",
		Long: `Says what the crawl did with URL (as the crawl keys its pages: the scheme and
host lower-cased, a default port and the fragment dropped): captured (and its
archive, or the page whose redirect ended there); queued and still waiting;
failed, with the reason; not fetched because robots.txt disallows it; queued
but not captured because the crawl ended first (stopped, failed, or at a
limit); kept out by a rule (which one) or by no rule matching it; or never
reached although the rules would take it (no page the crawl followed linked to
it within its depth and page budget). The same answer as
GET /api/crawls/{id}/why?url=; --json prints it, its "verdict" one of
captured, pending, failed, skipped, notCaptured, ruledOut, notReached.`,
		Example: "  ledgerctl crawl why 3f0c… https://www.example.com/about --as alice --org acme\n  ledgerctl crawl why 3f0c… https://www.example.com/about --as alice --org acme --json",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := opts.caller()
			if err != nil {
				return err
			}
			u, err := politeness.ParseWhyURL(args[1])
			if err != nil {
				return cmdutil.Usagef("URL: %s", strings.TrimPrefix(err.Error(), politeness.FieldURL+" "))
			}
			svc, err := opts.service(cmd.Context())
			if err != nil {
				return err
			}
			st, ok := svc.Store.(politeness.WhyStore)
			if !ok {
				return errors.New("this crawl store keeps no pages")
			}
			w, err := (&politeness.WhyService{Crawls: svc, Store: st}).Why(cmd.Context(), c, args[0], u)
			if err != nil {
				return Error(err, opts.JSON, NoCrawl(c, args[0]))
			}
			if opts.JSON {
				return opts.print(w)
			}
			fmt.Fprintln(opts.f.Streams.Out, whySentence(w))
			return nil
		},
	}
}

// whySentence says Why in words: the URL, then what became of it.
func whySentence(w politeness.Why) string {
	page := w.Page
	ended := "the crawl ended (" + w.State
	if w.StopReason != nil {
		ended += ", " + *w.StopReason
	}
	ended += ")"
	if w.StopReason != nil && *w.StopReason == "stopped" {
		ended = "the crawl was stopped"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", cmdutil.Printable(w.URL))
	switch w.Verdict {
	case politeness.VerdictCaptured:
		b.WriteString("captured")
		if page.ArchiveID != nil {
			fmt.Fprintf(&b, ", archive %s", *page.ArchiveID)
		}
		if page.FinalURL != nil && page.URL != w.URL {
			fmt.Fprintf(&b, ": the capture of %s was redirected here", cmdutil.Printable(page.URL))
		}
		fmt.Fprintf(&b, " (depth %d; %s)", page.Depth, decidedBy(page.DecidedBy))
	case politeness.VerdictFailed:
		reason := "no reason recorded"
		if page.Reason != nil {
			reason = *page.Reason
		}
		fmt.Fprintf(&b, "not captured: its capture failed: %s (depth %d; %s)", cmdutil.Printable(reason), page.Depth, decidedBy(page.DecidedBy))
	case politeness.VerdictSkipped:
		reason := "robots.txt disallows it"
		if page.Reason != nil && *page.Reason != "robots" {
			reason = cmdutil.Printable(*page.Reason)
		}
		fmt.Fprintf(&b, "not captured: not fetched, %s (depth %d)", reason, page.Depth)
	case politeness.VerdictPending:
		fmt.Fprintf(&b, "not captured yet: queued at depth %d (%s); the crawl is running", page.Depth, decidedBy(page.DecidedBy))
	case politeness.VerdictNotCaptured:
		fmt.Fprintf(&b, "not captured: queued at depth %d (%s), and %s before its capture", page.Depth, decidedBy(page.DecidedBy), ended)
	case politeness.VerdictRuledOut:
		fmt.Fprintf(&b, "not captured: %s", decidedBy(w.Rules))
	default:
		fmt.Fprintf(&b, "not captured: %s would take it, but no page the crawl followed linked to it within depth %d and %d pages", decidedBy(w.Rules), w.MaxDepth, w.MaxPages)
		if w.State == "running" {
			b.WriteString(" so far; the crawl is running")
		} else {
			fmt.Fprintf(&b, "; %s", ended)
		}
	}
	return b.String()
}

// decidedBy names what put a URL in the crawl or kept it out.
func decidedBy(d politeness.DecidedBy) string {
	switch {
	case d.Kind == "seed":
		return "a seed of the crawl"
	case d.Kind == "robots":
		return "robots.txt disallows it"
	case d.Rule == 0:
		return "no rule of the crawl matches it (a link no rule matches is skipped)"
	}
	return fmt.Sprintf("rule %d (%s %s)", d.Rule, d.Action, cmdutil.Printable(d.Pattern))
}
