package politeness

import (
	"context"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// ProgressStore reads a crawl's progress host by host and level by level;
// *postgres.Store implements it.
type ProgressStore interface {
	RunnerProgress(ctx context.Context, crawlID string) ([]ledger.HostProgress, error)
	CrawlLevels(ctx context.Context, crawlID string) ([]ledger.LevelProgress, []ledger.FailureCount, error)
}

// Progress is a crawl's state, its levels and its hosts over the whole
// crawl (what `ledgerctl crawl run` and `crawl status --watch` draw). Depth
// is the deepest level so far.
type Progress struct {
	CrawlID         string         `json:"crawlId"`
	State           string         `json:"state"`
	StopReason      *string        `json:"stopReason"`
	Error           *string        `json:"error"`
	PagesCaptured   int            `json:"pagesCaptured"`
	PagesDiscovered int            `json:"pagesDiscovered"`
	Depth           int            `json:"depth"`
	Hosts           []HostProgress `json:"hosts"`
	// Levels is every level of the crawl so far, its pages by state;
	// Failures the reasons pages failed for, commonest first.
	Levels   []LevelProgress `json:"levels"`
	Failures []Failure       `json:"failures"`
	View     crawl.CrawlView `json:"-"`
}

// LevelProgress is one level of the crawl.
type LevelProgress struct {
	Depth    int `json:"depth"`
	Captured int `json:"captured"`
	Failed   int `json:"failed"`
	Skipped  int `json:"skipped"`
	Pending  int `json:"pending"`
}

// Failure is a reason pages failed for, and how many.
type Failure struct {
	Reason string `json:"reason"`
	Pages  int    `json:"pages"`
}

// HostProgress is one host of the crawl: its pages at every level by
// state. A page whose capture the runner kept counts as its result before
// the level is reported.
type HostProgress struct {
	Host     string `json:"host"`
	Captured int    `json:"captured"`
	Failed   int    `json:"failed"`
	Skipped  int    `json:"skipped"`
	Pending  int    `json:"pending"`
	// DelayMs and DelaySource are the runner's delay for the host at the
	// deepest level it paced the host at (nil before it reached the host,
	// or for the Windmill flow); BackoffMs is the longest 429/503 back-off
	// there (0 when none).
	DelayMs     *int    `json:"delayMs"`
	DelaySource *string `json:"delaySource"`
	BackoffMs   int     `json:"backoffMs"`
	Robots      *string `json:"robots"`
}

// ProgressService reads progress for a caller, gated like the crawl.
type ProgressService struct {
	Crawls CrawlReader
	Store  ProgressStore
}

// Progress returns the crawl's progress for the caller.
func (p *ProgressService) Progress(ctx context.Context, c crawl.Caller, crawlID string) (Progress, error) {
	v, err := p.Crawls.Get(ctx, c, crawlID)
	if err != nil {
		return Progress{}, err
	}
	rows, err := p.Store.RunnerProgress(ctx, v.CrawlID)
	if err != nil {
		return Progress{}, err
	}
	out := Progress{CrawlID: v.CrawlID, State: v.State, StopReason: v.StopReason, Error: v.Error,
		PagesCaptured: v.PagesCaptured, PagesDiscovered: v.PagesDiscovered, Hosts: make([]HostProgress, len(rows)), View: v}
	for i, r := range rows {
		out.Depth = max(out.Depth, r.Depth)
		h := HostProgress{Host: r.Host, Captured: r.Captured, Failed: r.Failed, Skipped: r.Skipped, Pending: r.Pending,
			DelayMs: r.DelayMs, DelaySource: r.DelaySource, Robots: r.Robots}
		if r.BackoffMs != nil {
			h.BackoffMs = *r.BackoffMs
		}
		out.Hosts[i] = h
	}
	levels, failures, err := p.Store.CrawlLevels(ctx, v.CrawlID)
	if err != nil {
		return Progress{}, err
	}
	out.Levels, out.Failures = make([]LevelProgress, len(levels)), make([]Failure, len(failures))
	for i, l := range levels {
		out.Levels[i] = LevelProgress{Depth: l.Depth, Captured: l.Captured, Failed: l.Failed, Skipped: l.Skipped, Pending: l.Pending}
	}
	for i, f := range failures {
		out.Failures[i] = Failure{Reason: f.Reason, Pages: f.Pages}
	}
	return out, nil
}
