package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// alice may submit for acme.
var alice = crawl.Caller{Subject: "alice", Orgs: []string{"acme"}}

// env is one test's ledger (database, bucket, embedded OpenFGA) and crawl
// service, without a runner yet.
type env struct {
	t      testing.TB
	ctx    context.Context
	app    *apptest.Env
	store  *postgres.Store
	blob   *blob.Client
	bucket string
	log    *slog.Logger

	mu     sync.Mutex
	rstore *postgres.Store
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	a := apptest.New(t)
	st, err := a.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.FGA.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	level := slog.LevelWarn
	if os.Getenv("RUNNER_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return &env{t: t, ctx: ctx, app: a, store: st, blob: a.Blob, bucket: a.Bucket,
		log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level}))}
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// service builds a crawl service and a runner over capt wired to each
// other, the way serve wires them.
func (e *env) service(capt runner.Capturer, cfg runner.Config) (*crawl.Service, *runner.Runner) {
	perms, err := e.app.App.Permissions(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	if cfg.Log == nil {
		cfg.Log = e.log
	}
	if cfg.RobotsClient == nil {
		cfg.RobotsClient = robotsClient()
	}
	cfg.CaptureFormats = map[string]bool{"wacz": true}
	r := runner.New(e.runnerStore(), capt, cfg)
	svc := &crawl.Service{
		Store: e.store, Objects: e.blob, Bucket: e.bucket,
		CaptureFormats: map[string]bool{"wacz": true}, Permissions: perms, Dispatcher: r, Log: e.log, FetchConcurrency: 64,
	}
	r.SetLedger(svc)
	return svc, r
}

// runnerStore is the runner's own pool, as serve gives it one.
func (e *env) runnerStore() *postgres.Store {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rstore == nil {
		pool, err := postgres.Open(e.ctx, e.app.DSN, crawl.MaxHostParallelism+4)
		if err != nil {
			e.t.Fatal(err)
		}
		e.t.Cleanup(pool.Close)
		e.rstore = &postgres.Store{Pool: pool}
	}
	return e.rstore
}

// drain delivers the queued OpenFGA tuples, so admitted archives become
// visible.
func (e *env) drain() {
	e.t.Helper()
	if _, err := e.app.App.Drain(e.ctx, outbox.Options{MaxRows: 5000}); err != nil {
		e.t.Fatal(err)
	}
}

// objects lists the bucket's keys ending in suffix.
func (e *env) objects(suffix string) []string {
	e.t.Helper()
	keys, err := e.blob.List(e.ctx, e.bucket, "")
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			out = append(out, k)
		}
	}
	return out
}

// host is one test web server: a distinct port is a distinct host.
type host struct {
	*httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	pages map[string]http.HandlerFunc
}

func newHost(t testing.TB) *host {
	h := &host{hits: map[string]int{}, pages: map[string]http.HandlerFunc{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits[r.URL.RequestURI()]++
		fn := h.pages[r.URL.Path]
		h.mu.Unlock()
		if fn == nil {
			http.NotFound(w, r)
			return
		}
		fn(w, r)
	}))
	t.Cleanup(h.Close)
	return h
}

// page serves an HTML page at path with the given body.
func (h *host) page(path, title, body string) {
	h.handle(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", title, body)
	})
}

// file serves body at path as contentType.
func (h *host) file(path, contentType string, body []byte) {
	h.handle(path, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(body)
	})
}

func (h *host) handle(path string, fn http.HandlerFunc) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pages[path] = fn
}

func (h *host) hit(uri string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hits[uri]
}

// counter wraps the built-in capturer over the real http engine (loopback
// allowed, as the test site is on 127.0.0.1) and counts the captures made
// per URL. before, when set, runs before each capture and may stop it
// (returning an error as a stopped runner's capture would); after runs
// once a capture ended, before the runner keeps its result.
type counter struct {
	inner *capture.CrawlCapturer

	mu       sync.Mutex
	captures map[string]int
	before   func(ctx context.Context, url string) error
	after    func(ctx context.Context, url string) error
}

var (
	_ runner.Capturer  = (*counter)(nil)
	_ runner.Staged    = (*counter)(nil)
	_ runner.Recoverer = (*counter)(nil)
)

// captureConfig is the engines' configuration for the test sites.
func captureConfig() capture.Config {
	cfg := capture.Defaults()
	cfg.AllowPrivate = true
	cfg.Timeout = 30 * time.Second
	return cfg
}

func newCounter(e *env) *counter {
	eng := capture.NewHTTP(captureConfig())
	e.t.Cleanup(func() { _ = eng.Close() })
	return &counter{inner: &capture.CrawlCapturer{Engine: eng, Objects: e.blob, Bucket: e.bucket, Software: "ledgerctl runner test"}, captures: map[string]int{}}
}

func (c *counter) count(url string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.captures[url]
}

func (c *counter) Capture(ctx context.Context, req runner.CaptureRequest) (runner.CaptureOutcome, error) {
	c.mu.Lock()
	before, after := c.before, c.after
	c.mu.Unlock()
	if before != nil {
		if err := before(ctx, req.URL); err != nil {
			return runner.CaptureOutcome{}, err
		}
	}
	out, err := c.inner.Capture(ctx, req)
	if err == nil {
		c.mu.Lock()
		c.captures[req.URL]++
		c.mu.Unlock()
		if after != nil {
			if err := after(ctx, req.URL); err != nil {
				return runner.CaptureOutcome{}, err
			}
		}
	}
	return out, err
}

// Fetch is Capture in the runner's two steps (what the built-in capturer
// does in production): before runs before the page is fetched, after once
// its objects are written.
func (c *counter) Fetch(ctx context.Context, req runner.CaptureRequest) (runner.Fetched, error) {
	c.mu.Lock()
	before, after := c.before, c.after
	c.mu.Unlock()
	if before != nil {
		if err := before(ctx, req.URL); err != nil {
			return nil, err
		}
	}
	f, err := c.inner.Fetch(ctx, req)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.captures[req.URL]++
	c.mu.Unlock()
	return counted{Fetched: f, ctx: ctx, url: req.URL, after: after}, nil
}

type counted struct {
	runner.Fetched
	ctx   context.Context
	url   string
	after func(ctx context.Context, url string) error
}

func (c counted) Store(ctx context.Context) (runner.CaptureOutcome, error) {
	return c.StoreAfter(ctx, nil)
}

func (c counted) Unwrap() runner.Fetched { return c.Fetched }

func (c counted) StoreAfter(ctx context.Context, prev runner.Fetched) (runner.CaptureOutcome, error) {
	out, err := storeAfter(ctx, c.Fetched, prev)
	if err == nil && c.after != nil {
		if err := c.after(c.ctx, c.url); err != nil {
			return runner.CaptureOutcome{}, err
		}
	}
	return out, err
}

// storeAfter writes f after prev as the runner does: beside it when f is
// Ordered (the built-in capturer's), else now (prev is written already or
// shares nothing with f).
func storeAfter(ctx context.Context, f, prev runner.Fetched) (runner.CaptureOutcome, error) {
	if o, ok := f.(runner.Ordered); ok {
		return o.StoreAfter(ctx, prev)
	}
	return f.Store(ctx)
}

func (c *counter) Recover(ctx context.Context, taskID, correlationID, url string) (runner.CaptureOutcome, bool, error) {
	return c.inner.Recover(ctx, taskID, correlationID, url)
}

// robotsClient is the runner's robots.txt client for the test sites.
func robotsClient() *http.Client { return capture.NewClient(captureConfig(), runner.RobotsTimeout) }

// successes reads the bucket's manifests and counts the successful
// captures per requested URL.
func (e *env) successes() map[string]int {
	e.t.Helper()
	per := map[string]int{}
	for _, k := range e.objects(".result.json") {
		data, err := e.blob.Get(e.ctx, e.bucket, k)
		if err != nil {
			e.t.Fatal(err)
		}
		var m struct {
			URL    string `json:"url"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			e.t.Fatal(err)
		}
		if m.Status == "success" {
			per[m.URL]++
		}
	}
	return per
}

// runUntilDone runs r until the crawl ends (a level answers a stop
// reason) or the timeout passes, and returns the levels it ran.
func runUntilDone(t testing.TB, r *runner.Runner, levels <-chan runner.LevelEvent, timeout time.Duration) []runner.LevelEvent {
	t.Helper()
	return runUntil(t, r, levels, timeout, "the crawl did not end", func(ev runner.LevelEvent) bool {
		return ev.Result != nil && ev.Result.StopReason != nil
	})
}

// runUntil runs r until it ran a level last says is the last one, or the
// timeout passes (failing the test with what), and returns the levels it
// ran.
func runUntil(t testing.TB, r *runner.Runner, levels <-chan runner.LevelEvent, timeout time.Duration, what string, last func(runner.LevelEvent) bool) []runner.LevelEvent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	var got []runner.LevelEvent
	deadline := time.After(timeout)
	for {
		select {
		case ev := <-levels:
			got = append(got, ev)
			if last(ev) {
				return got
			}
		case <-deadline:
			t.Fatalf("%s within %s; levels so far: %+v", what, timeout, got)
			return nil
		}
	}
}

// keptResults counts the results the runner kept for crawl id's pages at
// depth (a page only begun has none). It may be called from a capture's
// hook: an error fails the test without stopping the goroutine.
func (e *env) keptResults(id string, depth int) int {
	e.t.Helper()
	kept, err := e.store.RunnerResults(e.ctx, id, depth)
	if err != nil {
		e.t.Error(err)
	}
	n := 0
	for _, k := range kept {
		if k.Result != nil {
			n++
		}
	}
	return n
}
