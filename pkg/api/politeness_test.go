package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
)

// TestPolitenessAPI: GET /api/crawls/{id}/politeness reads the times a
// runner reported (here the Windmill flow, over HTTP) and finds a gap
// shorter than the delay; it is gated like the crawl (404 for a caller who
// may not see it, the same body as an absent crawl; 400 for a bad id).
func TestPolitenessAPI(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	code, body := f.do(t, "POST", "/api/crawls", "alice",
		`{"seeds":["https://www.example.com/","https://www.example.com/b"],"maxDepth":0,"perHostDelayMs":1000}`)
	if code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	var started struct{ CrawlID string }
	_ = json.Unmarshal([]byte(body), &started)
	id := started.CrawlID

	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	at := func(ms int) string { return t0.Add(time.Duration(ms) * time.Millisecond).Format(time.RFC3339Nano) }
	p1 := f.capture(t, "https://www.example.com/", nil)
	p1["submittedAt"], p1["finishedAt"] = at(0), at(1000)
	p2 := f.capture(t, "https://www.example.com/b", nil)
	p2["submittedAt"], p2["finishedAt"] = at(1500), at(2200) // 500 ms after the first ended: too soon
	report, _ := json.Marshal(map[string]any{"depth": 0, "results": []any{p1, p2}})
	if code, body := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", string(report)); code != 200 {
		t.Fatalf("level report: %d %s", code, body)
	}

	code, body = f.do(t, "GET", "/api/crawls/"+id+"/politeness", "alice", "")
	if code != 200 {
		t.Fatalf("politeness: %d %s", code, body)
	}
	var rep politeness.Report
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.OK || len(rep.Hosts) != 1 {
		t.Fatalf("report %s: want one host and not OK", body)
	}
	h := rep.Hosts[0]
	if h.Host != "www.example.com" || h.Captures != 2 || h.Gaps != 1 || h.MinGapMs == nil || *h.MinGapMs != 500 ||
		h.ShortGaps != 1 || h.Overlaps != 0 || h.DelayMs != 1000 || h.DelaySource != "setting" || h.Robots.Outcome != "unknown" {
		t.Errorf("host %s", body)
	}

	_, absent := f.do(t, "GET", "/api/crawls/"+uuid.NewString()+"/politeness", "alice", "")
	if code, other := f.doAs(t, "GET", "/api/crawls/"+id+"/politeness", "bob", "acme", ""); code != 404 || other != absent {
		t.Errorf("a caller without can_submit: %d %s; an absent crawl: %s", code, other, absent)
	}
	if code, _ := f.do(t, "GET", "/api/crawls/not-a-uuid/politeness", "alice", ""); code != 400 {
		t.Errorf("a bad id: %d", code)
	}
}
