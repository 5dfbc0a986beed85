package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
)

// TestCrawlPagesAndStop: GET /api/crawls/{id}/pages lists the crawl's pages
// with what decided each (a seed, robots.txt, the rule that matches) and
// the archive a capture became, paged; the list counts failed and skipped
// pages. POST /api/crawls/{id}/stop stops a running crawl for a submitter
// of its organization (succeeded, "stopped"), is idempotent, and is the
// same 404 as an absent crawl for anyone else — the crawl's requester
// claiming another organization, a member without can_submit; a level
// reported after the stop is refused and admits nothing.
func TestCrawlPagesAndStop(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	id := f.pastSeed(t, "https://www.example.com/", nil, "https://www.example.com/a", "https://www.example.com/private", "https://elsewhere.net/")
	// Level 1 is running: report nothing yet; the robots skip is recorded
	// by the level report below, after the stop, and must be refused.

	var pages politeness.Pages
	code, body := f.do(t, "GET", "/api/crawls/"+id+"/pages?limit=2", "alice", "")
	if code != 200 || json.Unmarshal([]byte(body), &pages) != nil {
		t.Fatalf("pages: %d %s", code, body)
	}
	if len(pages.Pages) != 2 || pages.Next == nil {
		t.Fatalf("first page of 2: %s", body)
	}
	p0, p1 := pages.Pages[0], pages.Pages[1]
	if p0.URL != "https://www.example.com/" || p0.State != "captured" || p0.DecidedBy.Kind != "seed" || p0.ArchiveID == nil {
		t.Errorf("the seed row: %s", body)
	}
	if p1.URL != "https://www.example.com/a" || p1.State != "pending" || p1.DecidedBy.Kind != "rule" || p1.DecidedBy.Rule != 1 ||
		p1.DecidedBy.Action != "follow" || p1.DecidedBy.Pattern != "same-origin" || p1.ArchiveID != nil {
		t.Errorf("the rule row: %s", body)
	}
	code, body = f.do(t, "GET", "/api/crawls/"+id+"/pages?after="+jsonInt(*pages.Next), "alice", "")
	if code != 200 || !strings.Contains(body, `"url":"https://www.example.com/private"`) || !strings.Contains(body, `"next":null`) {
		t.Errorf("second page: %d %s", code, body)
	}
	// Narrowed to one state, paged the same way.
	for _, c := range []struct {
		q    string
		urls []string
	}{
		{"?state=captured", []string{"https://www.example.com/"}},
		{"?state=pending", []string{"https://www.example.com/a", "https://www.example.com/private"}},
		{"?state=failed", nil},
	} {
		var got politeness.Pages
		code, body := f.do(t, "GET", "/api/crawls/"+id+"/pages"+c.q, "alice", "")
		if code != 200 || json.Unmarshal([]byte(body), &got) != nil || len(got.Pages) != len(c.urls) {
			t.Errorf("pages%s: %d %s, want %v", c.q, code, body, c.urls)
			continue
		}
		for i, p := range got.Pages {
			if p.URL != c.urls[i] {
				t.Errorf("pages%s: row %d is %s, want %s", c.q, i, p.URL, c.urls[i])
			}
		}
	}
	code, body = f.do(t, "GET", "/api/crawls/"+id+"/pages?state=pending&limit=1", "alice", "")
	if err := json.Unmarshal([]byte(body), &pages); code != 200 || err != nil || len(pages.Pages) != 1 || pages.Next == nil {
		t.Fatalf("first pending page of 1: %d %s", code, body)
	}
	code, body = f.do(t, "GET", "/api/crawls/"+id+"/pages?state=pending&after="+jsonInt(*pages.Next), "alice", "")
	if code != 200 || !strings.Contains(body, `"url":"https://www.example.com/private"`) || strings.Contains(body, `"url":"https://www.example.com/"`) || !strings.Contains(body, `"next":null`) {
		t.Errorf("second pending page: %d %s", code, body)
	}
	for _, q := range []string{"?after=-1", "?after=x", "?limit=0", "?limit=501", "?after=1&after=2", "?state=bogus", "?state=Captured", "?state=failed&state=captured", "?state=%00"} {
		if code, body := f.do(t, "GET", "/api/crawls/"+id+"/pages"+q, "alice", ""); code != 400 || !strings.Contains(body, "querystring/") {
			t.Errorf("pages%s: %d %s", q, code, body)
		}
	}

	// Stop: who may not is told what an absent crawl is told.
	_, absent := f.do(t, "POST", "/api/crawls/"+uuid.NewString()+"/stop", "alice", "")
	f.grant(t, "bob", "member", "acme")
	for _, who := range []struct{ subject, orgs string }{{"bob", "acme"}, {"alice", "globex"}, {"mallory", "acme"}} {
		if code, got := f.doAs(t, "POST", "/api/crawls/"+id+"/stop", who.subject, who.orgs, ""); code != 404 || got != absent {
			t.Errorf("%s of %s stops: %d %s (absent: %s)", who.subject, who.orgs, code, got, absent)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM crawls WHERE id = $1 AND state = 'running'`, id); n != 1 {
		t.Fatal("a refused stop changed the crawl")
	}
	if code, _ := f.do(t, "POST", "/api/crawls/not-a-uuid/stop", "alice", ""); code != 400 {
		t.Errorf("a bad id: %d", code)
	}
	if code, body := f.do(t, "POST", "/api/crawls/"+id+"/stop", "alice", `{"now":true}`); code != 400 {
		t.Errorf("a body with keys: %d %s", code, body)
	}
	code, body = f.do(t, "POST", "/api/crawls/"+id+"/stop", "alice", "")
	if code != 200 || body != `{"stopped":true,"state":"succeeded","stopReason":"stopped"}` {
		t.Fatalf("stop: %d %s", code, body)
	}
	code, body = f.do(t, "POST", "/api/crawls/"+id+"/stop", "alice", "{}")
	if code != 200 || body != `{"stopped":false,"state":"succeeded","stopReason":"stopped"}` {
		t.Errorf("stop again: %d %s", code, body)
	}
	a := f.capture(t, "https://www.example.com/a", nil)
	rep, _ := json.Marshal(map[string]any{"depth": 1, "results": []any{a,
		map[string]any{"url": "https://www.example.com/private", "status": "skipped", "skipReason": "robots"}}})
	if code, body := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", string(rep)); code != 409 {
		t.Errorf("a level after the stop: %d %s", code, body)
	}
	if n := f.count(t, `SELECT count(*) FROM archives`); n != 1 {
		t.Errorf("%d archives after the stop, want the seed's only", n)
	}

	code, body = f.do(t, "GET", "/api/crawls", "alice", "")
	if code != 200 || !strings.Contains(body, `"stopReason":"stopped"`) || !strings.Contains(body, `"pagesFailed":0,"pagesSkipped":0`) {
		t.Errorf("list: %d %s", code, body)
	}
}

func jsonInt(n int64) string { b, _ := json.Marshal(n); return string(b) }

// pastSeed starts a crawl of seed (maxDepth 1, as startCrawl) and reports
// its level 0: the seed captured, linking links (its result changed by
// tweak first, when given). It returns the crawl's id.
func (f *crawlFixture) pastSeed(t *testing.T, seed string, tweak func(result map[string]any), links ...string) string {
	t.Helper()
	id := f.startCrawl(t, seed)
	hrefs := make([]map[string]any, len(links))
	for i, l := range links {
		hrefs[i] = map[string]any{"href": l}
	}
	result := f.capture(t, seed, hrefs)
	if tweak != nil {
		tweak(result)
	}
	report, _ := json.Marshal(map[string]any{"depth": 0, "results": []any{result}})
	if code, body := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", string(report)); code != 200 {
		t.Fatalf("level 0: %d %s", code, body)
	}
	return id
}
