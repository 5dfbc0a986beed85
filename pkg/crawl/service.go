package crawl

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Store is what the crawl operations need from the database; *postgres.Store
// implements it.
type Store interface {
	EnabledTargetURLs(ctx context.Context, org string, limit int) ([]string, error)
	InsertCrawl(ctx context.Context, c ledger.NewCrawl) (string, []ledger.PageRef, error)
	Crawl(ctx context.Context, id string) (ledger.Crawl, error)
	CrawlFailures(ctx context.Context, id string, limit int) ([]ledger.CrawlFailure, error)
	ListCrawls(ctx context.Context, scope ledger.CrawlScope, state string, cursor *ledger.CrawlCursor, limit int) ([]ledger.CrawlRow, error)
	// FailCrawl and CloseStalledCrawls close running crawls as failed; in
	// the same transaction, each registers the captures its runner kept
	// and the plan of keep (Service.keep) for them.
	FailCrawl(ctx context.Context, id, reason string, now time.Time, keep ledger.KeepCaptured) (closed bool, registered int, err error)
	CloseStalledCrawls(ctx context.Context, before time.Time, reason string, now time.Time, keep ledger.KeepCaptured) ([]string, error)
	RecordCrawlJob(ctx context.Context, id, jobID string, depth int) error
	CrawlDecisions(ctx context.Context, id string) ([]ledger.DecisionRecord, error)
	CrawlRobots(ctx context.Context, id string, samples int) ([]ledger.RobotsRecord, error)
	DecisionsByDomain(ctx context.Context, scope ledger.CrawlScope, domain string, since time.Time, action string, limit int) ([]ledger.DomainDecision, error)
	CrawlLevel(ctx context.Context, id string, depth int) (*ledger.LevelRecord, error)
	PagesAtDepth(ctx context.Context, id string, depth int) ([]ledger.PageRef, error)
	HostsLastFinished(ctx context.Context, id string, hosts []string) (map[string]time.Time, error)
	ApplyLevel(ctx context.Context, crawlID string, depth int, urls []string, decide func(ledger.LevelState) (*ledger.LevelPlan, error)) (ledger.LevelApplied, error)
	AdmitCaptured(ctx context.Context, crawlID string, depth int, urls []string, decide func(ledger.LevelState) (*ledger.LevelPlan, error)) (ledger.LevelApplied, error)
}

// TargetStore is what the capture-target commands need; *postgres.Store
// implements it.
type TargetStore interface {
	UpsertTargets(ctx context.Context, org string, urls, labels []string) ([]ledger.TargetUpsert, error)
	ListTargets(ctx context.Context, org string) ([]ledger.Target, error)
	SetTargetEnabled(ctx context.Context, org string, id int64, enabled bool) (ledger.Target, error)
	DeleteTarget(ctx context.Context, org string, id int64) error
}

// Objects reads objects from S3; a missing object is ledger.ErrNoObject.
type Objects interface {
	Get(ctx context.Context, bucket, key string) ([]byte, error)
}

// Permissions answers whether a caller may start crawls: can_submit on any
// of their organizations (OpenFGA, HIGHER_CONSISTENCY, no contextual
// tuples). The crawl routes are gated by it.
type Permissions interface {
	MaySubmit(ctx context.Context, subject string, orgs []string) (bool, error)
}

// Dispatcher runs one level of a crawl: the Windmill webhook
// (windmill.Dispatcher) or an embedded runner. Dispatch returns once the
// level is handed over, with the runner's job id when it has one ("" when
// not). An error means the level will not run; the crawl is then closed
// failed with the error's text as its reason, so the text must not carry
// secrets.
type Dispatcher interface {
	Dispatch(ctx context.Context, level Level) (jobID string, err error)
}

// Level is one level of a crawl, as handed to the runner.
type Level struct {
	CrawlID string
	// Depth of the pages in Frontier (the seeds are depth 0).
	Depth    int
	MaxDepth int
	OrgID    string
	// Frontier is never empty.
	Frontier        []FrontierPage
	PerHostDelayMs  int
	HostParallelism int
	// CaptureFormats are the deployment's formats, with Links forced on
	// when this level's pages will be followed (MaxDepth > Depth).
	CaptureFormats Formats
	Signing        bool
}

// FrontierPage is one page of a level to capture. LastFinishedAt is when
// the crawl last finished a page on Host (nil when never), so the runner
// can keep the per-host delay across levels.
type FrontierPage struct {
	URL            string     `json:"url"`
	Host           string     `json:"host"`
	LastFinishedAt *time.Time `json:"lastFinishedAt"`
}

// Formats are BrowserHive's capture formats; all six are always sent.
type Formats struct {
	PNG   bool `json:"png"`
	WebP  bool `json:"webp"`
	HTML  bool `json:"html"`
	Links bool `json:"links"`
	MHTML bool `json:"mhtml"`
	WACZ  bool `json:"wacz"`
}

// Caller is who asks: the subject and organizations of the identity.
type Caller struct {
	Subject string
	Orgs    []string
}

// Service holds the crawl operations. They are the one implementation used
// by the HTTP handlers and by the CLI; they return ledger.ErrNotFound,
// typed errors matching ErrInvalid or ErrConflict (see the package doc),
// or other (internal) errors.
type Service struct {
	Store Store
	// Objects reads from Bucket, the one bucket the ledger reads.
	Objects Objects
	Bucket  string
	// CaptureFormats are the deployment's formats by name (png, webp,
	// html, links, mhtml, wacz); Signing requests wacz-auth signatures.
	CaptureFormats map[string]bool
	Signing        bool
	Permissions    Permissions
	// Dispatcher runs levels; nil dispatches nothing.
	Dispatcher Dispatcher
	// InFlight finds, when a crawl is closed, the captures its runner
	// began and kept no result of where the capturer leaves them (a
	// runner whose process died after the capture was written); nil finds
	// none, and such a capture stays outside the ledger.
	InFlight InFlightFinder
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	Log *slog.Logger
	// FetchConcurrency bounds the S3 reads in flight while a level report
	// is read (16 when zero).
	FetchConcurrency int
	// CrawlsPerOrg bounds the crawls one organization runs at once
	// (CAPTURE_LEDGER_CRAWLS_PER_ORG; DefaultCrawlsPerOrg when zero).
	CrawlsPerOrg int
}

// DefaultCrawlsPerOrg is how many crawls one organization may run at once
// when the service is not told otherwise.
const DefaultCrawlsPerOrg = 3

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now().UTC()
	}
	return s.Now().UTC()
}

func (s *Service) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// allow is the gate of starting crawls and of the cross-crawl views: a
// caller without can_submit on any of their organizations gets
// ledger.ErrNotFound, exactly like an absent crawl.
func (s *Service) allow(ctx context.Context, c Caller) error {
	ok, err := s.maySubmit(ctx, c)
	if err != nil {
		return err
	}
	if !ok {
		return ledger.ErrNotFound
	}
	return nil
}

// maySubmit asks the permission; no organization (or no Permissions) is
// false without asking.
func (s *Service) maySubmit(ctx context.Context, c Caller) (bool, error) {
	if len(c.Orgs) == 0 || s.Permissions == nil {
		return false, nil
	}
	ok, err := s.Permissions.MaySubmit(ctx, c.Subject, c.Orgs)
	if err != nil {
		return false, fmt.Errorf("ask whether %s may submit: %w", c.Subject, err)
	}
	return ok, nil
}

// mayTouch says whether the caller may read, report to or fail a crawl of
// org requested by requestedBy: its requester may, and so may a caller
// who claims org and has can_submit on that organization (not on any
// other: docs/security.md).
func (s *Service) mayTouch(ctx context.Context, c Caller, org, requestedBy string) (bool, error) {
	if c.Subject != "" && c.Subject == requestedBy {
		return true, nil
	}
	if !slices.Contains(c.Orgs, org) {
		return false, nil
	}
	return s.maySubmit(ctx, Caller{Subject: c.Subject, Orgs: []string{org}})
}

// crawlFor reads crawl id for the caller: an absent crawl and one the
// caller may not touch are both ledger.ErrNotFound.
func (s *Service) crawlFor(ctx context.Context, c Caller, id string) (ledger.Crawl, error) {
	cr, err := s.Store.Crawl(ctx, id)
	if err != nil {
		return ledger.Crawl{}, err
	}
	ok, err := s.mayTouch(ctx, c, cr.OrgID, cr.RequestedBy)
	if err != nil {
		return ledger.Crawl{}, err
	}
	if !ok {
		return ledger.Crawl{}, ledger.ErrNotFound
	}
	return cr, nil
}

// scope is the part of the crawls a caller may see in a list: those of
// the claimed organizations on which they have can_submit, and those they
// requested.
func (s *Service) scope(ctx context.Context, c Caller) (ledger.CrawlScope, error) {
	sc := ledger.CrawlScope{Subject: c.Subject, Orgs: []string{}}
	seen := map[string]bool{}
	for _, org := range c.Orgs {
		if seen[org] {
			continue
		}
		seen[org] = true
		ok, err := s.maySubmit(ctx, Caller{Subject: c.Subject, Orgs: []string{org}})
		if err != nil {
			return ledger.CrawlScope{}, err
		}
		if ok {
			sc.Orgs = append(sc.Orgs, org)
		}
	}
	return sc, nil
}

// formats returns the capture formats of a level at depth.
func (s *Service) formats(depth, maxDepth int) Formats {
	f := Formats{
		PNG: s.CaptureFormats["png"], WebP: s.CaptureFormats["webp"], HTML: s.CaptureFormats["html"],
		Links: s.CaptureFormats["links"], MHTML: s.CaptureFormats["mhtml"], WACZ: s.CaptureFormats["wacz"],
	}
	if maxDepth > depth {
		f.Links = true
	}
	return f
}

// dispatch hands the level of pages at depth to the runner (see
// dispatchLevel); nothing when there are no pages.
func (s *Service) dispatch(ctx context.Context, c ledger.Crawl, depth int, pages []ledger.PageRef, lastFinished map[string]time.Time) {
	if s.Dispatcher == nil || len(pages) == 0 {
		return
	}
	s.dispatchLevel(ctx, s.level(c, depth, pages, lastFinished))
}

// level is the level of crawl c at depth with these pages, as a runner
// gets it: lastFinished says when the crawl last finished a capture on each
// host.
func (s *Service) level(c ledger.Crawl, depth int, pages []ledger.PageRef, lastFinished map[string]time.Time) Level {
	level := Level{
		CrawlID: c.ID, Depth: depth, MaxDepth: c.MaxDepth, OrgID: c.OrgID,
		Frontier:       make([]FrontierPage, len(pages)),
		PerHostDelayMs: c.PerHostDelayMs, HostParallelism: c.HostParallelism,
		CaptureFormats: s.formats(depth, c.MaxDepth), Signing: s.Signing,
	}
	for i, p := range pages {
		level.Frontier[i] = FrontierPage{URL: p.URL, Host: p.Host}
		if t, ok := lastFinished[p.Host]; ok {
			t := t.UTC()
			level.Frontier[i].LastFinishedAt = &t
		}
	}
	return level
}

// dispatchLevel hands a level to the Dispatcher (nothing without one). A
// failure closes the crawl failed with the reason, but only while it is
// still running; a job id is recorded. Both outlive a cancelled request.
func (s *Service) dispatchLevel(ctx context.Context, level Level) {
	if s.Dispatcher == nil || len(level.Frontier) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	id := level.CrawlID
	job, err := s.Dispatcher.Dispatch(ctx, level)
	if err != nil {
		s.log().Error("could not dispatch a crawl level; closing the crawl as failed", "crawlId", id, "depth", level.Depth, "error", err.Error())
		now := s.now()
		closed, _, ferr := s.Store.FailCrawl(ctx, id, err.Error(), now, s.keep(ctx, now))
		if ferr != nil {
			s.log().Error("could not close the crawl after a failed dispatch", "crawlId", id, "error", ferr.Error())
		} else if !closed {
			s.log().Warn("the crawl was no longer running when its dispatch failed; left as it is", "crawlId", id)
		}
		return
	}
	if job == "" {
		return
	}
	if err := s.Store.RecordCrawlJob(ctx, id, job, level.Depth); err != nil {
		s.log().Warn("could not record the crawl's job id", "crawlId", id, "jobId", job, "error", err.Error())
	}
}
