package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/browserhive"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/windmill"
)

// serveCrawls serves the crawl routes on the Windmill flow when its webhook
// is set, else on the embedded runner, with its worker and the stalled-crawl
// closer (nil crawls: the runner cannot capture here, and said why; serve
// then runs without crawls, and srv.Crawls says so).
func (a *App) serveCrawls(ctx context.Context, srv *Server, apiSrv *api.Server, version string) error {
	crawls, run, err := a.CrawlRunner(ctx, version)
	if err != nil {
		return err
	}
	srv.Crawls = crawls != nil
	if crawls == nil {
		return nil
	}
	apiSrv.Crawls = crawls
	if run != nil {
		srv.work(func(ctx context.Context) { _ = run.Run(ctx) })
	}
	if t := a.Settings.CrawlStallTimeout; t > 0 { // unset only in hand-built settings
		srv.work(func(ctx context.Context) { stallLoop(ctx, crawls, t, a.Log) })
	}
	return nil
}

// Windmill says crawls run on the Windmill flow (the webhook is set).
func (a *App) Windmill() bool { return a.Settings.WebhookURL != "" }

// Crawls is the crawl use-case wired to the ledger, the bucket, OpenFGA and
// the Windmill webhook when it is configured. Without it, the use-case
// dispatches nothing itself: a started crawl's first level is durable
// (crawl_pages), and the embedded runner of serve (or of
// `crawl start --wait`) finds it and runs it.
func (a *App) Crawls(ctx context.Context) (*crawl.Service, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	perms, err := a.Permissions(ctx)
	if err != nil {
		return nil, err
	}
	svc := &crawl.Service{
		Store: st, Objects: a.Blob(), Bucket: a.Settings.S3Bucket,
		CaptureFormats: a.Settings.CaptureFormats, Signing: a.Settings.CaptureSigning,
		Permissions: perms, Log: a.Log, CrawlsPerOrg: a.Settings.CrawlsPerOrg,
	}
	switch {
	case a.Windmill():
		svc.Dispatcher = &windmill.Dispatcher{URL: a.Settings.WebhookURL, Token: a.Settings.WebhookToken, Timeout: a.Settings.WebhookTimeout}
	case len(a.Settings.BrowserHiveEndpoints) == 0:
		// A capture the built-in capturer wrote whole for a runner that
		// died before keeping its result is found by its manifest's key
		// when the crawl is closed (stopped, failed, stalled), by this
		// process or any other.
		svc.InFlight = runner.InFlight{Capturer: &capture.CrawlCapturer{Objects: a.Blob(), Bucket: a.Settings.S3Bucket}}
	}
	return svc, nil
}

// Targets is the capture-target use-case; it needs only the database.
func (a *App) Targets(ctx context.Context) (*crawl.Targets, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	return &crawl.Targets{Store: st}, nil
}

// CrawlRunner is the crawl use-case with the embedded runner as its
// dispatcher, and the runner (not running yet: the caller runs it). With the
// Windmill webhook it is Crawls and a nil runner. The runner captures
// through BrowserHive when CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS is set,
// else with the built-in capturer's configured engine, which closes with
// the App. When that engine cannot start for want of Chromium, crawls
// cannot run here: the use-case is nil and a warning says why (like
// POST /api/captures).
func (a *App) CrawlRunner(ctx context.Context, software string) (*crawl.Service, *runner.Runner, error) {
	svc, err := a.Crawls(ctx)
	if err != nil || a.Windmill() {
		return svc, nil, err
	}
	// The runner's own pool: each host worker keeps results as it goes and
	// a level holds one connection for the crawl's lock, so it would starve
	// the API of the shared pool's few connections (and be slowed by them).
	pool, err := postgres.Open(ctx, a.Settings.DatabaseURL, runner.DefaultLevels+crawl.MaxHostParallelism+4)
	if err != nil {
		return nil, nil, err
	}
	a.mu.Lock()
	a.closers = append(a.closers, pool.Close)
	a.mu.Unlock()
	st := &postgres.Store{Pool: pool}
	ccfg, err := a.CaptureConfig()
	if err != nil {
		return nil, nil, err
	}
	s := a.Settings
	var capt runner.Capturer
	if len(s.BrowserHiveEndpoints) > 0 {
		capt = browserhive.CrawlCapturer{Client: &browserhive.Client{
			Endpoints: s.BrowserHiveEndpoints, Deadline: s.BrowserHiveDeadline, HTTP: &http.Client{},
		}}
	} else {
		eng, err := capture.New(s.CaptureEngine, ccfg)
		var missing *capture.ChromiumError
		switch {
		case errors.As(err, &missing):
			a.Log.Warn("/api/crawls is not served: the embedded crawl runner's engine cannot start ("+err.Error()+
				"); set CAPTURE_LEDGER_CAPTURE_ENGINE=http, CAPTURE_LEDGER_CHROMIUM_PATH or CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS",
				"engine", s.CaptureEngine)
			return nil, nil, nil
		case err != nil:
			return nil, nil, fmt.Errorf("the embedded crawl runner's engine: %w", err)
		}
		a.mu.Lock()
		a.closers = append(a.closers, func() { _ = eng.Close() })
		a.mu.Unlock()
		// Within a crawl, a payload already stored is written as a
		// revisit of it (crawl_payloads).
		capt = &capture.CrawlCapturer{Engine: eng, Objects: a.Blob(), Bucket: s.S3Bucket, Software: software, Payloads: st, Log: a.Log}
	}
	ua := ccfg.UserAgent
	if ua == "" {
		ua = capture.DefaultUserAgent
	}
	r := runner.New(st, capt, runner.Config{
		UserAgent: ua, CrawlDelayMax: s.CrawlDelayMax, BackoffMax: s.CrawlBackoffMax, Rescan: s.CrawlRescan,
		// robots.txt is fetched under the capture engines' address policy
		// (non-public addresses refused unless allowed, checked on the
		// address each connection dials).
		RobotsClient: capture.NewClient(ccfg, runner.RobotsTimeout), CaptureFormats: s.CaptureFormats, Signing: s.CaptureSigning, Log: a.Log,
		// Crawl pages draw from the same per-organization capacity as
		// POST /api/captures.
		Capacity: a.CaptureQuota(),
		// Every capture of a host takes the host's lease, shared with the
		// direct captures and the crawls of every other process.
		Hosts: st, HostAtOnce: s.HostAtOnce, HostDelay: s.HostDelay, HostLeaseTTL: s.HostLeaseTTL,
		// Each admitted level's archives are indexed for search at once
		// by a command's runner; inside serve, serve's indexer does it
		// (the admission woke it), and indexCrawl leaves them to it.
		OnLevel: func(ev runner.LevelEvent) {
			if ev.Result != nil {
				a.background.Add(1)
				go func() {
					defer a.background.Done()
					a.indexCrawl(ev.CrawlID)
				}()
			}
		},
	})
	// A crawl's first level goes to the runner; the next ones come back
	// to it from each level's admission (runner.Ledger).
	svc.Dispatcher = r
	// What the runner does not hold in memory (the pages an earlier run
	// kept, BrowserHive's captures) is read with more requests in flight.
	svc.FetchConcurrency = 64
	r.SetLedger(svc)
	return svc, r, nil
}

// indexCrawl indexes the archives crawl crawlID has produced that are not
// indexed yet, unless serve's indexer runs in this process (it indexes them
// already: both read and wrote each archive twice). A failure is logged:
// the background indexer retries.
func (a *App) indexCrawl(crawlID string) {
	if a.search().served.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	st, err := a.Store(ctx)
	if err != nil {
		a.Log.Warn("could not index the crawl's archives; the indexer will", "crawlId", crawlID, "error", err.Error())
		return
	}
	ix, done, err := a.indexPass(ctx)
	var other *OtherIndexError
	if errors.Is(err, search.ErrIndexBusy) || errors.As(err, &other) {
		// The process holding the database's index indexes them, woken
		// by PostgreSQL (or the next serve started where that index is).
		a.Log.Info("the crawl's archives are left to the database's search index", "crawlId", crawlID, "why", err.Error())
		return
	}
	if err != nil {
		a.Log.Warn("could not index the crawl's archives; the indexer will", "crawlId", crawlID, "error", err.Error())
		return
	}
	defer done()
	ids, err := st.CrawlArchiveIDs(ctx, crawlID)
	if err == nil {
		_, err = ix.IndexArchives(ctx, ids)
	}
	if err != nil {
		a.Log.Warn("could not index the crawl's archives; the indexer will", "crawlId", crawlID, "error", err.Error())
	}
}
