package crawl_test

import (
	"slices"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
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
