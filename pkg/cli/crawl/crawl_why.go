package crawl

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
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
			fmt.Fprintln(opts.f.Streams.Out, whySentence(w, opts.f.Lang()))
			return nil
		},
	}
}

// whySentence says Why in words, in lang: the URL, then what became of
// it.
func whySentence(w politeness.Why, lang i18n.Lang) string {
	page := w.Page
	say1 := func(key string, args ...any) string { return words.Say(lang, key, args...) }
	ended := say1("ended", say(lang, "state", w.State))
	if w.StopReason != nil {
		ended = say1("endedBecause", say(lang, "state", w.State), say(lang, "stop", *w.StopReason))
	}
	if w.StopReason != nil && *w.StopReason == "stopped" {
		ended = say1("wasStopped")
	}
	var b strings.Builder
	b.WriteString(say1("whyURL", cmdutil.Printable(w.URL)))
	switch w.Verdict {
	case politeness.VerdictCaptured:
		b.WriteString(say1("whyCaptured"))
		if page.ArchiveID != nil {
			b.WriteString(say1("whyArchive", *page.ArchiveID))
		}
		if page.FinalURL != nil && page.URL != w.URL {
			b.WriteString(say1("whyRedirected", cmdutil.Printable(page.URL)))
		}
		b.WriteString(say1("whyDepthBy", page.Depth, decidedBy(page.DecidedBy, lang)))
	case politeness.VerdictFailed:
		reason := say1("noReasonRecorded")
		if page.Reason != nil {
			reason = *page.Reason
		}
		b.WriteString(say1("whyFailed", cmdutil.Printable(reason), page.Depth, decidedBy(page.DecidedBy, lang)))
	case politeness.VerdictSkipped:
		reason := say1("robotsDisallow")
		if page.Reason != nil && *page.Reason != "robots" {
			reason = cmdutil.Printable(*page.Reason)
		}
		b.WriteString(say1("whySkipped", reason, page.Depth))
	case politeness.VerdictPending:
		b.WriteString(say1("whyPending", page.Depth, decidedBy(page.DecidedBy, lang)))
	case politeness.VerdictNotCaptured:
		b.WriteString(say1("whyNotCaptured", page.Depth, decidedBy(page.DecidedBy, lang), ended))
	case politeness.VerdictRuledOut:
		b.WriteString(say1("whyRuledOut", decidedBy(w.Rules, lang)))
	default:
		b.WriteString(say1("whyNotReached", decidedBy(w.Rules, lang), w.MaxDepth, w.MaxPages))
		if w.State == "running" {
			b.WriteString(say1("soFarRunning"))
		} else {
			b.WriteString(say1("thenEnded", ended))
		}
	}
	return b.String()
}

// decidedBy names, in lang, what put a URL in the crawl or kept it out.
func decidedBy(d politeness.DecidedBy, lang i18n.Lang) string {
	switch {
	case d.Kind == "seed":
		return words.Say(lang, "bySeed")
	case d.Kind == "robots":
		return words.Say(lang, "robotsDisallow")
	case d.Rule == 0:
		return words.Say(lang, "byNoRule")
	}
	return words.Say(lang, "byRule", d.Rule, say(lang, "action", string(d.Action)), cmdutil.Printable(d.Pattern))
}
