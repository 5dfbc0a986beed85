// Package runner is the embedded crawl runner (docs/crawling.md): it runs a
// crawl's levels inside this process, doing what the Windmill flow does for
// each level: group the frontier by host, read
// each host's robots.txt once per level, capture the pages of a host one at
// a time with the delay measured from the previous capture's end (across
// levels too), work on at most hostParallelism hosts at once, back a host
// off on 429/503, and hand the level's outcomes to
// crawl.Service.AdmitLevelOutcomes, the use-case behind the level-report
// route, in memory (the manifests and links the capturer holds are not read
// back). What to capture next and when to stop stay in pkg/crawl: the
// admission answers the next level, which the runner queues itself (a
// crawl's first level comes through Dispatch).
//
// Each page's result is kept in the database as soon as its capture ends,
// so a runner stopped mid-level (serve restarted, even killed) resumes
// with the pages that have none: no page is captured twice, none is lost.
package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Store is what the runner keeps and reads, in the centre's rows;
// *postgres.Store implements it.
type Store interface {
	RunnerOpenLevels(ctx context.Context) ([]ledger.RunnerLevel, error)
	RunnerLevelOpen(ctx context.Context, crawlID string, depth int) (bool, error)
	RunnerLock(ctx context.Context, crawlID string) (unlock func(), ok bool, err error)
	RunnerResults(ctx context.Context, crawlID string, depth int) ([]ledger.RunnerResult, error)
	// RunnerBegin records a capture's start; running is false (and nothing
	// is recorded) once the crawl was closed.
	RunnerBegin(ctx context.Context, crawlID string, depth int, url, host, taskID string, submittedAt time.Time) (running bool, err error)
	RunnerSave(ctx context.Context, crawlID string, r ledger.RunnerPageResult, now time.Time) (bool, error)
	RunnerSaveHost(ctx context.Context, h ledger.RunnerHost) error
}

// Ledger admits levels and closes crawls; *crawl.Service implements it.
// AdmitLevelOutcomes takes the level's outcomes as the runner holds them
// (no level report is encoded, nothing it holds is read back from the
// bucket) and returns the next level instead of dispatching it: the runner
// queues that level itself, so the service never calls back into the
// runner from a call the runner made.
type Ledger interface {
	AdmitLevelOutcomes(ctx context.Context, crawlID string, lo crawl.LevelOutcomes) (crawl.LevelResult, *crawl.Level, error)
	CloseFailed(ctx context.Context, id, reason string) (crawl.FailResult, error)
}

// CapturedAdmitter registers the archives of a level's captured pages
// before the level ends (*crawl.Service implements it): a Ledger that is
// one is handed the runner's captures as they land, in batches
// (Config.AdmitEvery).
type CapturedAdmitter interface {
	AdmitCaptured(ctx context.Context, crawlID string, depth int, pages []crawl.PageOutcome) (int, error)
}

// DefaultAdmitEvery is how long a captured page waits, at most, before
// its archive is registered while its level runs. 1 s and 100 ms ran the
// 500-page runner benchmark (docs/benchmarks.md) no faster than this.
const DefaultAdmitEvery = 250 * time.Millisecond

// DefaultRobotsAgent is the product token robots.txt groups are matched
// against (a group naming it wins over *).
const DefaultRobotsAgent = "ledgerctl"

// Config are the runner's settings; zero values take the defaults.
type Config struct {
	// UserAgent is sent with the robots.txt fetch (the capturer's, so the
	// site sees one crawler); RobotsAgent is the product token that picks
	// the robots.txt group (DefaultRobotsAgent when empty).
	UserAgent   string
	RobotsAgent string
	// CrawlDelayMax caps robots.txt's Crawl-delay
	// (CAPTURE_LEDGER_CRAWL_DELAY_MAX_MS).
	CrawlDelayMax time.Duration
	// BackoffMax caps the wait after a 429/503
	// (CAPTURE_LEDGER_CRAWL_BACKOFF_MAX_MS).
	BackoffMax time.Duration
	// RobotsClient fetches robots.txt; it should hold the same address
	// policy as the capturer (a default client when nil).
	RobotsClient *http.Client
	// CaptureFormats and Signing are the deployment's formats, for the
	// levels the runner resumes (Dispatch brings its own).
	CaptureFormats map[string]bool
	Signing        bool
	// Rescan is how often the runner looks for open levels no runner is
	// working on (a crawl started by another process, or left by one that
	// stopped): 15 s when zero.
	Rescan time.Duration
	// GiveUpAfter is how long the capture backend may stay unusable before
	// the crawl is closed failed: 5 minutes when zero.
	GiveUpAfter time.Duration
	// OnPage and OnLevel, when set, are told of every page result and
	// every level run (for progress displays and tests). They must not
	// block.
	OnPage  func(PageEvent)
	OnLevel func(LevelEvent)
	Log     *slog.Logger
	// Now is the wall clock (to the microsecond) when set.
	Now func() time.Time
	// Capacity, when set, is the per-organization capture capacity the
	// crawl's pages draw from, shared with the direct captures
	// (archive.CaptureQuota): each capture waits for a place of the crawl's
	// organization and holds it while it runs.
	Capacity Capacity
	// Hosts, when set, are the host leases every capture takes first,
	// shared with the direct captures and every other runner in every
	// process: at most HostAtOnce captures of a host at once, and the
	// largest delay any party keeps between one's end and the next one's
	// start (never less than HostDelay). HostLeaseTTL is how long the lease
	// of a process that died holding it lasts (30 s when zero).
	Hosts        ledger.HostLeases
	HostAtOnce   int
	HostDelay    time.Duration
	HostLeaseTTL time.Duration
	// AdmitEvery is how long a page's capture may wait before its archive
	// is registered while its level still runs (the captures of that time
	// go in one transaction; the level's admission still closes the pages
	// and decides their links): DefaultAdmitEvery when zero; negative
	// registers archives only when their level ends.
	AdmitEvery time.Duration
	// Levels is how many levels (of as many crawls) this runner runs at
	// once: DefaultLevels when zero. When more wait, the next one is of
	// the organization with the fewest levels running here.
	Levels int
}

// DefaultLevels is how many crawl levels one runner runs at once unless
// told otherwise.
const DefaultLevels = 8

// Capacity hands out places to capture for an organization, waiting for
// one; release gives it back.
type Capacity interface {
	Acquire(ctx context.Context, org string) (release func(), err error)
}

// PageEvent is one page's result as it is kept.
type PageEvent struct {
	CrawlID string
	Depth   int
	Host    string
	Result  crawl.PageReport
	// Attempts is how many captures the page took (0: not captured).
	Attempts int
	// Delay is the host's delay when the page was taken.
	Delay time.Duration
}

// LevelEvent is a level the runner ran.
type LevelEvent struct {
	CrawlID string
	Depth   int
	Pages   int
	// Result is the level's answer when it was admitted; Err why the level
	// ended without one (the crawl closed, the runner stopped, …).
	Result *crawl.LevelResult
	Err    error
	// Took is the whole level; Reporting the part spent handing it to the
	// ledger (AdmitLevelOutcomes: the level decided and its archives
	// registered).
	Took, Reporting time.Duration
}

// Runner runs crawl levels. It is a crawl.Dispatcher: Dispatch queues a
// level and returns at once; Run works through the queue.
type Runner struct {
	store    Store
	capturer Capturer
	cfg      Config
	// ledger is set by SetLedger (the service that admits reports is
	// built with this runner as its dispatcher).
	mu     sync.Mutex
	ledger Ledger
	queue  []crawl.Level
	known  map[levelKey]bool // queued or running
	// running counts the levels running, byOrg those of each organization;
	// active holds the crawls with a level running here (one at a time:
	// the next level a report dispatches waits in the queue until the
	// level before it has let go of the crawl's lock).
	running int
	byOrg   map[string]int
	active  map[string]bool
	wake    chan struct{}
}

type levelKey struct {
	crawlID string
	depth   int
}

var _ crawl.Dispatcher = (*Runner)(nil)

// New returns a runner; SetLedger must be called before Run.
func New(store Store, capturer Capturer, cfg Config) *Runner {
	if cfg.RobotsAgent == "" {
		cfg.RobotsAgent = DefaultRobotsAgent
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = cfg.RobotsAgent
	}
	if cfg.CrawlDelayMax <= 0 {
		cfg.CrawlDelayMax = DefaultCrawlDelayMax
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = DefaultBackoffMax
	}
	if cfg.RobotsClient == nil {
		cfg.RobotsClient = &http.Client{Timeout: RobotsTimeout}
	}
	if cfg.Rescan <= 0 {
		cfg.Rescan = 15 * time.Second
	}
	if cfg.GiveUpAfter <= 0 {
		cfg.GiveUpAfter = 5 * time.Minute
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = wallNow
	}
	if cfg.AdmitEvery == 0 {
		cfg.AdmitEvery = DefaultAdmitEvery
	}
	if cfg.Levels <= 0 {
		cfg.Levels = DefaultLevels
	}
	if cfg.HostLeaseTTL <= 0 {
		cfg.HostLeaseTTL = 30 * time.Second
	}
	return &Runner{store: store, capturer: capturer, cfg: cfg, known: map[levelKey]bool{}, byOrg: map[string]int{}, active: map[string]bool{}, wake: make(chan struct{}, 1)}
}

// SetLedger sets the use-case levels are reported to.
func (r *Runner) SetLedger(l Ledger) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ledger = l
}

func (r *Runner) getLedger() Ledger {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ledger
}

// agent is the robots.txt product token, in lower case.
func (r *Runner) agent() string { return strings.ToLower(r.cfg.RobotsAgent) }

// Dispatch queues the level and returns at once, with no job id. The level
// is durable before this is called (its pages are crawl_pages rows), so a
// runner that stops before running it finds it again when it starts.
func (r *Runner) Dispatch(_ context.Context, l crawl.Level) (string, error) {
	r.enqueue(l)
	return "", nil
}

func (r *Runner) enqueue(l crawl.Level) bool {
	k := levelKey{l.CrawlID, l.Depth}
	r.mu.Lock()
	if r.known[k] {
		r.mu.Unlock()
		return false
	}
	r.known[k] = true
	r.queue = append(r.queue, l)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	return true
}

// pop takes the next level to run when fewer than Levels run: the queued
// level of the organization with the fewest levels running here (the
// oldest queued among equals), so one organization's many crawls do not
// hold every place; never a level of a crawl that has one running here.
func (r *Runner) pop() (crawl.Level, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queue) == 0 || r.running >= r.cfg.Levels {
		return crawl.Level{}, false
	}
	best := -1
	for i, l := range r.queue {
		if r.active[l.CrawlID] {
			continue
		}
		if best < 0 || r.byOrg[l.OrgID] < r.byOrg[r.queue[best].OrgID] {
			best = i
		}
	}
	if best < 0 {
		return crawl.Level{}, false
	}
	l := r.queue[best]
	r.queue = append(r.queue[:best:best], r.queue[best+1:]...)
	r.running++
	r.byOrg[l.OrgID]++
	r.active[l.CrawlID] = true
	return l, true
}

// forget marks the level ended: no longer known, its place free.
func (r *Runner) forget(l crawl.Level) {
	r.mu.Lock()
	delete(r.known, levelKey{l.CrawlID, l.Depth})
	delete(r.active, l.CrawlID)
	r.running--
	if r.byOrg[l.OrgID]--; r.byOrg[l.OrgID] <= 0 {
		delete(r.byOrg, l.OrgID)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run works through the queued levels until ctx ends, up to Levels at once
// (each crawl runs one level at a time; several crawls run side by side).
// It first resumes the open levels of running crawls, and looks for such
// levels again every Rescan. A level interrupted by ctx keeps its pages'
// results; the next Run resumes it. Run returns once its levels have
// stopped.
func (r *Runner) Run(ctx context.Context) error {
	if r.getLedger() == nil {
		return errors.New("crawl runner: no ledger to report levels to")
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	r.rescan(ctx)
	t := time.NewTicker(r.cfg.Rescan)
	defer t.Stop()
	for {
		if ctx.Err() != nil {
			return nil
		}
		if l, ok := r.pop(); ok {
			wg.Go(func() {
				defer r.forget(l)
				r.runLevel(ctx, l)
			})
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-r.wake:
		case <-t.C:
			r.rescan(ctx)
		}
	}
}

// rescan queues the open levels of running crawls that are not queued yet.
func (r *Runner) rescan(ctx context.Context) {
	levels, err := r.store.RunnerOpenLevels(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Log.Error("crawl runner: could not look for open levels; trying again later", "error", err.Error())
		}
		return
	}
	for _, ol := range levels {
		l := crawl.Level{
			CrawlID: ol.CrawlID, Depth: ol.Depth, MaxDepth: ol.MaxDepth, OrgID: ol.OrgID,
			PerHostDelayMs: ol.PerHostDelayMs, HostParallelism: ol.HostParallelism,
			CaptureFormats: r.formats(ol.Depth, ol.MaxDepth), Signing: r.cfg.Signing,
			Frontier: make([]crawl.FrontierPage, len(ol.Pages)),
		}
		for i, p := range ol.Pages {
			l.Frontier[i] = crawl.FrontierPage{URL: p.URL, Host: p.Host, LastFinishedAt: p.LastFinishedAt}
		}
		if len(l.Frontier) > 0 && r.enqueue(l) {
			r.cfg.Log.Info("crawl runner: found an open level (a new crawl's, or one a runner left unfinished)", "crawlId", l.CrawlID, "depth", l.Depth, "pages", len(l.Frontier))
		}
	}
}

// formats are the formats of a resumed level, as crawl.Service gives them
// to a dispatched one: the deployment's, with links on when the level's
// pages will be followed.
func (r *Runner) formats(depth, maxDepth int) crawl.Formats {
	f := r.cfg.CaptureFormats
	return crawl.Formats{
		PNG: f["png"], WebP: f["webp"], HTML: f["html"], Links: f["links"] || maxDepth > depth,
		MHTML: f["mhtml"], WACZ: f["wacz"],
	}
}

// errClosed: the crawl was closed (failed, stalled) while the level ran.
var errClosed = errors.New("the crawl is no longer running")

// backendError is a capture backend that stayed unusable for GiveUpAfter.
type backendError struct {
	err   error
	since time.Duration
}

func (e *backendError) Error() string {
	return fmt.Sprintf("the capture backend could not be used for %s: %s", e.since.Round(time.Second), e.err)
}

func (e *backendError) Unwrap() error { return e.err }

// runLevel runs one level to its report. Nothing it meets stops the
// runner: every outcome is logged, and a level that could not finish is
// found again by the next rescan (or closed by the stall timeout).
func (r *Runner) runLevel(ctx context.Context, l crawl.Level) {
	log := r.cfg.Log.With("crawlId", l.CrawlID, "depth", l.Depth)
	began := time.Now()
	var reporting time.Duration
	res, err := r.level(ctx, l, log, &reporting)
	if r.cfg.OnLevel != nil {
		r.cfg.OnLevel(LevelEvent{CrawlID: l.CrawlID, Depth: l.Depth, Pages: len(l.Frontier), Result: res, Err: err,
			Took: time.Since(began), Reporting: reporting})
	}
}

func (r *Runner) level(ctx context.Context, l crawl.Level, log *slog.Logger, reporting *time.Duration) (*crawl.LevelResult, error) {
	unlock, ok, err := r.store.RunnerLock(ctx, l.CrawlID)
	if err != nil {
		log.Error("crawl runner: could not lock the crawl; the level will be tried again", "error", err.Error())
		return nil, err
	}
	if !ok {
		log.Debug("crawl runner: another runner is running this crawl; leaving the level to it")
		return nil, errors.New("another runner holds the crawl")
	}
	defer unlock()
	if open, err := r.store.RunnerLevelOpen(ctx, l.CrawlID, l.Depth); err != nil {
		log.Error("crawl runner: could not check the level; it will be tried again", "error", err.Error())
		return nil, err
	} else if !open {
		log.Info("crawl runner: the level is no longer open (reported, or the crawl ended); nothing to do")
		return nil, errClosed
	}

	lv, err := r.prepare(ctx, l, log)
	if err != nil {
		return nil, err
	}
	log.Info("crawl runner: level started", "pages", len(l.Frontier), "hosts", len(lv.hosts), "kept", lv.kept)
	if a, ok := r.getLedger().(CapturedAdmitter); ok && r.cfg.AdmitEvery > 0 {
		lv.early = &earlyAdmissions{ctx: ctx, admitter: a, every: r.cfg.AdmitEvery, crawlID: l.CrawlID, depth: l.Depth, log: log}
		defer lv.early.stop()
	}
	err = r.capture(ctx, lv)
	lv.early.stop() // the level's admission takes what is still waiting
	if err != nil {
		var be *backendError
		switch {
		case ctx.Err() != nil:
			log.Info("crawl runner: stopped mid-level; the pages captured so far are kept and the rest resume on the next start")
			return nil, ctx.Err()
		case errors.Is(err, errClosed):
			log.Info("crawl runner: the crawl was closed while its level ran; stopping it")
			return nil, err
		case errors.As(err, &be):
			log.Error("crawl runner: the capture backend stayed unusable; closing the crawl as failed", "error", err.Error())
			r.closeFailed(ctx, l.CrawlID, err.Error(), log)
			return nil, err
		default:
			log.Error("crawl runner: the level could not finish; it will be tried again", "error", err.Error())
			return nil, err
		}
	}
	rep, err := lv.report()
	if err != nil {
		log.Error("crawl runner: could not build the level's outcomes; it will be tried again", "error", err.Error())
		return nil, err
	}
	began := time.Now()
	defer func() { *reporting = time.Since(began) }()
	return r.admit(ctx, l, rep, log)
}

// closeFailed closes the crawl as failed, outliving a cancelled ctx.
func (r *Runner) closeFailed(ctx context.Context, id, reason string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := r.getLedger().CloseFailed(ctx, id, text(reason)); err != nil {
		log.Error("crawl runner: could not close the crawl as failed", "error", err.Error())
	}
}

// report is the level's outcomes as kept, in frontier order.
func (lv *levelRun) report() (crawl.LevelOutcomes, error) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	lo := crawl.LevelOutcomes{Depth: lv.l.Depth, Pages: make([]crawl.PageOutcome, 0, len(lv.l.Frontier))}
	seen := make(map[string]bool, len(lv.l.Frontier))
	for _, p := range lv.l.Frontier {
		if seen[p.URL] {
			continue
		}
		seen[p.URL] = true
		po, ok := lv.outcomes[p.URL]
		if !ok {
			return crawl.LevelOutcomes{}, fmt.Errorf("page %s has no result", p.URL)
		}
		lo.Pages = append(lo.Pages, po)
	}
	return lo, nil
}

// admit reports the level until it is accepted or cannot be: a database or
// bucket that does not answer is waited for (the stall timeout closes a
// crawl that never gets through); a crawl that is no longer running, or a
// depth already reported, ends it.
func (r *Runner) admit(ctx context.Context, l crawl.Level, lo crawl.LevelOutcomes, log *slog.Logger) (*crawl.LevelResult, error) {
	wait := time.Second
	for {
		began := time.Now()
		res, next, err := r.getLedger().AdmitLevelOutcomes(ctx, l.CrawlID, lo)
		switch {
		case err == nil:
			stop := ""
			if res.StopReason != nil {
				stop = *res.StopReason
			}
			log.Info("crawl runner: level reported", "results", len(lo.Pages), "next", len(res.Next),
				"refused", len(res.Refused), "stopReason", stop, "replayed", res.Replayed, "tookMs", time.Since(began).Milliseconds())
			if next != nil {
				// It starts once this level lets go of the crawl.
				r.enqueue(*next)
			}
			return &res, nil
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, crawl.ErrConflict), errors.Is(err, ledger.ErrNotFound):
			log.Warn("crawl runner: the level report was not taken; the crawl has moved on without it", "error", err.Error())
			return nil, err
		case errors.Is(err, crawl.ErrInvalid):
			// The runner built a report the ledger cannot read: a bug here,
			// and resending it would fail the same way.
			log.Error("crawl runner: the level report was refused as invalid; closing the crawl as failed", "error", err.Error())
			r.closeFailed(ctx, l.CrawlID, "the embedded runner's level report was refused: "+err.Error(), log)
			return nil, err
		}
		log.Warn("crawl runner: could not report the level; trying again", "error", err.Error(), "in", wait.String())
		if err := sleepUntil(ctx, r.cfg.Now, r.cfg.Now().Add(wait)); err != nil {
			return nil, err
		}
		wait = min(2*wait, time.Minute)
	}
}
