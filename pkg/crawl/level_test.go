package crawl_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// siteRules use every kind of rule: domain, URL prefix and scope patterns,
// with every action.
var siteRules = []rules.Rule{
	{Action: rules.Skip, Pattern: "ads.example.com"},
	{Action: rules.Skip, Pattern: "https://www.example.com/private/"},
	{Action: rules.Capture, Pattern: "HTTPS://WWW.EXAMPLE.COM:443/files/"}, // pinned normalised
	{Action: rules.Follow, Pattern: "same-site"},
	{Action: rules.Capture, Pattern: "any"},
}

const (
	www  = "https://www.example.com/"
	docs = "https://docs.example.org/"
)

// TestThreeLevelCrawl drives a crawl across several hosts through three
// levels and checks what each report decided and wrote.
func TestThreeLevelCrawl(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{
		Seeds: []string{www, docs, "https://www.example.com/#dup"}, Rules: siteRules,
		MaxDepth: ptr(2), MaxPages: ptr(50), PerHostDelayMs: ptr(0),
	})

	v := e.get(id)
	if got := v.Rules[2].Pattern; got != "https://www.example.com/files/" {
		t.Errorf("pinned rule 3 = %q, want the normalised prefix", got)
	}
	if !slices.Equal(v.Seeds, []string{www, docs}) || v.PagesDiscovered != 2 || v.State != crawl.StateRunning || v.OrgID != "acme" || v.RequestedBy != "alice" {
		t.Fatalf("started crawl = %+v", v)
	}
	l0 := e.disp.last(t)
	if l0.Depth != 0 || len(l0.Frontier) != 2 || l0.Frontier[0].URL != www || l0.Frontier[0].LastFinishedAt != nil ||
		l0.CaptureFormats != (crawl.Formats{WACZ: true, Links: true}) || l0.MaxDepth != 2 || l0.PerHostDelayMs != 0 || l0.HostParallelism != 4 {
		t.Fatalf("level 0 dispatched as %+v", l0)
	}

	// Level 0.
	wwwPage := e.write(capture{url: www, linksInReport: true, links: append(links(
		"https://www.example.com/a",
		"/b", // relative: resolved against the page
		"https://www.example.com/files/x.pdf",
		"https://www.example.com/private/secret",
		"https://ads.example.com/banner",
		"https://sub.ads.example.com/x",
		"https://badads.example.com/",
		"https://other.net/page",
		"mailto:someone@example.com",
		"https://www.example.com/a#top",
		"https://www.example.com/moved",
	), nofollow("https://www.example.com/nofollow"), link{Href: "https://www.example.com:8443/port"})})
	// The runner did not report this page's links file: the manifest names it.
	docsPage := e.write(capture{url: docs, final: "https://docs.example.org/en/", links: links(
		"https://docs.example.org/en/guide", "https://www.example.com/a")})
	res := e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{wwwPage, docsPage}})
	want1 := []string{
		"https://www.example.com/a", "https://www.example.com/b", "https://www.example.com/files/x.pdf",
		"https://badads.example.com/", "https://other.net/page", "https://www.example.com:8443/port",
		"https://docs.example.org/en/guide",
	}
	want1 = slices.Insert(want1, 5, "https://www.example.com/moved")
	if !slices.Equal(nextURLs(res), want1) || res.StopReason != nil || res.Next[0].Depth != 1 || res.Next[6].Host != "www.example.com:8443" {
		t.Fatalf("level 0 answer = %s, want next %v", mustJSON(res), want1)
	}
	l1 := e.disp.last(t)
	if l1.Depth != 1 || len(l1.Frontier) != 8 || !l1.CaptureFormats.Links {
		t.Fatalf("level 1 dispatched as %+v", l1)
	}
	for _, f := range l1.Frontier {
		wantLast := f.Host == "www.example.com" || f.Host == "docs.example.org"
		if (f.LastFinishedAt != nil) != wantLast {
			t.Errorf("frontier %s lastFinishedAt = %v", f.URL, f.LastFinishedAt)
		}
		if f.Host == "www.example.com" && !f.LastFinishedAt.Equal(wwwPage.FinishedAt) {
			t.Errorf("www lastFinishedAt = %v, want %v", f.LastFinishedAt, wwwPage.FinishedAt)
		}
	}

	// Level 1.
	rep1 := []crawl.PageReport{
		e.write(capture{url: "https://www.example.com/a", linksInReport: true, links: links("https://www.example.com/c", "https://www.example.com/d")}),
		// The runner saw a failure; the manifest says success: admitted,
		// corrected to captured, and its links are read from the manifest.
		e.write(capture{url: "https://www.example.com/b", reported: crawl.StatusFailed, skipReason: "deadline 145000ms を過ぎた",
			links: links("https://www.example.com/e")}),
		// A capture-only page: its links are not read.
		e.write(capture{url: "https://www.example.com/files/x.pdf", linksInReport: true, links: links("https://www.example.com/never-1")}),
		// Redirects off-site: judged by the final URL too, so only captured
		// (here the final URL is only in the links file)…
		noFinal(e.write(capture{url: "https://badads.example.com/", final: "https://evil.other.com/landing", linksInReport: true,
			links: links("https://badads.example.com/never-2")})),
		// …or dropped (no rule matches the final URL; it was reported).
		e.write(capture{url: "https://www.example.com/moved", final: "https://elsewhere.example.net/", linksInReport: true,
			links: links("https://www.example.com/never-4")}),
		e.write(capture{url: "https://other.net/page", linksInReport: true, links: links("https://other.net/never-3")}),
		{URL: "https://www.example.com:8443/port", Status: crawl.StatusSkipped, SkipReason: crawl.SkipRobots},
	}
	guide := e.write(capture{url: "https://docs.example.org/en/guide", reported: crawl.StatusFailed, skipReason: "http_error: 500", status: "http_error"})
	guide.ManifestLocation, guide.ManifestError = "", "the capture response carried no manifest outcome"
	rep1 = append(rep1, guide)
	res = e.report(id, crawl.LevelReport{Depth: 1, Results: rep1})
	want2 := []string{"https://www.example.com/c", "https://www.example.com/d", "https://www.example.com/e"}
	if !slices.Equal(nextURLs(res), want2) || res.StopReason != nil {
		t.Fatalf("level 1 answer = %s, want next %v", mustJSON(res), want2)
	}
	if l2 := e.disp.last(t); l2.Depth != 2 || len(l2.Frontier) != 3 || l2.CaptureFormats.Links {
		t.Fatalf("level 2 dispatched as %+v (links must not be forced on the last level)", l2)
	}

	// Level 2: the last one; its links are not read.
	var rep2 []crawl.PageReport
	for _, u := range want2 {
		rep2 = append(rep2, e.write(capture{url: u, linksInReport: true, links: links(u + "deeper")}))
	}
	res = e.report(id, crawl.LevelReport{Depth: 2, Results: rep2})
	if len(res.Next) != 0 || str(res.StopReason) != rules.StopMaxDepth {
		t.Fatalf("level 2 answer = %s, want no next and max_depth", mustJSON(res))
	}
	if n := e.disp.count(); n != 3 {
		t.Errorf("%d levels dispatched, want 3", n)
	}

	v = e.get(id)
	if v.State != crawl.StateSucceeded || str(v.StopReason) != rules.StopMaxDepth || v.FinishedAt == nil ||
		v.PagesCaptured != 11 || v.PagesDiscovered != 13 {
		t.Errorf("finished crawl = state %s stop %s finished %v captured %d discovered %d; want succeeded max_depth, 11 captured, 13 discovered",
			v.State, str(v.StopReason), v.FinishedAt, v.PagesCaptured, v.PagesDiscovered)
	}
	if len(v.Failures) != 1 || v.Failures[0].URL != "https://docs.example.org/en/guide" || str(v.Failures[0].Reason) != "http_error: 500" {
		t.Errorf("failures = %s", mustJSON(v.Failures))
	}

	// Pages as the reports left them.
	type pageRow struct {
		state, skip, final string
		fromURL            string
	}
	pages := map[string]pageRow{}
	rows, err := e.pool.Query(e.ctx, `
		SELECT p.url, p.state, coalesce(p.skip_reason, ''), coalesce(p.final_url, ''), coalesce(f.url, '')
		FROM crawl_pages p LEFT JOIN crawl_pages f ON f.id = p.discovered_from WHERE p.crawl_id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u string
		var r pageRow
		if err := rows.Scan(&u, &r.state, &r.skip, &r.final, &r.fromURL); err != nil {
			t.Fatal(err)
		}
		pages[u] = r
	}
	for u, want := range map[string]pageRow{
		www:                                   {state: "captured"},
		docs:                                  {state: "captured", final: "https://docs.example.org/en/"},
		"https://www.example.com/b":           {state: "captured", fromURL: www},
		"https://badads.example.com/":         {state: "captured", final: "https://evil.other.com/landing", fromURL: www},
		"https://www.example.com:8443/port":   {state: "skipped", skip: "robots", fromURL: www},
		"https://docs.example.org/en/guide":   {state: "failed", skip: "http_error: 500", fromURL: docs},
		"https://www.example.com/c":           {state: "captured", fromURL: "https://www.example.com/a"},
		"https://www.example.com/e":           {state: "captured", fromURL: "https://www.example.com/b"},
		"https://www.example.com/files/x.pdf": {state: "captured", fromURL: www},
		"https://www.example.com/moved":       {state: "captured", final: "https://elsewhere.example.net/", fromURL: www},
	} {
		if got := pages[u]; got != want {
			t.Errorf("page %s = %+v, want %+v", u, got, want)
		}
	}
	if len(pages) != 13 {
		t.Errorf("%d pages, want 13", len(pages))
	}
	for _, never := range []string{"never-1", "never-2", "never-3", "never-4", "deeper", "nofollow", "private/secret", "ads.example.com/banner"} {
		if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND url LIKE '%' || $2 || '%'`, id, never); n != 0 {
			t.Errorf("a page for %q was inserted", never)
		}
	}

	// Admission: one archive (and its tuples) per page the manifest says
	// was captured; a submission per page with a taskId, failures too.
	if n := e.count(`SELECT count(*) FROM archives`); n != 11 {
		t.Errorf("%d archives, want 11", n)
	}
	if n := e.count(`SELECT count(*) FROM fga_outbox`); n != 11 {
		t.Errorf("%d outbox rows, want 11", n)
	}
	if n := e.count(`SELECT count(*) FROM capture_submissions WHERE org_id = 'acme' AND submitted_by = 'alice' AND correlation_id = $1`, id); n != 12 {
		t.Errorf("%d submissions, want 12", n)
	}
	if n := e.count(`SELECT count(*) FROM capture_submissions WHERE manifest_key IS NULL AND manifest_error = 'the capture response carried no manifest outcome'`); n != 1 {
		t.Errorf("%d submissions with the reported manifest error, want 1", n)
	}
	if n := e.count(`SELECT count(*) FROM fga_outbox WHERE payload @> '{"writes":[{"user":"user:alice","relation":"owner"}]}' AND payload @> '{"writes":[{"user":"organization:acme","relation":"parent"}]}'`); n != 11 {
		t.Errorf("%d outbox rows carry the owner and organization tuples, want 11", n)
	}

	// What the rules decided.
	d, err := e.svc.Decisions(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		depth, rule  int
		action, host string
		links        int
	}
	var got []row
	for _, r := range d.Decisions {
		got = append(got, row{r.Depth, r.Rule, r.Action, r.Hostname, r.Links})
		if len(r.Samples) == 0 || len(r.Samples) > rules.MaxSamples {
			t.Errorf("decision %+v has %d samples", r, len(r.Samples))
		}
	}
	want := []row{
		{0, 1, "skip", "ads.example.com", 1},
		{0, 1, "skip", "sub.ads.example.com", 1},
		{0, 2, "skip", "www.example.com", 1},
		{0, 3, "capture", "www.example.com", 1},
		{0, 4, "follow", "badads.example.com", 1},
		{0, 4, "follow", "docs.example.org", 1},
		{0, 4, "follow", "www.example.com", 4},
		{0, 5, "capture", "other.net", 1},
		{1, 4, "follow", "www.example.com", 3},
	}
	if !slices.Equal(got, want) {
		t.Errorf("decisions =\n%v\nwant\n%v", got, want)
	}
	if len(d.Robots) != 1 || d.Robots[0].Hostname != "www.example.com" || d.Robots[0].Pages != 1 ||
		!slices.Equal(d.Robots[0].Samples, []string{"https://www.example.com:8443/port"}) {
		t.Errorf("robots = %s", mustJSON(d.Robots))
	}
	if len(d.Rules) != 5 || d.Rules[2].Pattern != "https://www.example.com/files/" {
		t.Errorf("rules = %s", mustJSON(d.Rules))
	}

	// By domain, at a label boundary, newest crawl first.
	for _, tc := range []struct {
		domain, action string
		want           []string // hostname/pattern
	}{
		{"example.com", "", []string{"ads.example.com/ads.example.com", "sub.ads.example.com/ads.example.com", "www.example.com/https://www.example.com/private/"}},
		{"ads.example.com", "skip", []string{"ads.example.com/ads.example.com", "sub.ads.example.com/ads.example.com"}},
		{"ads.example.com", "follow", nil}, // badads.example.com is not under ads.example.com
		{"example.com", "capture", []string{"www.example.com/https://www.example.com/files/"}},
		{"other.net", "capture", []string{"other.net/any"}},
		{"example.org", "skip", nil},
	} {
		dd, err := e.svc.DecisionsByDomain(e.ctx, alice, tc.domain, 0, tc.action)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range dd.Decisions {
			got = append(got, r.Hostname+"/"+str(r.Pattern))
			if r.CrawlID != id || !slices.Equal(r.Seeds, []string{www, docs}) {
				t.Errorf("row %+v", r)
			}
		}
		if !slices.Equal(got, tc.want) || dd.Truncated {
			t.Errorf("DecisionsByDomain(%s, %s) = %v (truncated %v), want %v", tc.domain, tc.action, got, dd.Truncated, tc.want)
		}
	}
	// Older than days: gone from the answer.
	e.clock.Advance(91 * 24 * time.Hour)
	if dd, err := e.svc.DecisionsByDomain(e.ctx, alice, "example.com", 0, "skip"); err != nil || len(dd.Decisions) != 0 {
		t.Errorf("after 91 days: %v %v", dd, err)
	}
	if dd, err := e.svc.DecisionsByDomain(e.ctx, alice, "example.com", 92, "skip"); err != nil || len(dd.Decisions) != 3 {
		t.Errorf("days=92: %d rows %v", len(dd.Decisions), err)
	}
	if _, err := e.svc.DecisionsByDomain(e.ctx, bob, "example.com", 0, "skip"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("bob: %v, want not found", err)
	}
}

// TestStopReasons covers max_pages (a partial cut that goes on, then an
// empty room) and completed.
func TestStopReasons(t *testing.T) {
	t.Parallel()
	e := newEnv(t)

	t.Run("max_pages", func(t *testing.T) {
		id := e.start(crawl.StartRequest{Seeds: []string{www}, MaxPages: ptr(3), MaxDepth: ptr(5)})
		res := e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{e.write(capture{url: www, linksInReport: true, links: links(
			"https://www.example.com/1", "https://www.example.com/2", www /* already known */, "https://www.example.com/3", "https://www.example.com/4")})}})
		if !slices.Equal(nextURLs(res), []string{"https://www.example.com/1", "https://www.example.com/2"}) || res.StopReason != nil {
			t.Fatalf("answer = %s: want the first 2 (room 3-1) and no stop yet", mustJSON(res))
		}
		v := e.get(id)
		if v.State != crawl.StateRunning || str(v.StopReason) != rules.StopMaxPages || v.PagesDiscovered != 5 {
			t.Fatalf("after a partial cut: state %s stop %s discovered %d; want running, max_pages recorded, 1+4 discovered", v.State, str(v.StopReason), v.PagesDiscovered)
		}
		res = e.report(id, crawl.LevelReport{Depth: 1, Results: []crawl.PageReport{
			e.write(capture{url: "https://www.example.com/1", linksInReport: true, links: links("https://www.example.com/9")}),
			e.write(capture{url: "https://www.example.com/2"}),
		}})
		if len(res.Next) != 0 || str(res.StopReason) != rules.StopMaxPages {
			t.Fatalf("answer = %s, want max_pages", mustJSON(res))
		}
		v = e.get(id)
		if v.State != crawl.StateSucceeded || str(v.StopReason) != rules.StopMaxPages || v.PagesCaptured != 3 {
			t.Fatalf("crawl = %s %s %d", v.State, str(v.StopReason), v.PagesCaptured)
		}
	})

	t.Run("the first reason sticks", func(t *testing.T) {
		id := e.start(crawl.StartRequest{Seeds: []string{www}, MaxPages: ptr(2), MaxDepth: ptr(1)})
		res := e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{e.write(capture{url: www, linksInReport: true,
			links: links("https://www.example.com/1", "https://www.example.com/2")})}})
		if len(res.Next) != 1 || res.StopReason != nil {
			t.Fatalf("answer = %s", mustJSON(res))
		}
		res = e.report(id, crawl.LevelReport{Depth: 1, Results: []crawl.PageReport{e.write(capture{url: "https://www.example.com/1"})}})
		if str(res.StopReason) != rules.StopMaxDepth {
			t.Fatalf("answer = %s, want this level's max_depth", mustJSON(res))
		}
		if v := e.get(id); v.State != crawl.StateSucceeded || str(v.StopReason) != rules.StopMaxPages {
			t.Fatalf("crawl = %s %s, want max_pages kept", v.State, str(v.StopReason))
		}
	})

	t.Run("completed", func(t *testing.T) {
		id := e.start(crawl.StartRequest{Seeds: []string{www}, MaxDepth: ptr(3)})
		// Every link is known, dropped or nofollow: nothing new.
		res := e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{e.write(capture{url: www, linksInReport: true,
			links: []link{{Href: www}, {Href: "https://elsewhere.example.net/"}, nofollow("https://www.example.com/x")}})}})
		if len(res.Next) != 0 || str(res.StopReason) != rules.StopCompleted {
			t.Fatalf("answer = %s, want completed", mustJSON(res))
		}
		v := e.get(id)
		if v.State != crawl.StateSucceeded || str(v.StopReason) != rules.StopCompleted || v.PagesCaptured != 1 || v.PagesDiscovered != 1 {
			t.Fatalf("crawl = %+v", v)
		}
		d, err := e.svc.Decisions(e.ctx, alice, id)
		if err != nil || len(d.Decisions) != 2 || d.Decisions[0].Rule != 0 || d.Decisions[0].Hostname != "elsewhere.example.net" || d.Decisions[1].Rule != 1 {
			t.Fatalf("decisions = %s %v (want rule 0 for the dropped link, rule 1 for the known one)", mustJSON(d.Decisions), err)
		}
	})

	t.Run("max_depth at depth 0", func(t *testing.T) {
		id := e.start(crawl.StartRequest{Seeds: []string{www}, MaxDepth: ptr(0)})
		if l := e.disp.last(t); l.CaptureFormats.Links {
			t.Errorf("a depth-0 crawl forced links")
		}
		res := e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{e.write(capture{url: www, linksInReport: true, links: links("https://www.example.com/x")})}})
		if len(res.Next) != 0 || str(res.StopReason) != rules.StopMaxDepth {
			t.Fatalf("answer = %s, want max_depth", mustJSON(res))
		}
		if n := e.count(`SELECT count(*) FROM crawl_decisions WHERE crawl_id = $1`, id); n != 0 {
			t.Errorf("links beyond the last level were decided (%d rows)", n)
		}
	})
}

// TestReportIdempotence: the same report twice leaves exactly the state one
// delivery leaves; a different report for the same depth, a report for a
// level the crawl does not have, and a late report after the crawl failed
// are refused and change nothing.
func TestReportIdempotence(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{Seeds: []string{www, docs}, Rules: siteRules, MaxDepth: ptr(2)})
	rep0 := crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{
		e.write(capture{url: www, linksInReport: true, links: links("https://www.example.com/a", "https://ads.example.com/x")}),
		e.write(capture{url: docs, reported: crawl.StatusFailed, links: links("https://docs.example.org/b")}),
	}}
	first := e.report(id, rep0)
	once := e.snapshot(id)
	dispatched := e.disp.count()

	// The same report, spelled differently.
	again := rep0
	again.Results = slices.Clone(rep0.Results)
	again.Results[0].URL = "HTTPS://WWW.EXAMPLE.COM:443/#again"
	for i := 0; i < 2; i++ {
		res, err := e.svc.ReportLevel(e.ctx, alice, id, again)
		if err != nil {
			t.Fatalf("replay %d: %v", i, err)
		}
		if !res.Replayed || mustJSON(res) != mustJSON(first) {
			t.Fatalf("replay %d answered %s (replayed %v), want %s", i, mustJSON(res), res.Replayed, mustJSON(first))
		}
		if s := e.snapshot(id); s != once {
			t.Fatalf("replay %d changed the state:\nbefore %s\nafter  %s", i, once, s)
		}
	}
	if e.disp.count() != dispatched {
		t.Errorf("a replay dispatched again")
	}
	v := e.get(id)
	if v.PagesCaptured != 2 || v.PagesDiscovered != 4 {
		t.Errorf("counters after replays: captured %d discovered %d, want 2 and 4", v.PagesCaptured, v.PagesDiscovered)
	}

	refused := []struct {
		name string
		rep  crawl.LevelReport
		want error
	}{
		{"a different report for depth 0", crawl.LevelReport{Depth: 0, Results: rep0.Results[:1]}, &crawl.LevelConflictError{}},
		{"a level the crawl does not have", crawl.LevelReport{Depth: 2, Results: []crawl.PageReport{{URL: www, Status: crawl.StatusCaptured}}}, &crawl.LevelConflictError{}},
	}
	for _, tc := range refused {
		_, err := e.svc.ReportLevel(e.ctx, alice, id, tc.rep)
		if !errors.Is(err, crawl.ErrConflict) {
			t.Errorf("%s: %v, want a conflict", tc.name, err)
		}
		if s := e.snapshot(id); s != once {
			t.Errorf("%s changed the state", tc.name)
		}
	}

	// The crawl fails; a late report for level 1 is refused, nothing changes.
	if r, err := e.svc.Fail(e.ctx, alice, id, crawl.FailRequest{Reason: ptr("[crawl_host] ServerUnavailable")}); err != nil || !r.Closed {
		t.Fatalf("Fail = %v %v", r, err)
	}
	failed := e.snapshot(id)
	late := crawl.LevelReport{Depth: 1, Results: []crawl.PageReport{e.write(capture{url: "https://www.example.com/a", linksInReport: true, links: links("https://www.example.com/z")})}}
	_, err := e.svc.ReportLevel(e.ctx, alice, id, late)
	var nr *crawl.NotRunningError
	if !errors.As(err, &nr) || nr.State != crawl.StateFailed || !errors.Is(err, crawl.ErrConflict) {
		t.Fatalf("late report: %v, want a not-running conflict", err)
	}
	if s := e.snapshot(id); s != failed {
		t.Errorf("the late report changed the state:\nbefore %s\nafter  %s", failed, s)
	}
	if n := e.count(`SELECT count(*) FROM capture_submissions WHERE task_id = $1`, late.Results[0].TaskID); n != 0 {
		t.Errorf("the late report recorded its submission")
	}
	// The accepted report of depth 0 is still answered (nothing changes).
	if res, err := e.svc.ReportLevel(e.ctx, alice, id, rep0); err != nil || !res.Replayed {
		t.Errorf("replay after failure: %v %v", res, err)
	}
	if v := e.get(id); v.State != crawl.StateFailed || str(v.Error) != "[crawl_host] ServerUnavailable" {
		t.Errorf("crawl = %s %s", v.State, str(v.Error))
	}
	if r, err := e.svc.Fail(e.ctx, alice, id, crawl.FailRequest{}); err != nil || r.Closed {
		t.Errorf("second Fail = %v %v, want closed:false", r, err)
	}
}

// TestReportValidation: a report is checked whole before anything is
// written.
func TestReportValidation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{Seeds: []string{www}})
	before := e.snapshot(id)
	task := "7f1e2d3c-4b5a-4968-8776-655443322110"
	ok := crawl.PageReport{URL: www, Status: crawl.StatusCaptured, TaskID: task, ManifestLocation: e.loc("m.result.json")}
	for _, tc := range []struct {
		name string
		page crawl.PageReport
		path string
	}{
		{"taskId not a UUID", crawl.PageReport{URL: www, Status: crawl.StatusCaptured, TaskID: "task-1", ManifestLocation: "s3://b/k"}, "results/1/taskId"},
		{"taskId without an outcome", crawl.PageReport{URL: www, Status: crawl.StatusFailed, TaskID: task}, "results/1"},
		{"taskId with both outcomes", crawl.PageReport{URL: www, Status: crawl.StatusFailed, TaskID: task, ManifestLocation: "s3://b/k", ManifestError: "x"}, "results/1"},
		{"manifestLocation without taskId", crawl.PageReport{URL: www, Status: crawl.StatusFailed, ManifestLocation: "s3://b/k"}, "results/1"},
		{"manifestError without taskId", crawl.PageReport{URL: www, Status: crawl.StatusFailed, ManifestError: "x"}, "results/1"},
		{"unknown status", crawl.PageReport{URL: www, Status: "done"}, "results/1/status"},
		{"not an http(s) URL", crawl.PageReport{URL: "ftp://www.example.com/", Status: crawl.StatusSkipped}, "results/1/url"},
		{"a page twice", crawl.PageReport{URL: "https://WWW.example.com", Status: crawl.StatusSkipped}, "results/1/url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			other := crawl.PageReport{URL: "https://www.example.com/other", Status: crawl.StatusSkipped}
			if tc.name == "a page twice" {
				other = ok
			}
			_, err := e.svc.ReportLevel(e.ctx, alice, id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{other, tc.page}})
			var fe *ledger.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.path || !errors.Is(err, crawl.ErrInvalid) {
				t.Fatalf("err = %v, want a field error at %s", err, tc.path)
			}
			if s := e.snapshot(id); s != before {
				t.Fatalf("a refused report changed the state")
			}
		})
	}
	if _, err := e.svc.ReportLevel(e.ctx, alice, "not-a-uuid", crawl.LevelReport{}); !errors.Is(err, crawl.ErrInvalid) {
		t.Errorf("bad id: %v", err)
	}
	if _, err := e.svc.ReportLevel(e.ctx, alice, "7f1e2d3c-4b5a-4968-8776-655443322110", crawl.LevelReport{}); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("unknown crawl: %v", err)
	}
	if _, err := e.svc.ReportLevel(e.ctx, bob, id, crawl.LevelReport{}); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("bob: %v, want not found", err)
	}
	if s := e.snapshot(id); s != before {
		t.Fatalf("a refused report changed the state")
	}
	// An in-process runner reports without an identity.
	res, next, err := e.svc.AdmitLevelOutcomes(e.ctx, id, crawl.LevelOutcomes{Depth: 0, Pages: []crawl.PageOutcome{{PageReport: crawl.PageReport{URL: www, Status: crawl.StatusFailed, SkipReason: "boom"}}}})
	if err != nil || str(res.StopReason) != rules.StopCompleted || next != nil {
		t.Fatalf("AdmitLevelOutcomes = %s %+v %v", mustJSON(res), next, err)
	}
	if r, err := e.svc.CloseFailed(e.ctx, id, ""); err != nil || r.Closed {
		t.Errorf("CloseFailed on a finished crawl = %v %v", r, err)
	}
}

// TestReportBuckets: locations outside the configured bucket are never
// read; a wrong manifest bucket is recorded as the submission's error; a
// missing manifest is left to reconcile; a manifest that failed is not
// admitted.
func TestReportBuckets(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{Seeds: []string{www, "https://www.example.com/2", "https://www.example.com/3", "https://www.example.com/4"}})
	p1 := e.write(capture{url: www, linksInReport: true, links: links("https://www.example.com/from-1")})
	p1.LinksLocation = "s3://other-bucket/" + p1.LinksLocation[len("s3://"+e.bucket+"/"):] // same key, other bucket
	p2 := e.write(capture{url: "https://www.example.com/2"})
	p2.ManifestLocation = "s3://other-bucket/x.result.json"
	p3 := e.write(capture{url: "https://www.example.com/3", noManifest: true})
	// A failed capture may leave a links file behind: never followed.
	p4 := e.write(capture{url: "https://www.example.com/4", reported: crawl.StatusFailed, status: "failed",
		linksInReport: true, links: links("https://www.example.com/from-4")})
	res := e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{p1, p2, p3, p4}})
	if len(res.Next) != 0 || str(res.StopReason) != rules.StopCompleted {
		t.Errorf("answer = %s: links from another bucket must not be read", mustJSON(res))
	}
	var merr string
	if err := e.pool.QueryRow(e.ctx, `SELECT manifest_error FROM capture_submissions WHERE task_id = $1`, p2.TaskID).Scan(&merr); err != nil ||
		merr != "written to bucket other-bucket, but the ledger reads "+e.bucket+": s3://other-bucket/x.result.json" {
		t.Errorf("manifest_error = %q %v", merr, err)
	}
	if n := e.count(`SELECT count(*) FROM archives`); n != 1 {
		t.Errorf("%d archives, want 1 (only page 1's manifest is readable and a success)", n)
	}
	if n := e.count(`SELECT count(*) FROM capture_submissions WHERE manifest_key IS NOT NULL`); n != 3 {
		t.Errorf("%d submissions with a key, want 3 (reconcile can retry the missing one)", n)
	}
	v := e.get(id)
	if v.PagesCaptured != 3 {
		t.Errorf("captured = %d, want 3 (the reported captures)", v.PagesCaptured)
	}
}
