package crawl_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TestStartRefusals: each refusal is its typed error, with the data the
// edges word it from (the API's exact bodies are pinned in package api), and
// writes nothing.
func TestStartRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.targets.AddTargets(e.ctx, "initech", []string{"https://initech.example/"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		caller crawl.Caller
		req    crawl.StartRequest
		isErr  error
		// msg is the *RequestError's sentence, or body the JSON body of the
		// rule checks' refusal it carries.
		msg, body string
	}{
		{"no permission", bob, crawl.StartRequest{Seeds: []string{www}}, ledger.ErrNotFound, "", ""},
		{"no organization", crawl.Caller{Subject: "alice"}, crawl.StartRequest{Seeds: []string{www}}, ledger.ErrNotFound, "", ""},
		{"both", alice, crawl.StartRequest{Seeds: []string{www}, FromTargets: &crawl.FromTargets{}}, crawl.ErrInvalid,
			"provide exactly one of seeds or fromTargets", ""},
		{"neither", alice, crawl.StartRequest{}, crawl.ErrInvalid, "provide exactly one of seeds or fromTargets", ""},
		{"empty seeds", alice, crawl.StartRequest{Seeds: []string{}}, crawl.ErrInvalid, "seeds must not be empty", ""},
		// acme has no targets; initech's are never mixed in.
		{"no targets", alice, crawl.StartRequest{FromTargets: &crawl.FromTargets{}}, crawl.ErrInvalid,
			"no enabled capture targets for this organization", ""},
		{"ftp seed", alice, crawl.StartRequest{Seeds: []string{www, "ftp://example.com/"}}, crawl.ErrInvalid,
			"", `{"error":"every seed must be an http(s) URL"}`},
		{"unparsable seed", alice, crawl.StartRequest{Seeds: []string{"not a url"}}, crawl.ErrInvalid,
			"", `{"error":"every seed must be an http(s) URL"}`},
		{"invalid pattern", alice, crawl.StartRequest{Seeds: []string{www}, Rules: []rules.Rule{{Action: rules.Follow, Pattern: "Example.COM"}}},
			crawl.ErrInvalid, "", `{"error":"invalid rule patterns","rules":[{"rule":1,"pattern":"Example.COM"}]}`},
		{"shadowed", alice, crawl.StartRequest{Seeds: []string{www}, Rules: []rules.Rule{{Action: rules.Follow, Pattern: "same-site"}, {Action: rules.Skip, Pattern: "same-host"}}},
			crawl.ErrInvalid, "", `{"error":"rules that can never match","rules":[{"rule":2,"coveredBy":1}]}`},
		{"seed not followed", alice, crawl.StartRequest{Seeds: []string{www, docs}, Rules: []rules.Rule{{Action: rules.Follow, Pattern: "example.com"}}},
			crawl.ErrInvalid, "", `{"error":"seeds the rules do not follow","seeds":["https://docs.example.org/"]}`},
		{"rule shape", alice, crawl.StartRequest{Seeds: []string{www}, Rules: []rules.Rule{}}, crawl.ErrInvalid, "", ""},
		{"range", alice, crawl.StartRequest{Seeds: []string{www}, MaxPages: ptr(0)}, crawl.ErrInvalid, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.svc.Start(e.ctx, tc.caller, tc.req)
			if !errors.Is(err, tc.isErr) {
				t.Fatalf("err = %v, want %v", err, tc.isErr)
			}
			var req *crawl.RequestError
			var named rules.BodyError
			switch {
			case tc.msg != "" && (!errors.As(err, &req) || req.Message != tc.msg || req.Err != nil):
				t.Fatalf("err = %#v, want the sentence %q", err, tc.msg)
			case tc.body != "" && (!errors.As(err, &req) || !errors.As(req.Err, &named) || mustJSON(named.Body()) != tc.body):
				t.Fatalf("err = %v, want a rule check refused with %s", err, tc.body)
			}
		})
	}
	if n := e.count(`SELECT count(*) FROM crawls`); n != 0 || e.disp.count() != 0 {
		t.Errorf("%d crawls written, %d dispatched by refused starts", n, e.disp.count())
	}
}

func TestStartFromTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var urls []string
	for i := 0; i < 35; i++ {
		urls = append(urls, "https://t"+string(rune('a'+i%26))+".example/"+string(rune('0'+i/26))+"/x")
	}
	if _, err := e.targets.AddTargets(e.ctx, "acme", urls, []string{"daily"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.targets.AddTargets(e.ctx, "initech", []string{"https://initech.example/"}, nil); err != nil {
		t.Fatal(err)
	}
	ts, _ := e.targets.ListTargets(e.ctx, "acme")
	if _, err := e.targets.SetTargetEnabled(e.ctx, "acme", ts[0].ID, false); err != nil {
		t.Fatal(err)
	}

	id := e.start(crawl.StartRequest{FromTargets: &crawl.FromTargets{}})
	v := e.get(id)
	if v.MaxDepth != 0 || v.MaxPages != 34 || len(v.Seeds) != 34 || v.Seeds[0] != urls[1] || slices.Contains(v.Seeds, "https://initech.example/") {
		t.Errorf("from all targets: depth %d pages %d seeds %d (first %s)", v.MaxDepth, v.MaxPages, len(v.Seeds), v.Seeds[0])
	}
	if l := e.disp.last(t); len(l.Frontier) != 34 || l.CaptureFormats.Links {
		t.Errorf("dispatched %d pages, links %v", len(l.Frontier), l.CaptureFormats.Links)
	}
	if _, err := e.svc.Fail(e.ctx, alice, id, crawl.FailRequest{}); err != nil {
		t.Fatal(err)
	}

	id = e.start(crawl.StartRequest{FromTargets: &crawl.FromTargets{Limit: ptr(5)}, MaxDepth: ptr(2)})
	v = e.get(id)
	if v.MaxDepth != 2 || v.MaxPages != 30 || !slices.Equal(v.Seeds, urls[1:6]) {
		t.Errorf("limit 5: depth %d pages %d seeds %v", v.MaxDepth, v.MaxPages, v.Seeds)
	}
}

// TestConcurrentStarts: at a bound of one crawl per organization, two
// Starts at once give exactly one crawl and one conflict naming it.
func TestConcurrentStarts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.svc.CrawlsPerOrg = 1
	for round := 0; round < 3; round++ {
		var wg sync.WaitGroup
		ids, errs := make([]string, 2), make([]error, 2)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ids[i], errs[i] = e.svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{www}})
			}()
		}
		wg.Wait()
		won := 0
		if errs[0] != nil {
			won = 1
		}
		lost := 1 - won
		var ac *crawl.ActiveCrawlError
		if errs[won] != nil || !errors.As(errs[lost], &ac) || !errors.Is(errs[lost], crawl.ErrConflict) || ac.CrawlID != ids[won] {
			t.Fatalf("round %d: %v / %v (ids %v)", round, errs[0], errs[1], ids)
		}
		if v := e.get(ids[won]); !ac.StartedAt.Equal(v.StartedAt) {
			t.Errorf("the refusal names a crawl started at %s, want %s", ac.StartedAt, v.StartedAt)
		}
		if n := e.count(`SELECT count(*) FROM crawls WHERE state = 'running'`); n != 1 {
			t.Fatalf("%d running crawls", n)
		}
		if _, err := e.svc.Fail(e.ctx, alice, ids[won], crawl.FailRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.count(`SELECT count(*) FROM crawls`); n != 3 {
		t.Errorf("%d crawls, want 3", n)
	}
}

func TestListAndGet(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var ids []string
	for i := 0; i < 53; i++ {
		if i == 52 {
			e.clock.Advance(-time.Minute) // two crawls may share a start time
		}
		ids = append(ids, e.start(crawl.StartRequest{Seeds: []string{www}}))
		if i%2 == 0 {
			if _, err := e.svc.Fail(e.ctx, alice, ids[i], crawl.FailRequest{}); err != nil {
				t.Fatal(err)
			}
		} else {
			e.report(ids[i], crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{e.write(capture{url: www})}})
		}
		e.clock.Advance(time.Minute)
	}
	// Newest first, by (startedAt, id), 50 then 3, none lost or repeated.
	page1, err := e.svc.List(e.ctx, alice, "", nil)
	if err != nil || len(page1.Crawls) != 50 || page1.Next == nil {
		t.Fatalf("page 1: %d rows next %v err %v", len(page1.Crawls), page1.Next, err)
	}
	page2, err := e.svc.List(e.ctx, alice, "", page1.Next)
	if err != nil || len(page2.Crawls) != 3 || page2.Next != nil {
		t.Fatalf("page 2: %d rows next %v err %v", len(page2.Crawls), page2.Next, err)
	}
	seen := map[string]bool{}
	all := append(page1.Crawls, page2.Crawls...)
	for i, c := range all {
		if seen[c.CrawlID] {
			t.Errorf("%s listed twice", c.CrawlID)
		}
		seen[c.CrawlID] = true
		if i > 0 && (c.StartedAt.After(all[i-1].StartedAt) || c.StartedAt.Equal(all[i-1].StartedAt) && c.CrawlID > all[i-1].CrawlID) {
			t.Errorf("row %d out of order", i)
		}
		if c.OrgID != "acme" || c.RequestedBy != "alice" {
			t.Errorf("row %+v", c)
		}
		wantWacz := 0
		if c.State == crawl.StateSucceeded {
			wantWacz = 1
		}
		if c.WaczCount != wantWacz {
			t.Errorf("%s (%s): waczCount %d, want %d", c.CrawlID, c.State, c.WaczCount, wantWacz)
		}
	}
	if len(seen) != 53 {
		t.Errorf("%d distinct crawls listed, want 53", len(seen))
	}
	failed, err := e.svc.List(e.ctx, alice, crawl.StateFailed, nil)
	if err != nil || len(failed.Crawls) != 27 || failed.Crawls[0].State != crawl.StateFailed {
		t.Errorf("failed: %d %v", len(failed.Crawls), err)
	}
	if l, err := e.svc.List(e.ctx, bob, "", nil); err != nil || len(l.Crawls) != 0 || l.Crawls == nil {
		t.Errorf("bob: %+v %v, want an empty list", l, err)
	}
	if _, err := e.svc.List(e.ctx, alice, "done", nil); !errors.Is(err, crawl.ErrInvalid) {
		t.Errorf("state=done: %v", err)
	}

	if _, err := e.svc.Get(e.ctx, alice, "nope"); !errors.Is(err, crawl.ErrInvalid) {
		t.Errorf("Get(nope) = %v", err)
	}
	if _, err := e.svc.Get(e.ctx, alice, "5b0a3c1e-0000-4000-8000-000000000000"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Get(unknown) = %v", err)
	}
	if _, err := e.svc.Get(e.ctx, bob, ids[0]); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Get by bob = %v", err)
	}
	if _, err := e.svc.Decisions(e.ctx, bob, ids[0]); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Decisions by bob = %v", err)
	}
	if _, err := e.svc.Fail(e.ctx, bob, ids[1], crawl.FailRequest{}); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Fail by bob = %v", err)
	}
	// An unknown crawl looks like another organization's: not found (the
	// original answered {"closed":false}, which told the two apart).
	if r, err := e.svc.Fail(e.ctx, alice, "5b0a3c1e-0000-4000-8000-000000000000", crawl.FailRequest{}); !errors.Is(err, ledger.ErrNotFound) || r.Closed {
		t.Errorf("Fail(unknown) = %v %v", r, err)
	}
}

func TestCloseStalled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{Seeds: []string{www}, MaxDepth: ptr(1)})
	e.clock.Advance(20 * time.Minute)
	if ids, err := e.svc.CloseStalled(e.ctx, 30*time.Minute); err != nil || len(ids) != 0 {
		t.Fatalf("after 20 min: %v %v", ids, err)
	}
	// A report is progress.
	e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{e.write(capture{url: www, linksInReport: true, links: links("https://www.example.com/1")})}})
	e.clock.Advance(20 * time.Minute)
	if ids, err := e.svc.CloseStalled(e.ctx, 30*time.Minute); err != nil || len(ids) != 0 {
		t.Fatalf("20 min after a report: %v %v", ids, err)
	}
	e.clock.Advance(11 * time.Minute)
	ids, err := e.svc.CloseStalled(e.ctx, 30*time.Minute)
	if err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("31 min after a report: %v %v", ids, err)
	}
	v := e.get(id)
	if v.State != crawl.StateFailed || str(v.StopReason) != rules.StopFailed || v.Error == nil || v.FinishedAt == nil {
		t.Errorf("stalled crawl = %+v", v)
	}
	if ids, err := e.svc.CloseStalled(e.ctx, 30*time.Minute); err != nil || len(ids) != 0 {
		t.Errorf("again: %v %v", ids, err)
	}
	// A new crawl can start now.
	e.start(crawl.StartRequest{Seeds: []string{www}})
}

func TestTargets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.targets.AddTargets(e.ctx, "acme", []string{"https://a.example/", "mailto:x@example.com", "not a url", "https://b.example/"}, nil)
	var bt *crawl.BadTargetsError
	if !errors.As(err, &bt) || len(bt.URLs) != 2 || bt.URLs[0].Input != "mailto:x@example.com" || bt.URLs[1].Input != "not a url" {
		t.Fatalf("bad URLs: %v", err)
	}
	if ts, _ := e.targets.ListTargets(e.ctx, "acme"); len(ts) != 0 {
		t.Fatalf("a refused add wrote %d targets", len(ts))
	}
	if _, err := e.targets.AddTargets(e.ctx, "", []string{"https://a.example/"}, nil); !errors.Is(err, crawl.ErrNoOrg) {
		t.Errorf("no org: %v", err)
	}
	// An organization or a label that cannot be one is refused before any
	// statement (PostgreSQL answered a NUL or bytes that are not UTF-8 with
	// SQLSTATE 22021), by every operation, and nothing is written.
	var req *crawl.RequestError
	for _, org := range []string{"a\x00b", "a\xffb", "a\xed\xa0\x80b", "acme#member", "user:acme", "*", "a b"} {
		if _, err := e.targets.AddTargets(e.ctx, org, []string{"https://a.example/"}, nil); !errors.As(err, &req) {
			t.Errorf("add for organization %q: %v", org, err)
		}
		if _, err := e.targets.ListTargets(e.ctx, org); !errors.As(err, &req) {
			t.Errorf("list of organization %q: %v", org, err)
		}
		if _, err := e.targets.SetTargetEnabled(e.ctx, org, 1, true); !errors.As(err, &req) {
			t.Errorf("enable in organization %q: %v", org, err)
		}
		if err := e.targets.RemoveTarget(e.ctx, org, 1); !errors.As(err, &req) {
			t.Errorf("remove in organization %q: %v", org, err)
		}
	}
	for _, l := range []string{"a\x00b", "a\xffb", "a\xed\xa0\x80b", "tab\there", strings.Repeat("l", crawl.MaxLabelBytes+1), "", " news"} {
		if _, err := e.targets.AddTargets(e.ctx, "acme", []string{"https://a.example/"}, []string{"news", l}); !errors.As(err, &req) {
			t.Errorf("label %.40q: %v", l, err)
		}
	}
	if ts, _ := e.targets.ListTargets(e.ctx, "acme"); len(ts) != 0 {
		t.Fatalf("refused adds wrote %d targets", len(ts))
	}

	added, err := e.targets.AddTargets(e.ctx, "acme", []string{"HTTPS://A.example", "https://b.example/#x", "https://a.example/"}, []string{"news", "news"})
	if err != nil || len(added) != 2 || !added[0].Added || added[0].URL != "https://a.example/" || !slices.Equal(added[0].Labels, []string{"news"}) {
		t.Fatalf("add: %+v %v", added, err)
	}
	if _, err := e.targets.SetTargetEnabled(e.ctx, "acme", added[0].ID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := e.targets.SetTargetEnabled(e.ctx, "initech", added[0].ID, true); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("another org's target: %v", err)
	}
	again, err := e.targets.AddTargets(e.ctx, "acme", []string{"https://a.example/", "https://b.example/", "https://c.example/"}, []string{"daily"})
	if err != nil || len(again) != 3 {
		t.Fatalf("re-add: %+v %v", again, err)
	}
	if a := again[0]; a.Added || !a.Reenabled || !a.Enabled || !slices.Equal(a.Labels, []string{"news", "daily"}) {
		t.Errorf("re-added disabled target = %+v", a)
	}
	if b := again[1]; b.Added || b.Reenabled || !slices.Equal(b.Labels, []string{"news", "daily"}) {
		t.Errorf("re-added enabled target = %+v", b)
	}
	if c := again[2]; !c.Added || !slices.Equal(c.Labels, []string{"daily"}) {
		t.Errorf("new target = %+v", c)
	}
	if _, err := e.targets.AddTargets(e.ctx, "initech", []string{"https://a.example/"}, nil); err != nil {
		t.Fatal(err)
	}
	if ts, _ := e.targets.ListTargets(e.ctx, "acme"); len(ts) != 3 {
		t.Errorf("acme has %d targets", len(ts))
	}
	if err := e.targets.RemoveTarget(e.ctx, "initech", again[2].ID); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("remove another org's target: %v", err)
	}
	if err := e.targets.RemoveTarget(e.ctx, "acme", again[2].ID); err != nil {
		t.Fatal(err)
	}
	if err := e.targets.RemoveTarget(e.ctx, "acme", again[2].ID); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("remove twice: %v", err)
	}
	if ts, _ := e.targets.ListTargets(e.ctx, "acme"); len(ts) != 2 {
		t.Errorf("acme has %d targets after removal", len(ts))
	}
}

// TestFailRefusesHostileReasons: a reason that did not come through the
// body decoder (the CLI's --reason) is checked too, and nothing is closed.
func TestFailRefusesHostileReasons(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{Seeds: []string{www}})
	for _, reason := range []string{"a\x00b", "a\xffb"} {
		if r, err := e.svc.Fail(e.ctx, alice, id, crawl.FailRequest{Reason: &reason}); !errors.Is(err, crawl.ErrInvalid) || r.Closed {
			t.Errorf("Fail(%q) = %v %v, want a validation error", reason, r, err)
		}
	}
	if v := e.get(id); v.State != crawl.StateRunning {
		t.Errorf("state %s after refused fails", v.State)
	}
}

// TestCrawlsPerOrganization: the bound is per organization and holds when
// many starts race: of six Starts at once with a bound of two, exactly two
// crawls run and four are refused naming the oldest; another organization
// still starts its crawls, and a crawl that ends frees a place.
func TestCrawlsPerOrganization(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.svc.CrawlsPerOrg = 2
	if err := e.fga.Write(e.ctx, []authz.Tuple{{User: "user:zoe", Relation: "submitter", Object: "organization:zeta"}}, nil); err != nil {
		t.Fatal(err)
	}
	zoe := crawl.Caller{Subject: "zoe", Orgs: []string{"zeta"}}
	var wg sync.WaitGroup
	ids, errs := make([]string, 6), make([]error, 6)
	for i := range 6 {
		wg.Go(func() { ids[i], errs[i] = e.svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{www}}) })
	}
	wg.Wait()
	var won []string
	refused := 0
	for i, err := range errs {
		var ac *crawl.ActiveCrawlError
		switch {
		case err == nil:
			won = append(won, ids[i])
		case errors.As(err, &ac) && errors.Is(err, crawl.ErrConflict) && ac.Limit == 2 && ac.CrawlID != "":
			refused++
		default:
			t.Fatalf("start %d: %v", i, err)
		}
	}
	if len(won) != 2 || refused != 4 {
		t.Fatalf("%d started, %d refused; want 2 and 4", len(won), refused)
	}
	if n := e.count(`SELECT count(*) FROM crawls WHERE state = 'running' AND org_id = 'acme'`); n != 2 {
		t.Fatalf("%d running crawls of acme", n)
	}
	// Another organization is not held back by acme's bound.
	for range 2 {
		if _, err := e.svc.Start(e.ctx, zoe, crawl.StartRequest{Seeds: []string{www}}); err != nil {
			t.Fatalf("zeta's start while acme is at its bound: %v", err)
		}
	}
	var ac *crawl.ActiveCrawlError
	if _, err := e.svc.Start(e.ctx, zoe, crawl.StartRequest{Seeds: []string{www}}); !errors.As(err, &ac) || slices.Contains(won, ac.CrawlID) {
		t.Fatalf("zeta's third start: %v (must not name acme's crawls %v)", err, won)
	}
	// A crawl that ends frees a place.
	if _, err := e.svc.Fail(e.ctx, alice, won[0], crawl.FailRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{www}}); err != nil {
		t.Fatalf("a start after one of acme's crawls ended: %v", err)
	}
}
