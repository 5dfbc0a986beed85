package politeness

import (
	"context"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// PagesStore reads a crawl's pages one page of rows at a time;
// *postgres.Store implements it.
type PagesStore interface {
	CrawlPageRows(ctx context.Context, crawlID string, after int64, limit int, state string) ([]ledger.CrawlPageRow, error)
}

// PagesService answers GET /api/crawls/{id}/pages (the console's pages
// table), gated like the crawl.
type PagesService struct {
	Crawls CrawlReader
	Store  PagesStore
}

// Bounds of one page of the pages table.
const (
	DefaultPageRows = 100
	MaxPageRows     = 500
)

// Page is one row of the pages table: a page of the crawl, its state, what
// decided it, and the archive its capture became.
type Page struct {
	ID    int64  `json:"id"`
	URL   string `json:"url"`
	Depth int    `json:"depth"`
	Host  string `json:"host"`
	// State is pending, captured, failed or skipped (a result the runner
	// kept counts before its level is reported).
	State string `json:"state"`
	// Reason says why a page failed or was skipped, as reported.
	Reason      *string    `json:"reason"`
	DecidedBy   DecidedBy  `json:"decidedBy"`
	ArchiveID   *string    `json:"archiveId"`
	SubmittedAt *time.Time `json:"submittedAt"`
	FinishedAt  *time.Time `json:"finishedAt"`
	// FinalURL is where the capture ended after redirects, when that is
	// another URL (absent otherwise).
	FinalURL *string `json:"finalUrl,omitempty"`
}

// DecidedBy is what put a page in the crawl or kept it out: Kind seed (a
// seed of the crawl), rule (the first of the crawl's pinned rules that
// matches the URL: Rule, Action, Pattern) or robots (robots.txt disallowed
// it; it was not fetched).
type DecidedBy struct {
	Kind    string       `json:"kind"`
	Rule    int          `json:"rule,omitempty"`
	Action  rules.Action `json:"action,omitempty"`
	Pattern string       `json:"pattern,omitempty"`
}

// Pages is one page of the table; Next is the after of the following one
// (nil on the last).
type Pages struct {
	CrawlID string `json:"crawlId"`
	Pages   []Page `json:"pages"`
	Next    *int64 `json:"next"`
}

// PageStates are the states a page of the pages table is in (Page.State),
// by which the table may be narrowed.
var PageStates = []string{"pending", "captured", "failed", "skipped"}

// Pages returns up to limit pages of the crawl after the row id after
// (0: from the start), in the order they joined the crawl; with state (one
// of PageStates), only the pages in that state.
func (p *PagesService) Pages(ctx context.Context, c crawl.Caller, crawlID string, after int64, limit int, state string) (Pages, error) {
	if limit <= 0 || limit > MaxPageRows {
		limit = DefaultPageRows
	}
	v, err := p.Crawls.Get(ctx, c, crawlID)
	if err != nil {
		return Pages{}, err
	}
	rows, err := p.Store.CrawlPageRows(ctx, v.CrawlID, after, limit+1, state)
	if err != nil {
		return Pages{}, err
	}
	out := Pages{CrawlID: v.CrawlID, Pages: make([]Page, 0, min(len(rows), limit))}
	if len(rows) > limit {
		rows = rows[:limit]
		next := rows[len(rows)-1].ID
		out.Next = &next
	}
	pin := pinnedRules(v)
	for _, r := range rows {
		out.Pages = append(out.Pages, pin.page(r))
	}
	return out, nil
}

// pinned is a crawl's seeds and pinned rules, as they decide its links.
type pinned struct {
	set *rules.Set
	err error
}

func pinnedRules(v crawl.CrawlView) pinned {
	var seeds []rules.URL
	for _, s := range v.Seeds {
		if u, err := rules.ParseURL(s); err == nil {
			seeds = append(seeds, u)
		}
	}
	set, err := rules.NewSet(v.Rules, seeds)
	return pinned{set, err}
}

// rule is what the first pinned rule that matches u decides (Rule 0: none
// matches, and the link is skipped).
func (p pinned) rule(u rules.URL) DecidedBy {
	out := DecidedBy{Kind: "rule"}
	if p.err != nil {
		return out
	}
	d := p.set.Decide(u)
	out.Rule, out.Action = d.Rule, d.Action
	if d.Rule > 0 {
		out.Pattern = p.set.Rules()[d.Rule-1].Pattern
	}
	return out
}

// page is a row of the pages table with what decided it.
func (p pinned) page(r ledger.CrawlPageRow) Page {
	pg := Page{ID: r.ID, URL: r.URL, Depth: r.Depth, Host: r.Host, State: r.State, Reason: r.Reason, ArchiveID: r.ArchiveID,
		SubmittedAt: utc(r.SubmittedAt), FinishedAt: utc(r.FinishedAt)}
	if r.FinalURL != nil && *r.FinalURL != r.URL {
		pg.FinalURL = r.FinalURL
	}
	switch {
	case r.State == "skipped" && r.Reason != nil && *r.Reason == "robots":
		pg.DecidedBy = DecidedBy{Kind: "robots"}
	case r.Depth == 0:
		pg.DecidedBy = DecidedBy{Kind: "seed"}
	default:
		pg.DecidedBy = DecidedBy{Kind: "rule"}
		if u, err := rules.ParseURL(r.URL); err == nil {
			pg.DecidedBy = p.rule(u)
		}
	}
	return pg
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
