package crawl_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
)

// TestAdmitLevelOutcomesReturnsTheNextLevel: a level admitted in process
// dispatches nothing; its next level comes back to the caller (the
// runner), with the pages the answer lists. Admitted again it is a replay
// that still hands back the next level (a runner that died between the
// admission and queueing it); and the same level sent as a level report
// over HTTP is the same report (a replay, nothing dispatched).
func TestAdmitLevelOutcomesReturnsTheNextLevel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{Seeds: []string{www, docs}, Rules: siteRules, MaxDepth: ptr(2)})
	rep0 := crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{
		e.write(capture{url: www, linksInReport: true, links: links("https://www.example.com/a", "https://ads.example.com/x")}),
		e.write(capture{url: docs, reported: crawl.StatusFailed, links: links("https://docs.example.org/b")}),
	}}
	lo := crawl.LevelOutcomes{Depth: 0}
	for _, p := range rep0.Results {
		lo.Pages = append(lo.Pages, crawl.PageOutcome{PageReport: p})
	}
	dispatched := e.disp.count()
	res, next, err := e.svc.AdmitLevelOutcomes(e.ctx, id, lo)
	if err != nil {
		t.Fatal(err)
	}
	if e.disp.count() != dispatched {
		t.Errorf("the in-process admission dispatched the next level itself")
	}
	frontier := func(l *crawl.Level) []string {
		if l == nil {
			return nil
		}
		var out []string
		for _, p := range l.Frontier {
			out = append(out, p.URL)
		}
		slices.Sort(out)
		return out
	}
	want := nextURLs(res)
	slices.Sort(want)
	if next == nil || next.CrawlID != id || next.Depth != 1 || next.OrgID != "acme" || len(want) == 0 ||
		!slices.Equal(frontier(next), want) {
		t.Fatalf("next level %+v, want depth 1 of %s with %v", next, id, want)
	}

	again, next2, err := e.svc.AdmitLevelOutcomes(e.ctx, id, lo)
	if err != nil || !again.Replayed || !slices.Equal(frontier(next2), want) {
		t.Errorf("admitted again: replayed %v, next %v, %v; want a replay with %v", again.Replayed, frontier(next2), err, want)
	}
	if wire, err := e.svc.ReportLevel(e.ctx, alice, id, rep0); err != nil || !wire.Replayed || mustJSON(wire) != mustJSON(res) {
		t.Errorf("the same level over HTTP = %s (replayed %v) %v, want the replay of %s", mustJSON(wire), wire.Replayed, err, mustJSON(res))
	}
	if e.disp.count() != dispatched {
		t.Errorf("a replay dispatched the next level")
	}
}

// held is p with its manifest held, as the embedded runner holds it.
func (e *env) held(p crawl.PageReport) crawl.PageOutcome {
	e.t.Helper()
	data, err := e.blob.Get(e.ctx, e.bucket, strings.TrimPrefix(p.ManifestLocation, "s3://"+e.bucket+"/"))
	if err != nil {
		e.t.Fatal(err)
	}
	m, err := manifest.Decode(data)
	if err != nil {
		e.t.Fatal(err)
	}
	return crawl.PageOutcome{PageReport: p, Manifest: &m}
}

// TestAdmitCapturedBeforeTheLevelEnds: a captured page's archive is
// registered (archive, submission, outbox row) while its level runs, and
// only then: for a pending page of that level in a running crawl, with a
// manifest that is its capture. The page stays pending; the level's
// admission then closes it, registers no second archive or outbox row,
// and counts the archive as its own. Anything else registers nothing.
func TestAdmitCapturedBeforeTheLevelEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(crawl.StartRequest{Seeds: []string{www, docs}, Rules: siteRules, MaxDepth: ptr(1)})
	p0 := e.write(capture{url: www, linksInReport: true, links: links("https://www.example.com/a")})
	p1 := e.write(capture{url: docs})
	failed := e.write(capture{url: docs, status: "failed", reported: crawl.StatusFailed})
	e.crawlID = uuid.NewString()
	foreign := e.write(capture{url: www}) // another crawl's capture of the same URL
	e.crawlID = id
	rows := func() [3]int {
		return [3]int{e.count(`SELECT count(*) FROM archives`), e.count(`SELECT count(*) FROM capture_submissions`), e.count(`SELECT count(*) FROM fga_outbox`)}
	}
	before := e.snapshot(id)
	for _, c := range []struct {
		name  string
		id    string
		depth int
		pages []crawl.PageOutcome
	}{
		{"a level not running yet", id, 1, []crawl.PageOutcome{e.held(p0)}},
		{"a failed capture", id, 0, []crawl.PageOutcome{e.held(failed)}},
		{"another crawl's manifest", id, 0, []crawl.PageOutcome{e.held(foreign)}},
		{"no manifest held", id, 0, []crawl.PageOutcome{{PageReport: p0}}},
		{"a crawl that does not exist", uuid.NewString(), 0, []crawl.PageOutcome{e.held(p0)}},
	} {
		n, err := e.svc.AdmitCaptured(e.ctx, c.id, c.depth, c.pages)
		if n != 0 || (err != nil && !errors.Is(err, ledger.ErrNotFound)) {
			t.Errorf("%s: registered %d, %v; want none", c.name, n, err)
		}
	}
	if _, err := e.svc.AdmitCaptured(e.ctx, "not\x00a-crawl", 0, []crawl.PageOutcome{e.held(p0)}); !errors.Is(err, crawl.ErrInvalid) {
		t.Errorf("a hostile crawl id: %v, want invalid", err)
	}
	if after := e.snapshot(id); after != before {
		t.Fatalf("refused registrations wrote:\n%s\nwas\n%s", after, before)
	}

	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(p0)}); n != 1 || err != nil {
		t.Fatalf("register %s before its level ends: %d, %v; want 1", www, n, err)
	}
	if got := rows(); got != [3]int{1, 1, 1} {
		t.Fatalf("after one early registration: %v archives, submissions, outbox rows; want 1 each", got)
	}
	if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND state = 'pending'`, id); n != 2 {
		t.Errorf("%d pages pending after the early registration, want both", n)
	}
	// The page names its capture job: the archive is the crawl's at once.
	if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND url = $2 AND task_id = $3`, id, www, p0.TaskID); n != 1 {
		t.Errorf("the registered page does not name its capture job")
	}
	if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND task_id IS NOT NULL`, id); n != 1 {
		t.Errorf("%d pages name a capture job, want only the registered one", n)
	}
	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(p0)}); n != 0 || err != nil {
		t.Errorf("registered again: %d, %v; want 0", n, err)
	}

	lo := crawl.LevelOutcomes{Depth: 0, Pages: []crawl.PageOutcome{e.held(p0), e.held(p1)}}
	if _, _, err := e.svc.AdmitLevelOutcomes(e.ctx, id, lo); err != nil {
		t.Fatal(err)
	}
	if got := rows(); got != [3]int{2, 2, 2} {
		t.Fatalf("after the level: %v archives, submissions, outbox rows; want 2 each", got)
	}
	if n := e.count(`SELECT archives_admitted FROM crawl_levels WHERE crawl_id = $1 AND depth = 0`, id); n != 2 {
		t.Errorf("the level counts %d archives admitted, want 2 (one registered before it)", n)
	}
	if n := e.count(`SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND depth = 0 AND state = 'captured'`, id); n != 2 {
		t.Errorf("%d pages of level 0 captured, want 2", n)
	}
	if n, err := e.svc.AdmitCaptured(e.ctx, id, 0, []crawl.PageOutcome{e.held(p1)}); n != 0 || err != nil {
		t.Errorf("a reported level's page: registered %d, %v; want 0", n, err)
	}

	// A stopped crawl registers nothing more.
	stopped := e.start(crawl.StartRequest{Seeds: []string{www}, Rules: siteRules, MaxDepth: ptr(1)})
	late := e.write(capture{url: www})
	if _, err := e.svc.Stop(e.ctx, alice, stopped); err != nil {
		t.Fatal(err)
	}
	if n, err := e.svc.AdmitCaptured(e.ctx, stopped, 0, []crawl.PageOutcome{e.held(late)}); n != 0 || err != nil {
		t.Errorf("a stopped crawl: registered %d, %v; want 0", n, err)
	}
	if got := rows(); got != [3]int{2, 2, 2} {
		t.Errorf("after the stopped crawl: %v archives, submissions, outbox rows; want 2 each", got)
	}
}
