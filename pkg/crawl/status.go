package crawl

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Crawl states.
const (
	StateRunning   = "running"
	StateSucceeded = "succeeded"
	StateFailed    = "failed"
)

// Job is the runner's job of the last level dispatched.
type Job struct {
	ID    string `json:"id"`
	Depth int    `json:"depth"`
}

// Failure is a page of the crawl that failed; Reason is why, as reported.
type Failure struct {
	URL    string  `json:"url"`
	Depth  int     `json:"depth"`
	Reason *string `json:"reason"`
}

// CrawlView is GET /api/crawls/:id.
type CrawlView struct {
	CrawlID         string       `json:"crawlId"`
	Seeds           []string     `json:"seeds"`
	Rules           []rules.Rule `json:"rules"`
	OrgID           string       `json:"orgId"`
	RequestedBy     string       `json:"requestedBy"`
	State           string       `json:"state"`
	StopReason      *string      `json:"stopReason"`
	MaxDepth        int          `json:"maxDepth"`
	MaxPages        int          `json:"maxPages"`
	PerHostDelayMs  int          `json:"perHostDelayMs"`
	HostParallelism int          `json:"hostParallelism"`
	StartedAt       time.Time    `json:"startedAt"`
	FinishedAt      *time.Time   `json:"finishedAt"`
	ProgressedAt    time.Time    `json:"progressedAt"`
	PagesDiscovered int          `json:"pagesDiscovered"`
	PagesCaptured   int          `json:"pagesCaptured"`
	Error           *string      `json:"error"`
	LastJob         *Job         `json:"lastJob"`
	// Failures are the last 5 failed pages, newest first.
	Failures []Failure `json:"failures"`
	// Search is how far its archives are searchable (searchable.go).
	Search *CrawlSearch `json:"search,omitempty"`
}

// MaxFailures is how many failed pages GET /api/crawls/:id shows.
const MaxFailures = 5

func lastJob(c ledger.Crawl) *Job {
	if c.LastJobID == nil || c.LastJobDepth == nil {
		return nil
	}
	return &Job{ID: *c.LastJobID, Depth: *c.LastJobDepth}
}

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// pinnedRules reads the rule list pinned on a crawl.
func pinnedRules(c ledger.Crawl) ([]rules.Rule, error) {
	rs, err := rules.ParseJSON(c.Rules)
	if err != nil {
		return nil, fmt.Errorf("crawl %s: the pinned rules do not read back: %w", c.ID, err)
	}
	return rs, nil
}

// Get returns one crawl (GET /api/crawls/:id). A bad id is a
// *ledger.FieldError (FieldID); no such crawl, or one the caller may not touch (not its
// requester, no can_submit on its organization), is ledger.ErrNotFound.
func (s *Service) Get(ctx context.Context, c Caller, id string) (CrawlView, error) {
	if err := checkID(id); err != nil {
		return CrawlView{}, err
	}
	cr, err := s.crawlFor(ctx, c, id)
	if err != nil {
		return CrawlView{}, err
	}
	rs, err := pinnedRules(cr)
	if err != nil {
		return CrawlView{}, err
	}
	fails, err := s.Store.CrawlFailures(ctx, id, MaxFailures)
	if err != nil {
		return CrawlView{}, err
	}
	v := CrawlView{
		CrawlID: cr.ID, Seeds: cr.Seeds, Rules: rs, OrgID: cr.OrgID, RequestedBy: cr.RequestedBy,
		State: cr.State, StopReason: cr.StopReason, MaxDepth: cr.MaxDepth, MaxPages: cr.MaxPages,
		PerHostDelayMs: cr.PerHostDelayMs, HostParallelism: cr.HostParallelism,
		StartedAt: cr.StartedAt.UTC(), FinishedAt: utcPtr(cr.FinishedAt), ProgressedAt: cr.ProgressedAt.UTC(),
		PagesDiscovered: cr.PagesDiscovered, PagesCaptured: cr.PagesCaptured, Error: cr.Error,
		LastJob: lastJob(cr), Failures: make([]Failure, len(fails)),
	}
	for i, f := range fails {
		v.Failures[i] = Failure{URL: f.URL, Depth: f.Depth, Reason: f.Reason}
	}
	if err := s.searchable(ctx, &v); err != nil {
		return CrawlView{}, err
	}
	return v, nil
}

// CrawlSummary is one row of GET /api/crawls.
type CrawlSummary struct {
	CrawlID         string   `json:"crawlId"`
	State           string   `json:"state"`
	StopReason      *string  `json:"stopReason"`
	RequestedBy     string   `json:"requestedBy"`
	OrgID           string   `json:"orgId"`
	Seeds           []string `json:"seeds"`
	PagesCaptured   int      `json:"pagesCaptured"`
	PagesDiscovered int      `json:"pagesDiscovered"`
	// PagesFailed and PagesSkipped count the crawl's pages that failed and
	// that were skipped (robots.txt, rules).
	PagesFailed  int `json:"pagesFailed"`
	PagesSkipped int `json:"pagesSkipped"`
	// WaczCount is the number of archives the crawl's pages produced.
	WaczCount  int        `json:"waczCount"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
	LastJob    *Job       `json:"lastJob"`
}

// Cursor is a (startedAt, id) position in the newest-first crawl list.
type Cursor = ledger.CrawlCursor

// CrawlList is one page of GET /api/crawls. Next is where the following
// page starts, nil on the last page.
type CrawlList struct {
	Crawls []CrawlSummary `json:"crawls"`
	Next   *Cursor        `json:"-"`
}

// ListPageSize is how many crawls one page holds.
const ListPageSize = 50

// CheckState refuses a state filter other than "" (all), running,
// succeeded or failed, with a *ledger.FieldError on FieldState.
func CheckState(state string) error {
	switch state {
	case "", StateRunning, StateSucceeded, StateFailed:
		return nil
	}
	return invalid(FieldState, "must be equal to one of the allowed values (running, succeeded, failed)")
}

// List returns up to 50 crawls, newest first, strictly after cursor (GET
// /api/crawls), only those in state when it is not empty. It lists only the
// crawls the caller may touch: those of their organizations on which they
// have can_submit, and those they requested; anyone else gets an empty
// list, not an error.
func (s *Service) List(ctx context.Context, c Caller, state string, cursor *Cursor) (CrawlList, error) {
	if err := CheckState(state); err != nil {
		return CrawlList{}, err
	}
	if cursor != nil && !ledger.IsUUID(cursor.ID) {
		return CrawlList{}, invalid(FieldBeforeID, "must match format \"uuid\"")
	}
	out := CrawlList{Crawls: []CrawlSummary{}}
	scope, err := s.scope(ctx, c)
	if err != nil {
		return CrawlList{}, err
	}
	rows, err := s.Store.ListCrawls(ctx, scope, state, cursor, ListPageSize+1)
	if err != nil {
		return CrawlList{}, err
	}
	if len(rows) > ListPageSize {
		rows = rows[:ListPageSize]
		last := rows[len(rows)-1]
		out.Next = &Cursor{StartedAt: last.StartedAt, ID: last.ID}
	}
	for _, r := range rows {
		out.Crawls = append(out.Crawls, CrawlSummary{
			CrawlID: r.ID, State: r.State, StopReason: r.StopReason, RequestedBy: r.RequestedBy, OrgID: r.OrgID,
			Seeds: r.Seeds, PagesCaptured: r.PagesCaptured, PagesDiscovered: r.PagesDiscovered, WaczCount: r.WaczCount,
			PagesFailed: r.PagesFailed, PagesSkipped: r.PagesSkipped,
			StartedAt: r.StartedAt.UTC(), FinishedAt: utcPtr(r.FinishedAt), LastJob: lastJob(r.Crawl),
		})
	}
	return out, nil
}

// FailRequest is why a crawl is closed failed: the optional body of POST
// /api/crawls/:id/failed, the --reason of ledgerctl crawl fail.
type FailRequest struct {
	Reason *string `json:"reason,omitempty"`
}

// MaxFailReason is the longest reason /failed accepts, in characters.
const MaxFailReason = 2000

// DefaultFailReason is the error recorded when /failed names no reason.
const DefaultFailReason = "the flow failed without saying why"

// Validate refuses a reason of more than MaxFailReason characters, or one
// holding U+0000 or not UTF-8, with a *ledger.FieldError on FieldReason.
func (r FailRequest) Validate() error {
	if r.Reason == nil {
		return nil
	}
	if n := utf8.RuneCountInString(*r.Reason); n > MaxFailReason {
		return invalid(FieldReason, "must NOT have more than %d characters", MaxFailReason)
	}
	if p := TextProblem(*r.Reason); p != "" {
		return invalid(FieldReason, "%s", p)
	}
	return nil
}

// FailResult is the answer of /failed: whether a running crawl was closed.
type FailResult struct {
	Closed bool `json:"closed"`
}

// Fail closes a running crawl as failed with the reason the runner gives
// (POST /api/crawls/:id/failed), registering the captures its embedded
// runner kept that are not registered yet (keep), as a stop does. A crawl
// that is not running is {"closed":false}, not an error. An unknown crawl
// and one the caller may not touch are both ledger.ErrNotFound (an unknown
// id answered {"closed":false} would tell another organization's crawl from
// an absent one).
func (s *Service) Fail(ctx context.Context, c Caller, id string, req FailRequest) (FailResult, error) {
	if err := checkID(id); err != nil {
		return FailResult{}, err
	}
	if err := req.Validate(); err != nil {
		return FailResult{}, err
	}
	reason := DefaultFailReason
	if req.Reason != nil {
		reason = *req.Reason
	}
	if _, err := s.crawlFor(ctx, c, id); err != nil {
		return FailResult{}, err
	}
	return s.fail(ctx, id, reason, c.Subject)
}

// CloseFailed is Fail without the can_submit gate, for a runner inside this
// process and for operators ("" reason: the default one).
func (s *Service) CloseFailed(ctx context.Context, id, reason string) (FailResult, error) {
	if err := checkID(id); err != nil {
		return FailResult{}, err
	}
	if reason == "" {
		reason = DefaultFailReason
	}
	return s.fail(ctx, id, reason, "")
}

func (s *Service) fail(ctx context.Context, id, reason, by string) (FailResult, error) {
	now := s.now()
	closed, registered, err := s.Store.FailCrawl(ctx, id, reason, now, s.keep(ctx, now))
	if err != nil {
		return FailResult{}, err
	}
	if closed {
		s.log().Info("crawl closed as failed", "crawlId", id, "by", by, "reason", reason, "archivesRegisteredByTheClose", registered)
	}
	return FailResult{Closed: closed}, nil
}

// CloseStalled closes as failed every running crawl with no progress (no
// start, no accepted level report) for longer than timeout, so that a crawl
// whose runner died is not left running forever; each registers the
// captures its runner kept that are not registered yet (keep). It
// returns the ids it closed. It is an operator/worker action: no caller.
func (s *Service) CloseStalled(ctx context.Context, timeout time.Duration) ([]string, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("the stall timeout must be positive, not %s", timeout)
	}
	now := s.now()
	reason := fmt.Sprintf("no progress for %s: the crawl runner stopped reporting, so the crawl was closed", timeout)
	ids, err := s.Store.CloseStalledCrawls(ctx, now.Add(-timeout), reason, now, s.keep(ctx, now))
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		s.log().Warn("closed a stalled crawl as failed", "crawlId", id, "timeout", timeout.String())
	}
	if ids == nil {
		ids = []string{}
	}
	return ids, nil
}
