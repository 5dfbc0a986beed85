package crawl_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TestStopRegistersWhatTheRunnerKept: a stop keeps every capture the
// runner kept before it. The captures whose results were kept but not yet
// registered (the last moments before the stop, or an early registration
// that failed) are registered in the stop's transaction, as an early
// registration would: archive, submission, outbox row, the page naming its
// capture job and staying pending. A capture already registered is not
// registered twice; a failed one and one that is another crawl's are not
// registered; a result kept after the stop is refused. A capture in flight
// at the stop (begun before it) is registered when it ends; one begun
// after it is not.
func TestStopRegistersWhatTheRunnerKept(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := "https://www.example.com/other"
	third := "https://docs.example.org/third"
	inFlight := "https://www.example.com/in-flight"
	id := e.start(crawl.StartRequest{Seeds: []string{www, docs, other, third, inFlight}, Rules: siteRules, MaxDepth: ptr(1)})
	keptOnly := e.write(capture{url: www})
	early := e.write(capture{url: docs})
	failed := e.write(capture{url: other, status: "failed", reported: crawl.StatusFailed})
	e.crawlID = "5b0a3c1e-0000-4000-8000-000000000000"
	foreign := e.write(capture{url: third}) // another crawl's capture, kept under this crawl's page
	e.crawlID = id
	keep := func(p crawl.PageReport) bool { return e.keepResult(id, p) }
	for _, p := range []crawl.PageReport{keptOnly, early, failed, foreign} {
		if !keep(p) {
			t.Fatalf("keeping %s: the crawl is not running", p.URL)
		}
	}
	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(early)}); n != 1 || err != nil {
		t.Fatalf("register %s early: %d, %v", docs, n, err)
	}
	// A capture in flight at the stop: begun before it, its result not
	// kept.
	flying := e.write(capture{url: inFlight})
	if running, err := e.store.RunnerBegin(e.ctx, id, 0, inFlight, "www.example.com", flying.TaskID, flying.SubmittedAt); err != nil || !running {
		t.Fatalf("begin %s: %v, %v", inFlight, running, err)
	}
	rows := func() [3]int {
		return [3]int{e.count(`SELECT count(*) FROM archives`), e.count(`SELECT count(*) FROM capture_submissions`), e.count(`SELECT count(*) FROM fga_outbox`)}
	}
	if got := rows(); got != [3]int{1, 1, 1} {
		t.Fatalf("before the stop: %v archives, submissions, outbox rows; want 1 each", got)
	}

	res, err := e.svc.Stop(e.ctx, alice, id)
	if err != nil || !res.Stopped || res.State != crawl.StateSucceeded {
		t.Fatalf("stop: %+v, %v", res, err)
	}
	if got := rows(); got != [3]int{2, 2, 2} {
		t.Fatalf("after the stop: %v archives, submissions, outbox rows; want 2 each (the kept capture of %s registered by the stop)", got, www)
	}
	for _, p := range []crawl.PageReport{keptOnly, early} {
		if n := e.count(`SELECT count(*) FROM archives WHERE task_id = $1::uuid`, p.TaskID); n != 1 {
			t.Errorf("%s: %d archives of its capture, want 1", p.URL, n)
		}
		if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND url = $2 AND task_id = $3 AND state = 'pending'`, id, p.URL, p.TaskID); n != 1 {
			t.Errorf("%s: the stopped level's page does not name its capture job (or is no longer pending)", p.URL)
		}
	}
	for _, p := range []crawl.PageReport{failed, foreign} {
		if n := e.count(`SELECT count(*) FROM archives WHERE task_id = $1::uuid`, p.TaskID); n != 0 {
			t.Errorf("%s: %d archives registered by the stop, want none", p.URL, n)
		}
	}
	if v := e.get(id); v.State != crawl.StateSucceeded || v.StopReason == nil || *v.StopReason != crawl.StopStopped {
		t.Errorf("the crawl after its stop: %s %v", v.State, v.StopReason)
	}

	// Nothing is kept after the stop, and a second stop changes nothing.
	late := e.write(capture{url: third})
	if keep(late) {
		t.Errorf("a result kept after the stop")
	}
	before := e.snapshot(id)
	if res, err := e.svc.Stop(e.ctx, alice, id); err != nil || res.Stopped {
		t.Errorf("stopped again: %+v, %v", res, err)
	}
	if after := e.snapshot(id); after != before {
		t.Errorf("a second stop wrote:\n%s\nwas\n%s", after, before)
	}

	// The capture in flight ends after the stop; its result is not kept,
	// and the runner registers it: it began before the stop. Another
	// task's capture of that page, or of a page begun after the stop, is
	// not registered.
	if keep(flying) {
		t.Errorf("the in-flight capture's result was kept after the stop")
	}
	otherTask := e.write(capture{url: inFlight})
	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(otherTask)}); n != 0 || err != nil {
		t.Errorf("another task's capture of the in-flight page after the stop: registered %d, %v; want 0", n, err)
	}
	if running, err := e.store.RunnerBegin(e.ctx, id, 0, third, "docs.example.org", late.TaskID, late.SubmittedAt); err != nil || running {
		t.Errorf("a capture begun after the stop: running %v, %v", running, err)
	}
	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(late)}); n != 0 || err != nil {
		t.Errorf("a capture begun after the stop: registered %d, %v; want 0", n, err)
	}
	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(flying)}); n != 1 || err != nil {
		t.Fatalf("the capture in flight at the stop: registered %d, %v; want 1", n, err)
	}
	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(flying)}); n != 0 || err != nil {
		t.Errorf("registered again: %d, %v; want 0", n, err)
	}
	if got := rows(); got != [3]int{3, 3, 3} {
		t.Fatalf("after the in-flight capture: %v archives, submissions, outbox rows; want 3 each", got)
	}
	// Its page names its capture job and records its times (no result of
	// it is kept): the politeness timeline shows it.
	if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND url = $2 AND task_id = $3 AND state = 'pending'
		AND submitted_at = $4 AND finished_at = $5`, id, inFlight, flying.TaskID, flying.SubmittedAt, flying.FinishedAt); n != 1 {
		t.Errorf("the in-flight page does not name its capture job with its times")
	}
	if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND url = $2 AND finished_at IS NULL`, id, www); n != 1 {
		t.Errorf("a page whose result was kept has times of its own")
	}
}

// keepResult keeps p as the runner keeps a page's result at depth 0 of
// the crawl id, and answers whether the crawl was running (a result is
// kept only then).
func (e *env) keepResult(id string, p crawl.PageReport) bool {
	e.t.Helper()
	data, err := json.Marshal(p)
	if err != nil {
		e.t.Fatal(err)
	}
	running, err := e.store.RunnerSave(e.ctx, id, ledger.RunnerPageResult{
		URL: p.URL, Host: host(e.t, p.URL), Depth: 0, TaskID: p.TaskID, SubmittedAt: p.SubmittedAt, FinishedAt: p.FinishedAt,
		Result: data, Attempts: 1,
	}, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return running
}

// host is u's host, as the runner keys its results.
func host(t testing.TB, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return p.Host
}

// TestFailingACrawlRegistersWhatTheRunnerKept: a crawl closed failed (by
// its runner or an operator, or by the stall timeout) keeps, like a stop,
// the captures its runner kept: their archives are registered in the
// transaction that closes it. A crawl the stall timeout does not close
// registers nothing.
func TestFailingACrawlRegistersWhatTheRunnerKept(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		close func(e *env, id string) bool
	}{
		{"closed failed", func(e *env, id string) bool {
			res, err := e.svc.CloseFailed(e.ctx, id, "the capture backend stayed unusable")
			if err != nil {
				e.t.Fatal(err)
			}
			return res.Closed
		}},
		{"stalled", func(e *env, id string) bool {
			if ids, err := e.svc.CloseStalled(e.ctx, time.Hour); err != nil || len(ids) != 0 {
				e.t.Fatalf("a crawl that progressed: closed %v, %v", ids, err)
			}
			if n := e.count(`SELECT count(*) FROM archives`); n != 0 {
				e.t.Fatalf("a crawl the stall timeout left running: %d archives registered", n)
			}
			e.clock.Advance(2 * time.Hour)
			ids, err := e.svc.CloseStalled(e.ctx, time.Hour)
			if err != nil {
				e.t.Fatal(err)
			}
			return len(ids) == 1 && ids[0] == id
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			id := e.start(crawl.StartRequest{Seeds: []string{www, docs}, Rules: siteRules, MaxDepth: ptr(1)})
			p := e.write(capture{url: www})
			if !e.keepResult(id, p) {
				t.Fatal("keep: the crawl is not running")
			}
			if !c.close(e, id) {
				t.Fatal("the crawl was not closed")
			}
			if v := e.get(id); v.State != crawl.StateFailed {
				t.Errorf("the crawl is %s, want failed", v.State)
			}
			if n := e.count(`SELECT count(*) FROM archives WHERE task_id = $1::uuid`, p.TaskID); n != 1 {
				t.Errorf("%d archives of the kept capture, want 1", n)
			}
			if n := e.count(`SELECT count(*) FROM fga_outbox`); n != 1 {
				t.Errorf("%d outbox rows, want the kept capture's 1", n)
			}
			if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND url = $2 AND task_id = $3`, id, p.URL, p.TaskID); n != 1 {
				t.Errorf("the page does not name its capture job")
			}
		})
	}
}

// TestInFlightCaptureKeptWhateverTheRunnersClock: a capture the runner
// began while the crawl ran is registered when it ends after a stop, even
// when the runner's clock is ahead of the clock of the process that
// stopped the crawl. What says it began before the stop is its begin,
// which the database records only while the crawl runs, not the times two
// processes read from their own clocks.
func TestInFlightCaptureKeptWhateverTheRunnersClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{Seeds: []string{www}, Rules: siteRules, MaxDepth: ptr(1)})
	flying := e.write(capture{url: www})
	// The runner's clock runs 5 s ahead of the stopping process's.
	flying.SubmittedAt = e.clock.Now().Add(5 * time.Second)
	flying.FinishedAt = flying.SubmittedAt.Add(time.Second)
	if running, err := e.store.RunnerBegin(e.ctx, id, 0, www, host(t, www), flying.TaskID, flying.SubmittedAt); err != nil || !running {
		t.Fatalf("begin %s: %v, %v", www, running, err)
	}
	if res, err := e.svc.Stop(e.ctx, alice, id); err != nil || !res.Stopped {
		t.Fatalf("stop: %+v, %v", res, err)
	}
	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(flying)}); n != 1 || err != nil {
		t.Fatalf("the capture in flight at the stop, begun at a time after it by the runner's clock: registered %d, %v; want 1", n, err)
	}
	if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND url = $2 AND task_id = $3 AND submitted_at = $4`,
		id, www, flying.TaskID, flying.SubmittedAt); n != 1 {
		t.Errorf("its page does not name its capture job with the runner's times")
	}
}
