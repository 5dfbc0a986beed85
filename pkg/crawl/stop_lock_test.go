package crawl_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// lockProbe reads objects through objects, and notes for each read
// whether the crawl's row was locked by another transaction then (a FOR
// UPDATE NOWAIT of its own, rolled back at once).
type lockProbe struct {
	t       *testing.T
	pool    *pgxpool.Pool
	crawlID string
	objects crawl.Objects
	// before runs once, before the first read.
	before func()

	mu     sync.Mutex
	reads  []string // the keys read, in order
	locked []string // those read while the row was locked
}

func (p *lockProbe) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	p.look(key)
	return p.objects.Get(ctx, bucket, key)
}

// FindBegun is an InFlight finder that finds the capture a test wrote for
// the begun page, by its manifest, read through the probe.
func (p *lockProbe) finder(found map[string]crawl.PageReport) crawl.InFlightFinder {
	return finderFunc(func(ctx context.Context, crawlID string, b ledger.BegunCapture) (crawl.PageReport, bool, error) {
		pr, ok := found[b.TaskID]
		if !ok {
			return crawl.PageReport{}, false, nil
		}
		p.look("in flight: " + b.URL)
		return pr, true, nil
	})
}

type finderFunc func(ctx context.Context, crawlID string, b ledger.BegunCapture) (crawl.PageReport, bool, error)

func (f finderFunc) FindBegun(ctx context.Context, crawlID string, b ledger.BegunCapture) (crawl.PageReport, bool, error) {
	return f(ctx, crawlID, b)
}

func (p *lockProbe) look(what string) {
	p.t.Helper()
	p.mu.Lock()
	first := len(p.reads) == 0
	p.reads = append(p.reads, what)
	p.mu.Unlock()
	if first && p.before != nil {
		p.before()
	}
	ctx := context.Background()
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, `SELECT 1 FROM crawls WHERE id = $1 FOR UPDATE NOWAIT`, p.crawlID)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "55P03": // lock_not_available
		p.mu.Lock()
		p.locked = append(p.locked, what)
		p.mu.Unlock()
	case err != nil:
		p.t.Errorf("probe the crawl's lock: %v", err)
	}
}

// TestCloseReadsTheBucketBeforeItLocksTheCrawl: closing a crawl (here a
// stop) reads what it registers of the runner's captures — each kept
// result's manifest, a capture in flight looked for where its capturer
// leaves it — before the transaction that locks the crawl's row, so a slow
// bucket holds no lock the crawl's other writers wait for. What the runner
// keeps while those reads run is still registered: only it is read under
// the lock. Everything kept before the close is registered once.
func TestCloseReadsTheBucketBeforeItLocksTheCrawl(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	inFlight := "https://www.example.com/in-flight"
	id := e.start(crawl.StartRequest{Seeds: []string{www, docs, inFlight}, Rules: siteRules, MaxDepth: ptr(1)})
	keep := func(p crawl.PageReport) {
		t.Helper()
		if !e.keepResult(id, p) {
			t.Fatalf("keep %s: the crawl is not running", p.URL)
		}
	}
	kept := e.write(capture{url: www})
	keep(kept)
	flying := e.write(capture{url: inFlight})
	if running, err := e.store.RunnerBegin(e.ctx, id, 0, inFlight, host(t, inFlight), flying.TaskID, flying.SubmittedAt); err != nil || !running {
		t.Fatalf("begin %s: %v, %v", inFlight, running, err)
	}
	// The runner keeps docs's result while the close reads the bucket.
	late := e.write(capture{url: docs})
	probe := &lockProbe{t: t, pool: e.pool, crawlID: id, objects: e.blob, before: func() { keep(late) }}
	e.svc.Objects = probe
	e.svc.InFlight = probe.finder(map[string]crawl.PageReport{flying.TaskID: flying})

	res, err := e.svc.Stop(e.ctx, alice, id)
	if err != nil || !res.Stopped {
		t.Fatalf("stop: %+v, %v", res, err)
	}
	for _, p := range []crawl.PageReport{kept, flying, late} {
		if n := e.count(`SELECT count(*) FROM archives WHERE task_id = $1::uuid`, p.TaskID); n != 1 {
			t.Errorf("%s: %d archives of its capture after the stop, want 1", p.URL, n)
		}
	}
	manifest := func(p crawl.PageReport) string { return strings.TrimPrefix(p.ManifestLocation, e.loc("")) }
	count := func(what string) int {
		n := 0
		for _, r := range probe.reads {
			if r == what {
				n++
			}
		}
		return n
	}
	probe.mu.Lock()
	defer probe.mu.Unlock()
	t.Logf("read: %q; under the lock: %q", probe.reads, probe.locked)
	for _, what := range []string{manifest(kept), manifest(flying), "in flight: " + inFlight, manifest(late)} {
		if n := count(what); n != 1 {
			t.Errorf("%s read %d times, want once", what, n)
		}
	}
	if len(probe.locked) != 1 || probe.locked[0] != manifest(late) {
		t.Errorf("read under the crawl's lock: %q; want only the manifest of the result kept while the close read the bucket (%s)", probe.locked, manifest(late))
	}
}
