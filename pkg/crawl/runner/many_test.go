package runner_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestManyCrawlsOnSharedHosts: three organizations run five crawls at once
// over three shared hosts (one asking Crawl-delay 0.2 in robots.txt, one
// answering a storm of 429s), in two runners that share only PostgreSQL,
// OpenFGA and the bucket, as two serve processes do (each its own pool,
// capturer, memory and crawl service). Every host's captures across all
// crawls have no overlap and no gap shorter than the largest delay either
// of its two captures' parties asked for, direct captures made meanwhile
// included, checked by the host report and independently by SQL over
// every capture's start and end; every crawl ends succeeded with all its
// pages; both runners ran levels; and on every host each organization got
// its first capture among the first few, whoever started first.
func TestManyCrawlsOnSharedHosts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	callers := []crawl.Caller{
		{Subject: "alice", Orgs: []string{"acme"}},
		{Subject: "gina", Orgs: []string{"globex"}},
		{Subject: "ivan", Orgs: []string{"initech"}},
	}
	for _, c := range callers[1:] {
		if err := e.app.FGA.Write(e.ctx, []authz.Tuple{{User: "user:" + c.Subject, Relation: "submitter", Object: "organization:" + c.Orgs[0]}}, nil); err != nil {
			t.Fatal(err)
		}
	}

	site := func(h *host) {
		var links []string
		for i := 1; i <= 3; i++ {
			p := fmt.Sprintf("/p%d", i)
			h.page(p, "page "+p, "<p>a page</p>")
			links = append(links, fmt.Sprintf(`<a href="%s">%s</a>`, p, p))
		}
		h.page("/", "home", strings.Join(links, " "))
	}
	slow, plain, storm := newHost(t), newHost(t), newHost(t)
	for _, h := range []*host{slow, plain, storm} {
		site(h)
	}
	slow.handle("/robots.txt", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.2\n")
	})
	// The storm: the first request of each of the host's pages answers
	// 429 (so a page's one retry goes through).
	for _, p := range []string{"/", "/p1", "/p2", "/p3"} {
		storm.handle(p, testenv.RefusedOnce(storm.pages[p]))
	}

	// Two processes.
	type proc struct {
		svc    *crawl.Service
		r      *runner.Runner
		levels atomic.Int32
	}
	procs := make([]*proc, 2)
	for i := range procs {
		pool, err := postgres.Open(e.ctx, e.app.DSN, crawl.MaxHostParallelism+runner.DefaultLevels+4)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		st := &postgres.Store{Pool: pool}
		p := &proc{}
		capt := newCounter(e)
		p.r = runner.New(st, capt, runner.Config{
			RobotsClient: robotsClient(), CaptureFormats: map[string]bool{"wacz": true}, Log: e.log,
			Rescan: 300 * time.Millisecond, Hosts: st, HostAtOnce: 1, HostLeaseTTL: 5 * time.Second,
			OnLevel: func(runner.LevelEvent) { p.levels.Add(1) },
		})
		perms, err := e.app.App.Permissions(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		p.svc = &crawl.Service{Store: st, Objects: e.blob, Bucket: e.bucket,
			CaptureFormats: map[string]bool{"wacz": true}, Permissions: perms, Dispatcher: p.r, Log: e.log, FetchConcurrency: 16}
		p.r.SetLedger(p.svc)
		procs[i] = p
	}
	ctx, cancel := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Go(func() {
			if err := p.r.Run(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()

	seeds := []string{slow.URL + "/", plain.URL + "/", storm.URL + "/"}
	depth, delay, par := 1, 100, 3
	var ids []string
	for i, who := range []int{0, 1, 2, 0, 1} { // acme and globex run two crawls each
		id, err := procs[i%2].svc.Start(e.ctx, callers[who], crawl.StartRequest{
			Seeds: seeds, MaxDepth: &depth, PerHostDelayMs: &delay, HostParallelism: &par,
		})
		if err != nil {
			t.Fatalf("crawl %d of %s: %v", i, callers[who].Orgs[0], err)
		}
		ids = append(ids, id)
	}

	// Direct captures of the shared hosts go through the same leases
	// while the crawls run.
	eng := capture.NewHTTP(captureConfig())
	t.Cleanup(func() { _ = eng.Close() })
	direct, err := e.app.App.Captures(e.ctx, eng, "ledgerctl runner test")
	if err != nil {
		t.Fatal(err)
	}
	var directWG sync.WaitGroup
	directWG.Go(func() {
		for i := range 2 {
			res, err := direct.Capture(e.ctx, archive.CaptureRequest{URLs: []string{plain.URL + fmt.Sprintf("/p%d", i+1), slow.URL + "/"}, Org: "acme", Subject: "alice"})
			if err != nil || len(res.Pages) != 2 || res.Pages[0].Status != archive.Captured {
				t.Errorf("direct capture: %+v %v", res, err)
			}
		}
	})
	defer directWG.Wait()

	deadline := time.Now().Add(55 * time.Second)
	for {
		var running int
		if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM crawls WHERE state = 'running'`).Scan(&running); err != nil {
			t.Fatal(err)
		}
		if running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d crawls still running after 55 s", running)
		}
		time.Sleep(200 * time.Millisecond)
	}
	directWG.Wait()
	for _, id := range ids {
		var state string
		var captured int
		if err := e.store.Pool.QueryRow(e.ctx, `SELECT state, pages_captured FROM crawls WHERE id = $1`, id).Scan(&state, &captured); err != nil {
			t.Fatal(err)
		}
		if state != "succeeded" || captured != 12 {
			t.Errorf("crawl %s: %s with %d pages captured, want succeeded with 12", id, state, captured)
		}
	}
	for i, p := range procs {
		if p.levels.Load() == 0 {
			t.Errorf("runner %d ran no level", i)
		}
	}

	hosts := &politeness.HostService{Store: e.store, AtOnce: 1}
	for _, h := range []struct {
		url      string
		least    time.Duration
		backoffs bool
	}{{slow.URL, 200 * time.Millisecond, false}, {plain.URL, 100 * time.Millisecond, false}, {storm.URL, 100 * time.Millisecond, true}} {
		name := strings.TrimPrefix(h.url, "http://")
		rep, err := hosts.Report(e.ctx, name, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if h.url != storm.URL && rep.Direct != 2 {
			t.Errorf("%s: %d direct captures recorded, want 2", name, rep.Direct)
		}
		if !rep.OK || rep.Captures < 20 || rep.Crawls != 5 || len(rep.Organizations) != 3 || rep.Running != 0 {
			t.Errorf("%s: ok %v, %d captures by %d crawls of %v, %d overlaps, %d short gaps, %d running", name, rep.OK, rep.Captures, rep.Crawls,
				rep.Organizations, rep.Overlaps, rep.ShortGaps, rep.Running)
		}
		if h.backoffs && rep.Sources["backoff"] == 0 {
			t.Errorf("%s: no capture waited a back-off: %v", name, rep.Sources)
		}
		// Independently, over every start and end: no capture started
		// before another one's end, none sooner than the crawls' delay
		// after the previous end when either of the two is a crawl's
		// (two direct captures keep only CAPTURE_LEDGER_HOST_DELAY_MS, 0
		// here, between them: docs/crawling.md), nor than the hold the
		// previous party asked for (a back-off after a 429).
		var overlaps, short, held int
		if err := e.store.Pool.QueryRow(e.ctx, `
			SELECT count(*) FROM host_captures a JOIN host_captures b ON a.host = b.host AND a.id <> b.id
			WHERE a.host = $1 AND b.started_at >= a.started_at AND b.started_at < a.ended_at`, name).Scan(&overlaps); err != nil {
			t.Fatal(err)
		}
		if err := e.store.Pool.QueryRow(e.ctx, `
			SELECT count(*) FILTER (WHERE started_at < prev + $2 * interval '1 millisecond' AND (kind = 'crawl' OR prev_kind = 'crawl')),
			       count(*) FILTER (WHERE started_at < prev + prev_hold * interval '1 millisecond')
			FROM (SELECT started_at, kind, lag(kind) OVER w AS prev_kind, lag(ended_at) OVER w AS prev, lag(hold_ms) OVER w AS prev_hold
			      FROM host_captures WHERE host = $1 WINDOW w AS (ORDER BY started_at, id)) x`,
			name, h.least.Milliseconds()).Scan(&short, &held); err != nil {
			t.Fatal(err)
		}
		if overlaps != 0 || short != 0 || held != 0 {
			t.Errorf("%s by SQL: %d overlaps, %d gaps under %s, %d gaps under the previous party's hold", name, overlaps, short, h.least, held)
		}
		// No organization waited while another held the host: each got
		// its first capture among the first six.
		first := map[string]int{}
		for i, c := range rep.Entries {
			if _, ok := first[c.Org]; !ok {
				first[c.Org] = i
			}
		}
		for org, i := range first {
			if i >= 6 {
				t.Errorf("%s: %s's first capture was the %dth", name, org, i+1)
			}
		}
	}
}
