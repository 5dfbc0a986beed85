package runner_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// mixedSite is a site over three hosts (three ports of 127.0.0.1):
//
//	A (the seed): robots.txt disallows /private and asks Crawl-delay 0.3;
//	  / links /a, /b, /private/x, /redirect, a nofollow link, B's two
//	  pages and C's /p; /a links /c; /b answers 429 (Retry-After: 1) once;
//	  /redirect answers 302 to C's /landing (off-site).
//	B: robots.txt has a group for our token with Crawl-delay 5 (above the
//	  runner's 400 ms cap) and disallows everything to *.
//	C: robots.txt answers 500.
type mixedSite struct {
	a, b, c *host
	b429    atomic.Int32
}

func newMixedSite(t testing.TB) *mixedSite {
	s := &mixedSite{a: newHost(t), b: newHost(t), c: newHost(t)}
	a, b, c := s.a, s.b, s.c
	a.handle("/robots.txt", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# the test site\nUser-agent: *\nDisallow: /private\nCrawl-delay: 0.3\n")
	})
	a.page("/", "ホーム", fmt.Sprintf(`<a href="/a">a</a> <a href="/b">b</a> <a href="/private/x">private</a>
		<a href="/redirect">away</a> <a rel="nofollow" href="/nofollow">nofollow</a>
		<a href="%s/">B</a> <a href="%s/second">B2</a> <a href="%s/p">C</a>`, b.URL, b.URL, c.URL))
	a.page("/a", "a", `<a href="/c">c</a>`)
	a.handle("/b", func(w http.ResponseWriter, r *http.Request) {
		if s.b429.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		a.pages["/c"](w, r) // any page will do
	})
	a.page("/c", "c", `<p>deepest</p>`)
	a.page("/private/x", "private", "")
	a.page("/nofollow", "nofollow", "")
	a.handle("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, c.URL+"/landing", http.StatusFound)
	})
	b.handle("/robots.txt", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "User-agent: ledgerctl\nCrawl-delay: 5\n\nUser-agent: *\nDisallow: /\n")
	})
	b.page("/", "B", `<a href="/x">x</a>`)
	b.page("/second", "B second", "")
	c.handle("/robots.txt", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "oops", 500) })
	c.page("/landing", "C landing", `<a href="/elsewhere">e</a>`)
	c.page("/p", "C p", "")
	return s
}

// rules: skip C, follow A's origin, capture the rest of the site (B).
func (s *mixedSite) rules(t testing.TB) []rules.Rule {
	var out []rules.Rule
	for _, spec := range []string{"skip:" + s.c.URL + "/", "follow:same-origin", "capture:same-site"} {
		r, err := rules.ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func hostOf(u string) string { return strings.TrimPrefix(u, "http://") }

// TestCrawlThroughEmbeddedRunner: a crawl with mixed rules over a
// multi-host site runs through the embedded runner to its stop reason:
// robots.txt's Disallow and Crawl-delay (and its cap) are obeyed, the 429
// is backed off and retried, the off-site redirect is captured but not
// followed, the archives are registered and visible, the decisions explain
// every page not captured, and the recorded times show the pacing.
func TestCrawlThroughEmbeddedRunner(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	site := newMixedSite(t)
	capt := newCounter(e)
	levels := make(chan runner.LevelEvent, 16)
	svc, r := e.service(capt, runner.Config{
		CrawlDelayMax: 400 * time.Millisecond,
		OnLevel:       func(ev runner.LevelEvent) { levels <- ev },
	})
	maxDepth, delay, par := 2, 100, 4
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{
		Seeds: []string{site.a.URL + "/"}, Rules: site.rules(t), MaxDepth: &maxDepth, PerHostDelayMs: &delay, HostParallelism: &par,
	})
	if err != nil {
		t.Fatal(err)
	}
	ran := runUntilDone(t, r, levels, 2*time.Minute)
	if len(ran) != 3 {
		t.Errorf("ran %d levels, want 3: %+v", len(ran), ran)
	}

	view, err := svc.Get(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if view.State != crawl.StateSucceeded || view.StopReason == nil || *view.StopReason != "max_depth" {
		t.Fatalf("crawl ended %s/%v, want succeeded/max_depth", view.State, view.StopReason)
	}

	// Every page and what became of it.
	type pageRow struct {
		url, state, skip string
		depth            int
	}
	rows, err := e.store.Pool.Query(e.ctx, `SELECT url, state, coalesce(skip_reason, ''), depth FROM crawl_pages WHERE crawl_id = $1 ORDER BY depth, url`, id)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pageRow, error) {
		var p pageRow
		return p, r.Scan(&p.url, &p.state, &p.skip, &p.depth)
	})
	if err != nil {
		t.Fatal(err)
	}
	A, B := site.a.URL, site.b.URL
	want := map[string]string{
		A + "/": "captured", A + "/a": "captured", A + "/b": "captured", A + "/redirect": "captured",
		A + "/private/x": "skipped", B + "/": "captured", B + "/second": "captured", A + "/c": "captured",
	}
	got := map[string]string{}
	for _, p := range pages {
		got[p.url] = p.state
		if p.state == "skipped" && p.skip != crawl.SkipRobots {
			t.Errorf("%s skipped for %q, want robots", p.url, p.skip)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pages:\n got %v\nwant %v", got, want)
	}

	// What the sites saw: robots.txt once per host per level, the
	// disallowed page never, the 429 page twice, B's disallow-all for *
	// not applied to our token's group, C (skipped by the rules) never
	// asked for robots.txt.
	if n := site.a.hit("/robots.txt"); n != 3 {
		t.Errorf("A's robots.txt fetched %d times, want 3 (once per level)", n)
	}
	if n := site.b.hit("/robots.txt"); n != 1 {
		t.Errorf("B's robots.txt fetched %d times, want 1", n)
	}
	if n := site.a.hit("/private/x"); n != 0 {
		t.Errorf("the disallowed page was fetched %d times", n)
	}
	if n := site.a.hit("/b"); n != 2 {
		t.Errorf("/b was asked %d times, want 2 (429, then the retry)", n)
	}
	if n := site.a.hit("/nofollow") + site.c.hit("/p") + site.b.hit("/x"); n != 0 {
		t.Errorf("a nofollow, skipped or not-followed link was fetched (%d)", n)
	}
	if n := capt.count(A + "/b"); n != 2 {
		t.Errorf("/b captured %d times, want 2", n)
	}

	// The archives are registered and visible in the archive list.
	e.drain()
	access, err := e.app.App.Access(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	list, err := access.List(e.ctx, alice.Subject, alice.Orgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, a := range list.Archives {
		sources = append(sources, a.SourceURL)
	}
	slices.Sort(sources)
	wantSources := []string{A + "/", A + "/a", A + "/b", A + "/c", A + "/redirect", B + "/", B + "/second"}
	slices.Sort(wantSources)
	if !slices.Equal(sources, wantSources) {
		t.Errorf("visible archives %v, want %v", sources, wantSources)
	}
	if n := len(e.objects(".wacz")); n != len(wantSources) {
		t.Errorf("%d WACZ objects, want %d (one per captured page)", n, len(wantSources))
	}

	// The decisions explain every page not captured: the robots skip is
	// listed with its sample, and the link skipped by rule 1 is a decision.
	dec, err := svc.Decisions(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	var robotsSamples []string
	for _, rd := range dec.Robots {
		robotsSamples = append(robotsSamples, rd.Samples...)
	}
	for _, p := range pages {
		if p.state != "captured" && !slices.Contains(robotsSamples, p.url) {
			t.Errorf("%s (%s) is not explained by the decisions' robots list %v", p.url, p.state, robotsSamples)
		}
	}
	skipped := false
	for _, d := range dec.Decisions {
		if d.Rule == 1 && d.Action == "skip" && slices.Contains(d.Samples, site.c.URL+"/p") {
			skipped = true
		}
	}
	if !skipped {
		t.Errorf("no decision says rule 1 skipped %s/p: %+v", site.c.URL, dec.Decisions)
	}

	// The politeness report, and the raw lag(finished_at) check of
	// docs/crawling.md.
	pol := &politeness.Service{Crawls: svc, Store: e.store}
	rep, err := pol.Report(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Errorf("politeness report not OK: %+v", rep)
	}
	delays := map[string]int{}
	for _, h := range rep.Hosts {
		delays[h.Host] = h.DelayMs
		if h.Overlaps != 0 || h.ShortGaps != 0 {
			t.Errorf("host %s: %d overlaps, %d short gaps", h.Host, h.Overlaps, h.ShortGaps)
		}
		switch h.Host {
		case hostOf(A):
			if h.DelayMs != 300 || h.DelaySource != runner.SourceCrawlDelay || h.Robots.Outcome != runner.RobotsFetched ||
				h.Robots.Skipped != 1 || h.Backoff == nil || h.Backoff.Count != 1 || h.Backoff.MaxMs != 1000 || h.Retries != 1 {
				t.Errorf("host A: %+v (backoff %+v)", h, h.Backoff)
			}
		case hostOf(B):
			if h.DelayMs != 400 || h.DelaySource != runner.SourceCap || h.CrawlDelayMs == nil || *h.CrawlDelayMs != 5000 || h.Gaps != 1 {
				t.Errorf("host B: %+v", h)
			}
		default:
			t.Errorf("unexpected host %s in the report", h.Host)
		}
	}
	checkLag(t, e, id, delays)
}

// checkLag runs the query of docs/crawling.md and holds every gap to the host's delay:
// never negative (an overlap), never shorter than the delay.
func checkLag(t *testing.T, e *env, id string, delays map[string]int) {
	t.Helper()
	rows, err := e.store.Pool.Query(e.ctx, `
		SELECT host, extract(epoch FROM submitted_at - prev) * 1000 FROM (
			SELECT host, lag(finished_at) OVER w AS prev, submitted_at
			FROM crawl_pages WHERE crawl_id = $1 AND submitted_at IS NOT NULL
			WINDOW w AS (PARTITION BY host ORDER BY submitted_at)) g
		WHERE prev IS NOT NULL`, id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var h string
		var gap float64
		if err := rows.Scan(&h, &gap); err != nil {
			t.Fatal(err)
		}
		n++
		d, ok := delays[h]
		if !ok {
			t.Errorf("gap on host %s, which the report does not list", h)
		}
		if gap < 0 || gap < float64(d) {
			t.Errorf("host %s: a gap of %.3f ms, delay %d ms", h, gap, d)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no gap was checked")
	}
}

// TestRestartResumesLevel: a runner stopped in the middle of a level keeps
// what it captured; a fresh service and runner on the same database finish
// the level and the crawl, and every page is captured exactly once.
func TestRestartResumesLevel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newHost(t)
	var body strings.Builder
	for i := range 8 {
		fmt.Fprintf(&body, `<a href="/p%d">p%d</a> `, i, i)
		a.page(fmt.Sprintf("/p%d", i), fmt.Sprintf("p%d", i), "")
	}
	a.page("/", "home", body.String())
	capt := newCounter(e)

	// The first runner stops before its fourth capture of level 1.
	stop, stopRun := context.WithCancel(context.Background())
	var depth1 atomic.Int32
	capt.before = func(_ context.Context, u string) error {
		if u != a.URL+"/" && depth1.Add(1) == 4 {
			stopRun()
			return stop.Err()
		}
		return nil
	}
	svc1, r1 := e.service(capt, runner.Config{})
	maxDepth, delay := 1, 0
	id, err := svc1.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, MaxDepth: &maxDepth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r1.Run(stop) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the first runner did not stop")
	}
	if finished := e.keptResults(id, 1); finished != 3 {
		t.Fatalf("the stopped runner kept %d results at depth 1, want 3", finished)
	}
	if v, _ := svc1.Get(e.ctx, alice, id); v.State != crawl.StateRunning {
		t.Fatalf("the crawl is %s after the stop, want running", v.State)
	}

	// A fresh service and runner, as after a restart: it finds the open
	// level by itself.
	capt.before = nil
	levels := make(chan runner.LevelEvent, 4)
	svc2, r2 := e.service(capt, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	runUntilDone(t, r2, levels, time.Minute)
	v, err := svc2.Get(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != crawl.StateSucceeded || v.PagesCaptured != 9 {
		t.Fatalf("crawl %s with %d pages captured, want succeeded with 9", v.State, v.PagesCaptured)
	}
	for i := range 8 {
		u := fmt.Sprintf("%s/p%d", a.URL, i)
		if n := capt.count(u); n != 1 {
			t.Errorf("%s captured %d times, want once", u, n)
		}
	}
	// The bucket agrees: one successful capture per page.
	perURL := e.successes()
	if n := len(e.objects(".wacz")); n != 9 {
		t.Errorf("%d WACZ objects, want 9", n)
	}
	if len(perURL) != 9 {
		t.Errorf("manifests for %d pages, want 9", len(perURL))
	}
	for u, n := range perURL {
		if n != 1 {
			t.Errorf("%s has %d manifests", u, n)
		}
	}
}

// TestClosedCrawlStopsTheLevel: a crawl closed while its level runs (by an
// operator, or the stall timeout) stops the runner's level; nothing more is
// captured and the level is not reported.
func TestClosedCrawlStopsTheLevel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newHost(t)
	var body strings.Builder
	for i := range 5 {
		fmt.Fprintf(&body, `<a href="/p%d">p%d</a> `, i, i)
		a.page(fmt.Sprintf("/p%d", i), "p", "")
	}
	a.page("/", "home", body.String())
	capt := newCounter(e)
	levels := make(chan runner.LevelEvent, 4)
	kept := make(chan struct{}, 8)
	svc, r := e.service(capt, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }, OnPage: func(ev runner.PageEvent) {
		if ev.Depth == 1 {
			kept <- struct{}{}
		}
	}})
	var once sync.Once
	var id string
	// The crawl is closed as p2 starts, once p0's and p1's results are
	// kept: the runner must not start p3, though it keeps nothing more that
	// would tell it (p2's result comes later, refused).
	capt.before = func(_ context.Context, u string) error {
		if strings.HasSuffix(u, "/p2") {
			once.Do(func() {
				for range 2 {
					select {
					case <-kept:
					case <-time.After(10 * time.Second):
						t.Error("p0's and p1's results were not kept")
					}
				}
				if _, err := svc.CloseFailed(e.ctx, id, "closed by the test"); err != nil {
					t.Error(err)
				}
			})
		}
		return nil
	}
	maxDepth, delay := 1, 0
	var err error
	id, err = svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, MaxDepth: &maxDepth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	var ev runner.LevelEvent
	for ev = range levels {
		if ev.Depth == 1 {
			break
		}
	}
	if ev.Result != nil || ev.Err == nil {
		t.Fatalf("level 1 of a closed crawl: %+v", ev)
	}
	if n := capt.count(a.URL + "/p3"); n != 0 {
		t.Errorf("a page after the close was captured %d times", n)
	}
	v, _ := svc.Get(e.ctx, alice, id)
	if v.State != crawl.StateFailed || v.Error == nil || *v.Error != "closed by the test" {
		t.Errorf("crawl %s (%v), want failed with the test's reason", v.State, v.Error)
	}
}

// diesAfterUploadOfP1 starts a depth-1 crawl of a three-page host and runs
// it until /p1's capture has written its objects, then stops the runner
// before it keeps /p1's result, as a process dying there would. It returns
// the host, the capturer (counting captures, nothing stopping it any
// more), the crawl service and the crawl's id.
func diesAfterUploadOfP1(t *testing.T, e *env) (*host, *counter, *crawl.Service, string) {
	t.Helper()
	a := threePageHost(t)
	capt := newCounter(e)
	stop, stopRun := context.WithCancel(context.Background())
	capt.after = func(_ context.Context, u string) error {
		if strings.HasSuffix(u, "/p1") {
			stopRun() // dies between the upload and keeping the result
			return stop.Err()
		}
		return nil
	}
	svc, r := e.service(capt, runner.Config{})
	maxDepth, delay := 1, 0
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, MaxDepth: &maxDepth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Run(stop); err != nil {
		t.Fatal(err)
	}
	capt.after = nil
	return a, capt, svc, id
}

// TestRestartRecoversCaptureInFlight: a runner that dies after a capture
// wrote its objects but before the result was kept leaves the task id it
// gave the capture; the next runner finds the capture's manifest and uses
// it instead of capturing the page again.
func TestRestartRecoversCaptureInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, capt, _, id := diesAfterUploadOfP1(t, e)
	levels := make(chan runner.LevelEvent, 4)
	svc2, r2 := e.service(capt, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	runUntilDone(t, r2, levels, time.Minute)
	v, err := svc2.Get(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != crawl.StateSucceeded || v.PagesCaptured != 4 {
		t.Fatalf("crawl %s, %d captured; want succeeded with 4", v.State, v.PagesCaptured)
	}
	for i := range 3 {
		u := fmt.Sprintf("%s/p%d", a.URL, i)
		if n := capt.count(u); n != 1 {
			t.Errorf("%s captured %d times, want once", u, n)
		}
	}
	if n := e.successes()[a.URL+"/p1"]; n != 1 {
		t.Errorf("%s has %d successful manifests, want 1", a.URL+"/p1", n)
	}
}

// TestCloseRegistersCaptureItsDeadRunnerLeft: a runner that dies after a
// capture wrote its objects but before the result was kept, in a crawl
// that is then closed rather than resumed (a person stops it, or the stall
// timeout fails it), leaves no WACZ outside the ledger: the close finds
// the capture by the task its begin recorded and registers its archive,
// its page naming the capture with its times. Nothing is captured again.
func TestCloseRegistersCaptureItsDeadRunnerLeft(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		close func(t *testing.T, e *env, svc *crawl.Service, id string)
	}{
		{"stopped", func(t *testing.T, e *env, svc *crawl.Service, id string) {
			if res, err := svc.Stop(e.ctx, alice, id); err != nil || !res.Stopped {
				t.Fatalf("stop: %+v %v", res, err)
			}
		}},
		{"stalled", func(t *testing.T, e *env, svc *crawl.Service, id string) {
			time.Sleep(50 * time.Millisecond)
			if ids, err := svc.CloseStalled(e.ctx, 10*time.Millisecond); err != nil || len(ids) != 1 || ids[0] != id {
				t.Fatalf("close stalled: %v %v", ids, err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			a, capt, svc, id := diesAfterUploadOfP1(t, e)
			svc.InFlight = runner.InFlight{Capturer: capt}
			p1 := a.URL + "/p1"
			var task string
			if err := e.store.Pool.QueryRow(e.ctx, `SELECT task_id FROM crawl_runner_results WHERE crawl_id = $1 AND url = $2 AND result IS NULL`, id, p1).Scan(&task); err != nil {
				t.Fatalf("the begin of %s without a result: %v", p1, err)
			}
			if n := e.successes()[p1]; n != 1 {
				t.Fatalf("%s has %d successful manifests in the bucket, want the dead runner's 1", p1, n)
			}
			c.close(t, e, svc, id)
			var archives, named int
			if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM archives WHERE task_id = $1::uuid`, task).Scan(&archives); err != nil {
				t.Fatal(err)
			}
			if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND url = $2 AND task_id = $3
				AND submitted_at IS NOT NULL AND finished_at >= submitted_at`, id, p1, task).Scan(&named); err != nil {
				t.Fatal(err)
			}
			if archives != 1 || named != 1 {
				t.Errorf("after the close: %d archives of %s's capture (want 1), its page names it with its times: %v", archives, p1, named == 1)
			}
			if n := capt.count(p1); n != 1 {
				t.Errorf("%s captured %d times, want once", p1, n)
			}
			// The page reads captured, with its archive, on the crawl's
			// pages.
			list, err := (&politeness.PagesService{Crawls: svc, Store: e.store}).Pages(e.ctx, alice, id, 0, 100, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range list.Pages {
				if p.URL == p1 && (p.State != "captured" || p.ArchiveID == nil) {
					t.Errorf("%s reads %s, archive %v", p1, p.State, p.ArchiveID)
				}
			}
		})
	}
}

// downCapturer is a backend that cannot be used at all.
type downCapturer struct{ calls atomic.Int32 }

func (d *downCapturer) Capture(context.Context, runner.CaptureRequest) (runner.CaptureOutcome, error) {
	d.calls.Add(1)
	return runner.CaptureOutcome{}, errors.New("no BrowserHive endpoint could be reached (test)")
}

// TestBackendDownClosesCrawl: a capture backend that stays unusable is
// waited for, page not failed, until GiveUpAfter; then the crawl is closed
// failed naming the cause, and no page is reported.
func TestBackendDownClosesCrawl(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newHost(t)
	a.page("/", "home", "")
	down := &downCapturer{}
	levels := make(chan runner.LevelEvent, 4)
	svc, r := e.service(down, runner.Config{GiveUpAfter: 1500 * time.Millisecond, OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	maxDepth := 0
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, MaxDepth: &maxDepth})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()
	select {
	case ev := <-levels:
		if ev.Result != nil || ev.Err == nil {
			t.Errorf("level event %+v, want an error", ev)
		}
	case <-time.After(time.Minute):
		t.Fatal("the level never ended")
	}
	v, err := svc.Get(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != crawl.StateFailed || v.Error == nil || !strings.Contains(*v.Error, "no BrowserHive endpoint could be reached") {
		t.Errorf("crawl %s (%v), want failed naming the backend", v.State, v.Error)
	}
	if down.calls.Load() < 2 {
		t.Errorf("the backend was tried %d times, want it retried before giving up", down.calls.Load())
	}
	var pending int
	if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND state = 'pending'`, id).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 1 {
		t.Errorf("%d pending pages, want the page left unreported", pending)
	}
}
