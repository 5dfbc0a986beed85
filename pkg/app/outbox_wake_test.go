package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// TestAdmittedArchivesReachOpenFGAAtOnce: a crawl's archives become
// visible to their owner — listed, and found by search — as soon as their
// level is admitted, not at serve's next scheduled drain of the outbox
// (here an hour away): the outbox's new rows wake serve's drainer.
func TestAdmittedArchivesReachOpenFGAAtOnce(t *testing.T) {
	t.Parallel()
	env := apptest.NewWith(t, func(s *config.Settings) { s.DrainInterval = time.Hour })
	ctx := context.Background()
	if _, err := authz.Grant(ctx, env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	site := twoPageSite(t, "quince")
	srv := startClusterServe(t, env, "a")
	api := func(method, path, body string) (int, map[string]any) { return srv.aliceCalls(t, method, path, body) }
	// serve drained once as it started; what comes after waits for a wake.
	time.Sleep(500 * time.Millisecond)
	code, out := api("POST", "/api/crawls", fmt.Sprintf(`{"seeds":[%q],"maxDepth":1,"perHostDelayMs":0}`, site.URL+"/"))
	if code != http.StatusAccepted {
		t.Fatalf("start the crawl: %d %v", code, out)
	}
	id := out["crawlId"].(string)
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	for listed, found := false, false; !listed || !found; {
		if !listed {
			code, out = api("GET", "/api/archives", "")
			as, _ := out["archives"].([]any)
			if listed = code == http.StatusOK && len(as) == 2; listed {
				t.Logf("both archives listed %v after the crawl started", time.Since(start).Round(time.Millisecond))
			}
		}
		if !found {
			code, out = api("GET", "/api/search?q=quince", "")
			hits, _ := out["hits"].([]any)
			if found = code == http.StatusOK && len(hits) == 2; found {
				t.Logf("both pages found by search %v after the crawl started", time.Since(start).Round(time.Millisecond))
			}
		}
		if time.Now().After(deadline) {
			_, view := api("GET", "/api/crawls/"+id, "")
			t.Fatalf("30 s after the crawl started: listed %v, found by search %v (last answer %d %v; the crawl %v)", listed, found, code, out, view["state"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCapturedPagesListedBeforeTheirLevelEnds: a crawl page is listed and
// found by search within moments of its capture, while the rest of its
// level is still being captured — not when the level ends. The level here
// is four pages of one host a second apart; the first is looked for while
// the crawl still runs. At the end every page has exactly one archive and
// one submission, and the level counts all four archives as admitted.
func TestCapturedPagesListedBeforeTheirLevelEnds(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	ctx := context.Background()
	if _, err := authz.Grant(ctx, env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>home</title><p>damson</p><a href="/a">a</a> <a href="/b">b</a> <a href="/c">c</a> <a href="/d">d</a>`)
		case "/a", "/b", "/c", "/d":
			fmt.Fprintf(w, `<!doctype html><title>page %s</title><p>damson sloe%s</p>`, r.URL.Path[1:], r.URL.Path[1:])
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	srv := startClusterServe(t, env, "a")
	api := func(method, path, body string) (int, map[string]any) { return srv.aliceCalls(t, method, path, body) }
	code, out := api("POST", "/api/crawls", fmt.Sprintf(`{"seeds":[%q],"maxDepth":1,"perHostDelayMs":1000}`, site.URL+"/"))
	if code != http.StatusAccepted {
		t.Fatalf("start the crawl: %d %v", code, out)
	}
	id := out["crawlId"].(string)
	start := time.Now()
	deadline := start.Add(60 * time.Second)
	for {
		code, out = api("GET", "/api/search?q=sloea", "")
		hits, _ := out["hits"].([]any)
		if code == http.StatusOK && len(hits) == 1 {
			_, view := api("GET", "/api/crawls/"+id, "")
			if view["state"] != "running" {
				t.Fatalf("/a was found by search only when the crawl was %v (%v after it started): its archive waited for the level's end", view["state"], time.Since(start).Round(time.Millisecond))
			}
			t.Logf("/a found by search %v after the crawl started, while the crawl runs", time.Since(start).Round(time.Millisecond))
			// The crawl's view counts it among its archives already (as
			// indexed once the indexer has marked it: a search can find
			// a page a moment before that).
			for {
				s, _ := view["search"].(map[string]any)
				if s != nil && s["archives"].(float64) >= 2 && s["indexed"].(float64) >= 2 {
					break
				}
				if view["state"] != "running" {
					t.Fatalf("the running crawl's view counted %v until the crawl was %v, want /a's archive and the seed's", s, view["state"])
				}
				time.Sleep(20 * time.Millisecond)
				_, view = api("GET", "/api/crawls/"+id, "")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/a not found by search 60 s after the crawl started (last answer %d %v)", code, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Listed as the crawl's: the list filtered by the crawl has it, and
	// its row names the crawl.
	code, out = api("GET", "/api/archives?crawl="+id, "")
	as, _ := out["archives"].([]any)
	if code != http.StatusOK || len(as) < 2 {
		t.Fatalf("/a is not listed as the crawl's while the crawl runs: %d %v", code, out)
	}
	for _, a := range as {
		if row, _ := a.(map[string]any); row["crawlId"] != id {
			t.Errorf("a row of the crawl's list names crawl %v, want %s: %v", row["crawlId"], id, row)
		}
	}
	for {
		_, view := api("GET", "/api/crawls/"+id, "")
		if view["state"] == "succeeded" {
			break
		}
		if view["state"] != "running" || time.Now().After(deadline) {
			t.Fatalf("the crawl did not succeed: %v", view)
		}
		time.Sleep(100 * time.Millisecond)
	}
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var archives, tasks, subs, admitted int
	if err := conn.QueryRow(ctx, `
		SELECT (SELECT count(*) FROM archives WHERE correlation_id = $1::text),
		       (SELECT count(DISTINCT task_id) FROM archives WHERE correlation_id = $1::text),
		       (SELECT count(*) FROM capture_submissions WHERE correlation_id = $1::text),
		       (SELECT archives_admitted FROM crawl_levels WHERE crawl_id = $1::uuid AND depth = 1)`, id).
		Scan(&archives, &tasks, &subs, &admitted); err != nil {
		t.Fatal(err)
	}
	if archives != 5 || tasks != 5 || subs != 5 || admitted != 4 {
		t.Fatalf("after the crawl: %d archives of %d tasks, %d submissions, level 1 admitted %d; want 5, 5, 5 and 4", archives, tasks, subs, admitted)
	}
}
