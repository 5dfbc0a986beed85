package politeness

import (
	"context"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// WhyStore reads the pages of a crawl that are url, or whose capture ended
// at url after redirects; *postgres.Store implements it.
type WhyStore interface {
	CrawlPagesOf(ctx context.Context, crawlID, url string) ([]ledger.CrawlPageRow, error)
}

// What a crawl did with one URL (Why.Verdict).
const (
	// A page of the URL (or one that ended at it after redirects) was
	// captured.
	VerdictCaptured = "captured"
	// Its capture failed (Page.Reason says why).
	VerdictFailed = "failed"
	// It was not fetched: robots.txt disallowed it.
	VerdictSkipped = "skipped"
	// It waits for its capture in a running crawl.
	VerdictPending = "pending"
	// It was queued, and the crawl ended (stopped, failed, or closed at a
	// limit) before capturing it.
	VerdictNotCaptured = "notCaptured"
	// It is not a page of the crawl, and the crawl's rules would skip it
	// (Rules says which rule, or that none matches).
	VerdictRuledOut = "ruledOut"
	// It is not a page of the crawl although its rules would take it: no
	// page the crawl followed linked to it within its depth and page
	// budget (StopReason says how the crawl ended).
	VerdictNotReached = "notReached"
)

// Why is what a crawl did with one URL, and why (GET
// /api/crawls/{id}/why?url=, `ledgerctl crawl why`).
type Why struct {
	CrawlID string `json:"crawlId"`
	// URL is the URL asked about, normalised as the crawl keys its pages.
	URL     string `json:"url"`
	Verdict string `json:"verdict"`
	// Page is the page the verdict speaks of (a captured one when any
	// is; else the URL's own page, else one that ended at it), null when
	// the URL is not a page of the crawl.
	Page *Page `json:"page"`
	// Pages are the crawl's page of the URL and the pages whose capture
	// ended at it after redirects, in the order they joined the crawl
	// (empty when none).
	Pages []Page `json:"pages"`
	// Rules is what the crawl's seeds and pinned rules decide for the URL
	// as a link: kind seed, or kind rule with the first rule that matches
	// (rule 0: none matches, and a link no rule matches is skipped).
	Rules DecidedBy `json:"rules"`
	// The crawl's state, how it ended, and its limits.
	State      string  `json:"state"`
	StopReason *string `json:"stopReason"`
	MaxDepth   int     `json:"maxDepth"`
	MaxPages   int     `json:"maxPages"`
}

// WhyService answers what a crawl did with one URL, gated like the crawl.
type WhyService struct {
	Crawls CrawlReader
	Store  WhyStore
}

// FieldURL names the URL asked about in a refusal.
const FieldURL = "url"

// ParseWhyURL checks the URL asked about before anything is read: text the
// ledger can hold, an absolute http(s) URL (a *ledger.FieldError naming
// FieldURL otherwise).
func ParseWhyURL(raw string) (rules.URL, error) {
	if reason := ledger.TextProblem(raw); reason != "" {
		return rules.URL{}, &ledger.FieldError{Field: FieldURL, Reason: reason}
	}
	u, err := rules.ParseURL(raw)
	if err != nil {
		return rules.URL{}, &ledger.FieldError{Field: FieldURL, Reason: err.Error(), Err: err}
	}
	return u, nil
}

// Why says what crawl crawlID did with u (ParseWhyURL's).
func (w *WhyService) Why(ctx context.Context, c crawl.Caller, crawlID string, u rules.URL) (Why, error) {
	v, err := w.Crawls.Get(ctx, c, crawlID)
	if err != nil {
		return Why{}, err
	}
	rows, err := w.Store.CrawlPagesOf(ctx, v.CrawlID, u.Normalized)
	if err != nil {
		return Why{}, err
	}
	pin := pinnedRules(v)
	out := Why{CrawlID: v.CrawlID, URL: u.Normalized, Pages: make([]Page, 0, len(rows)), Rules: pin.rule(u),
		State: v.State, StopReason: v.StopReason, MaxDepth: v.MaxDepth, MaxPages: v.MaxPages}
	for _, s := range v.Seeds {
		if su, err := rules.ParseURL(s); err == nil && su == u {
			out.Rules = DecidedBy{Kind: "seed"}
		}
	}
	for _, r := range rows {
		out.Pages = append(out.Pages, pin.page(r))
	}
	out.Verdict, out.Page = verdict(u, out.Pages, out.Rules, v.State == crawl.StateRunning)
	return out, nil
}

// verdict is the one word for what became of u, and the page it speaks
// of: captured when any of its pages was; otherwise the state of its own
// page (or, with none, of a page that ended at it); with no page, whether
// the rules would take it.
func verdict(u rules.URL, pages []Page, r DecidedBy, running bool) (string, *Page) {
	var page *Page
	for i := range pages {
		p := &pages[i]
		if p.State == "captured" {
			return VerdictCaptured, p
		}
		if page == nil || p.URL == u.Normalized {
			page = p
		}
	}
	switch {
	case page != nil && page.State == "failed":
		return VerdictFailed, page
	case page != nil && page.State == "skipped":
		return VerdictSkipped, page
	case page != nil && running:
		return VerdictPending, page
	case page != nil:
		return VerdictNotCaptured, page
	case r.Kind == "rule" && (r.Rule == 0 || r.Action == rules.Skip):
		return VerdictRuledOut, nil
	}
	return VerdictNotReached, nil
}
