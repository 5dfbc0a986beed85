package api_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
)

// TestCrawlWhy: GET /api/crawls/{id}/why?url= says what a crawl did with
// one URL and why — captured (with its archive), pending while the crawl
// runs, failed (with the reason), skipped by robots.txt, not captured
// because the crawl was stopped first, kept out by the rules (which rule,
// or none), or never reached although the rules would take it — for the
// URL as the crawl keys it. A URL that is not one, or text the ledger
// cannot hold, is a 400 naming the parameter; a crawl the caller may not
// read (as GET /api/crawls/{id}) is the same 404 as an absent one.
func TestCrawlWhy(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	id := f.pastSeed(t, "https://www.example.com/", nil, "https://www.example.com/a", "https://www.example.com/private", "https://elsewhere.net/")
	why := func(crawlID, u string) politeness.Why {
		t.Helper()
		code, body := f.do(t, "GET", "/api/crawls/"+crawlID+"/why?url="+url.QueryEscape(u), "alice", "")
		var w politeness.Why
		if code != 200 || json.Unmarshal([]byte(body), &w) != nil {
			t.Fatalf("why %s: %d %s", u, code, body)
		}
		return w
	}
	// While the crawl runs.
	w := why(id, "https://www.example.com/")
	if w.Verdict != politeness.VerdictCaptured || w.Rules.Kind != "seed" || len(w.Pages) != 1 || w.Pages[0].ArchiveID == nil || w.State != "running" {
		t.Errorf("the seed: %+v", w)
	}
	w = why(id, "HTTPS://WWW.Example.COM:443/a#top")
	if w.URL != "https://www.example.com/a" || w.Verdict != politeness.VerdictPending || w.Rules.Rule != 1 || w.Rules.Action != "follow" || len(w.Pages) != 1 ||
		w.Page == nil || w.Page.URL != w.URL {
		t.Errorf("/a, asked as another spelling: %+v", w)
	}
	w = why(id, "https://elsewhere.net/")
	if w.Verdict != politeness.VerdictRuledOut || w.Rules.Kind != "rule" || w.Rules.Rule != 0 || len(w.Pages) != 0 || w.Page != nil {
		t.Errorf("a link no rule takes: %+v", w)
	}
	w = why(id, "https://www.example.com/never-linked")
	if w.Verdict != politeness.VerdictNotReached || w.Rules.Rule != 1 || w.MaxDepth != 1 || len(w.Pages) != 0 {
		t.Errorf("a URL no page linked: %+v", w)
	}

	// Bad input: a 400 naming the parameter, whoever asks and whatever the
	// crawl.
	for _, q := range []string{"", "?url=", "?url=%2Fa", "?url=javascript%3Aalert(1)", "?url=https%3A%2F%2Fa.example%2F%00",
		"?url=https%3A%2F%2Fa.example%2F%ff", "?url=https%3A%2F%2Fa.example%2F%ed%a0%80", "?url=https%3A%2F%2Fa.example%2F&url=https%3A%2F%2Fb.example%2F",
		"?url=https%3A%2F%2Fa.example%2F&limit=1"} {
		for _, crawlID := range []string{id, uuid.NewString()} {
			if code, body := f.do(t, "GET", "/api/crawls/"+crawlID+"/why"+q, "alice", ""); code != 400 || !strings.Contains(body, "querystring") {
				t.Errorf("why%s: %d %s", q, code, body)
			}
		}
	}
	// Not allowed looks like absent.
	q := "/why?url=" + url.QueryEscape("https://www.example.com/a")
	_, absent := f.do(t, "GET", "/api/crawls/"+uuid.NewString()+q, "alice", "")
	f.grant(t, "bob", "member", "acme")
	for _, who := range []struct{ subject, orgs string }{{"bob", "acme"}, {"carol", "globex"}, {"mallory", "acme"}} {
		if code, got := f.doAs(t, "GET", "/api/crawls/"+id+q, who.subject, who.orgs, ""); code != 404 || got != absent {
			t.Errorf("%s of %s asks why: %d %s (absent: %s)", who.subject, who.orgs, code, got, absent)
		}
	}

	// The level reported: a failure and a robots.txt skip; the crawl ends.
	rep, _ := json.Marshal(map[string]any{"depth": 1, "results": []any{
		map[string]any{"url": "https://www.example.com/a", "status": "failed", "skipReason": "timeout after 30 s"},
		map[string]any{"url": "https://www.example.com/private", "status": "skipped", "skipReason": "robots"}}})
	if code, body := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", string(rep)); code != 200 {
		t.Fatalf("level 1: %d %s", code, body)
	}
	w = why(id, "https://www.example.com/a")
	if w.Verdict != politeness.VerdictFailed || len(w.Pages) != 1 || w.Pages[0].Reason == nil || *w.Pages[0].Reason != "timeout after 30 s" {
		t.Errorf("the failed page: %+v", w)
	}
	w = why(id, "https://www.example.com/private")
	if w.Verdict != politeness.VerdictSkipped || len(w.Pages) != 1 || w.Pages[0].DecidedBy.Kind != "robots" || w.State != "succeeded" {
		t.Errorf("the page robots.txt kept out: %+v", w)
	}

	// A crawl stopped before its level: its queued page was not captured.
	other := f.pastSeed(t, "https://www.example.org/", func(r map[string]any) { r["finalUrl"] = "https://www.example.org/home" }, "https://www.example.org/b")
	if code, body := f.do(t, "POST", "/api/crawls/"+other+"/stop", "alice", ""); code != 200 {
		t.Fatalf("stop: %d %s", code, body)
	}
	w = why(other, "https://www.example.org/b")
	if w.Verdict != politeness.VerdictNotCaptured || len(w.Pages) != 1 || w.Pages[0].State != "pending" || w.StopReason == nil || *w.StopReason != "stopped" {
		t.Errorf("a page the stop left: %+v", w)
	}
	// Where a redirect ended: captured, as the seed's capture.
	w = why(other, "https://www.example.org/home")
	if w.Verdict != politeness.VerdictCaptured || w.Page == nil || w.Page.URL != "https://www.example.org/" || w.Page.FinalURL == nil ||
		*w.Page.FinalURL != "https://www.example.org/home" || w.Page.ArchiveID == nil {
		t.Errorf("where the seed's redirect ended: %+v", w)
	}
}
