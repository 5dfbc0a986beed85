package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/windmill"
)

// flow records the levels the ledger dispatches, as Windmill's webhook would
// receive them.
type flow struct {
	mu     sync.Mutex
	levels []windmill.WebhookPayload
	auth   []string
}

func (f *flow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var p windmill.WebhookPayload
	_ = json.NewDecoder(r.Body).Decode(&p)
	f.mu.Lock()
	f.levels = append(f.levels, p)
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.mu.Unlock()
	fmt.Fprintf(w, "%q", uuid.NewString())
}

func (f *flow) last() windmill.WebhookPayload {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.levels[len(f.levels)-1]
}

type crawlFixture struct {
	env  *apptest.Env
	srv  *httptest.Server
	flow *flow
}

func newCrawlFixture(t *testing.T) *crawlFixture {
	t.Helper()
	ctx := context.Background()
	env := apptest.New(t)
	fl := &flow{}
	flowSrv := httptest.NewServer(fl)
	t.Cleanup(flowSrv.Close)
	env.App.Settings.WebhookURL, env.App.Settings.WebhookToken = flowSrv.URL, "flow-token"
	env.App.Settings.CaptureFormats = map[string]bool{"wacz": true}
	// One crawl per organization at once: the tests reach the bound.
	env.App.Settings.CrawlsPerOrg = 1
	svc, err := env.App.Crawls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := env.FGA.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	access, _ := env.App.Access(ctx)
	perms, _ := env.App.Permissions(ctx)
	s := &api.Server{Access: access, Crawls: svc, Identity: identity.Headers{}, Submitters: perms}
	return &crawlFixture{env: env, srv: serve(t, s), flow: fl}
}

func (f *crawlFixture) do(t *testing.T, method, path, subject, body string) (int, string) {
	t.Helper()
	return f.doAs(t, method, path, subject, "acme", body)
}

// capture writes what a capture server leaves for one page of the running
// crawl: the WACZ, its manifest (correlationId: the crawl id, as the runner
// sends it) and its links file, and returns the page's report entry.
func (f *crawlFixture) capture(t *testing.T, url string, links []map[string]any) map[string]any {
	t.Helper()
	ctx := context.Background()
	var crawlID string
	st, err := f.env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Pool.QueryRow(ctx, `SELECT coalesce((SELECT id::text FROM crawls WHERE state = 'running'), '')`).Scan(&crawlID); err != nil {
		t.Fatal(err)
	}
	task := uuid.NewString()
	base := "crawl/" + task
	put := func(key string, body []byte) {
		if err := f.env.Blob.Put(ctx, f.env.Bucket, key, "application/octet-stream", body); err != nil {
			t.Fatal(err)
		}
	}
	put(base+".wacz", []byte("wacz of "+url))
	put(base+".result.json", apptest.ManifestFor(task, crawlID, "success", url, f.env.Bucket, base+".wacz", time.Now()))
	lb, _ := json.Marshal(map[string]any{"links": links})
	put(base+".links.json", lb)
	now := time.Now().UTC()
	return map[string]any{
		"url": url, "status": "captured", "taskId": task,
		"manifestLocation": "s3://" + f.env.Bucket + "/" + base + ".result.json",
		"linksLocation":    "s3://" + f.env.Bucket + "/" + base + ".links.json",
		"submittedAt":      now.Add(-time.Second).Format(time.RFC3339Nano), "finishedAt": now.Format(time.RFC3339Nano),
	}
}

func TestCrawlAPI(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)

	// Two concurrent starts at a bound of one crawl: exactly one 202 and
	// one 409 naming the running crawl.
	start := `{"seeds":["https://www.example.com/"],"rules":[{"skip":"ads.example.com"},{"follow":"same-site"},{"capture":"https://other.example.org/docs/"}],"maxDepth":2,"maxPages":30,"perHostDelayMs":0}`
	type answer struct {
		code int
		body string
	}
	answers := make(chan answer, 2)
	for i := 0; i < 2; i++ {
		go func() {
			c, b := f.do(t, "POST", "/api/crawls", "alice", start)
			answers <- answer{c, b}
		}()
	}
	a1, a2 := <-answers, <-answers
	if a1.code == 409 {
		a1, a2 = a2, a1
	}
	if a1.code != 202 || a2.code != 409 {
		t.Fatalf("concurrent starts: %d %s / %d %s", a1.code, a1.body, a2.code, a2.body)
	}
	var started struct{ CrawlID string }
	_ = json.Unmarshal([]byte(a1.body), &started)
	if !strings.Contains(a2.body, `"error":"a crawl is already in progress"`) || !strings.Contains(a2.body, started.CrawlID) {
		t.Errorf("409 body %s", a2.body)
	}
	id := started.CrawlID
	if lvl := f.flow.last(); lvl.CrawlID != id || lvl.Depth != 0 || len(lvl.Frontier) != 1 || !lvl.CaptureFormats.Links || f.flow.auth[0] != "Bearer flow-token" {
		t.Errorf("level 0 dispatch: %+v %v", lvl, f.flow.auth)
	}

	// Level 0 report: the seed page with links of every kind.
	rel := "nofollow"
	page := f.capture(t, "https://www.example.com/", []map[string]any{
		{"href": "https://blog.example.com/post"},              // follow (same-site)
		{"href": "https://ads.example.com/banner"},             // skip (rule 1)
		{"href": "https://other.example.org/docs/a"},           // capture (URL prefix)
		{"href": "https://elsewhere.net/"},                     // no rule: dropped
		{"href": "https://www.example.com/secret", "rel": rel}, // nofollow: not even decided
	})
	report, _ := json.Marshal(map[string]any{"depth": 0, "results": []any{page}})
	code, body := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", string(report))
	if code != 200 {
		t.Fatalf("level report: %d %s", code, body)
	}
	var res crawl.LevelResult
	_ = json.Unmarshal([]byte(body), &res)
	got := map[string]bool{}
	for _, n := range res.Next {
		got[n.URL] = n.Depth == 1
	}
	if len(res.Next) != 2 || !got["https://blog.example.com/post"] || !got["https://other.example.org/docs/a"] {
		t.Errorf("next level %+v", res.Next)
	}
	// Replayed: the same answer, and the counters where one delivery left them.
	_, status1 := f.do(t, "GET", "/api/crawls/"+id, "alice", "")
	code, again := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", string(report))
	_, status2 := f.do(t, "GET", "/api/crawls/"+id, "alice", "")
	if code != 200 || again != body {
		t.Errorf("replay: %d %s (first %s)", code, again, body)
	}
	if strip(status1) != strip(status2) {
		t.Errorf("replay changed the crawl:\n%s\n%s", status1, status2)
	}
	var view crawl.CrawlView
	_ = json.Unmarshal([]byte(status2), &view)
	if view.PagesCaptured != 1 || view.State != "running" || len(view.Rules) != 3 {
		t.Errorf("status %s", status2)
	}

	// Decisions per rule and hostname.
	code, body = f.do(t, "GET", "/api/crawls/"+id+"/decisions", "alice", "")
	var dec crawl.DecisionsView
	_ = json.Unmarshal([]byte(body), &dec)
	byHost := map[string]crawl.Decision{}
	for _, d := range dec.Decisions {
		byHost[d.Hostname] = d
	}
	if code != 200 || byHost["ads.example.com"].Rule != 1 || byHost["ads.example.com"].Action != "skip" ||
		byHost["blog.example.com"].Rule != 2 || byHost["other.example.org"].Action != "capture" ||
		byHost["elsewhere.net"].Rule != 0 || len(byHost) != 4 {
		t.Errorf("decisions %d %s", code, body)
	}
	code, body = f.do(t, "GET", "/api/decisions?domain=example.com", "alice", "")
	if code != 200 || !strings.Contains(body, `"hostname":"ads.example.com"`) || strings.Contains(body, `"hostname":"blog.example.com"`) {
		t.Errorf("decisions by domain (skip by default): %d %s", code, body)
	}

	// Someone without can_submit: 404 on the crawl, an empty list.
	if code, body := f.do(t, "GET", "/api/crawls/"+id, "bob", ""); code != 404 || body != `{"error":"not found"}` {
		t.Errorf("bob's status: %d %s", code, body)
	}
	if code, body := f.do(t, "GET", "/api/crawls", "bob", ""); code != 200 || body != `{"crawls":[],"next":null}` {
		t.Errorf("bob's list: %d %s", code, body)
	}
	if code, body := f.do(t, "GET", "/api/crawls?state=running", "alice", ""); code != 200 || !strings.Contains(body, id) {
		t.Errorf("alice's list: %d %s", code, body)
	}

	// Closed failed; a late report then changes nothing.
	if code, body := f.do(t, "POST", "/api/crawls/"+id+"/failed", "alice", `{"reason":"[crawl_host] gave up"}`); code != 200 || body != `{"closed":true}` {
		t.Errorf("fail: %d %s", code, body)
	}
	_, before := f.do(t, "GET", "/api/crawls/"+id, "alice", "")
	late, _ := json.Marshal(map[string]any{"depth": 1, "results": []any{f.capture(t, "https://blog.example.com/post", nil)}})
	if code, body := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", string(late)); code != 409 {
		t.Errorf("late report: %d %s", code, body)
	}
	_, after := f.do(t, "GET", "/api/crawls/"+id, "alice", "")
	if strip(before) != strip(after) {
		t.Errorf("a late report changed the crawl:\n%s\n%s", before, after)
	}
	if code, body := f.do(t, "POST", "/api/crawls/"+id+"/failed", "alice", ""); code != 200 || body != `{"closed":false}` {
		t.Errorf("fail again: %d %s", code, body)
	}
}

// strip drops the volatile progress timestamp from a status body.
func strip(s string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(s), &m)
	delete(m, "progressedAt")
	b, _ := json.Marshal(m)
	return string(b)
}

func TestCrawlAPIRefusals(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	for _, tc := range []struct {
		name, method, path, subject, body string
		code                              int
		want                              string
	}{
		{"both seeds and fromTargets", "POST", "/api/crawls", "alice", `{"seeds":["https://e.com/"],"fromTargets":{}}`, 400, `{"error":"provide exactly one of seeds or fromTargets"}`},
		{"neither", "POST", "/api/crawls", "alice", `{}`, 400, `{"error":"provide exactly one of seeds or fromTargets"}`},
		{"unknown key before identity", "POST", "/api/crawls", "", `{"seeds":["https://e.com/"],"signing":true}`, 400, `FST_ERR_VALIDATION`},
		{"non-http seed", "POST", "/api/crawls", "alice", `{"seeds":["ftp://e.com/"]}`, 400, `{"error":"every seed must be an http(s) URL"}`},
		{"invalid rule pattern", "POST", "/api/crawls", "alice", `{"seeds":["https://e.com/"],"rules":[{"follow":"Not A Host"}]}`, 400, `{"error":"invalid rule patterns","rules":[{"rule":1,"pattern":"Not A Host"}]}`},
		{"shadowed rule", "POST", "/api/crawls", "alice", `{"seeds":["https://e.com/"],"rules":[{"follow":"any"},{"skip":"ads.e.com"}]}`, 400, `{"error":"rules that can never match","rules":[{"rule":2,"coveredBy":1}]}`},
		{"seed not followed", "POST", "/api/crawls", "alice", `{"seeds":["https://e.com/"],"rules":[{"capture":"same-origin"}]}`, 400, `{"error":"seeds the rules do not follow","seeds":["https://e.com/"]}`},
		{"no targets", "POST", "/api/crawls", "alice", `{"fromTargets":{}}`, 400, `{"error":"no enabled capture targets for this organization"}`},
		{"maxPages 0", "POST", "/api/crawls", "alice", `{"seeds":["https://e.com/"],"maxPages":0}`, 400, `maxPages`},
		{"not allowed to start", "POST", "/api/crawls", "bob", `{"seeds":["https://e.com/"]}`, 404, `{"error":"not found"}`},
		{"no identity", "POST", "/api/crawls", "", `{"seeds":["https://e.com/"]}`, 401, `{"error":"unauthenticated"}`},
		{"bad crawl id", "GET", "/api/crawls/123", "alice", "", 400, `uuid`},
		{"non-uuid taskId", "POST", "/api/crawls/" + uuid.NewString() + "/pages", "alice", `{"depth":0,"results":[{"url":"https://e.com/","status":"failed","taskId":"abc","manifestError":"x"}]}`, 400, `taskId`},
		{"taskId without an outcome", "POST", "/api/crawls/" + uuid.NewString() + "/pages", "alice", `{"depth":0,"results":[{"url":"https://e.com/","status":"failed","taskId":"` + uuid.NewString() + `"}]}`, 400, `Bad Request`},
		{"unknown crawl", "GET", "/api/crawls/" + uuid.NewString(), "alice", "", 404, `{"error":"not found"}`},
		{"bad decisions query", "GET", "/api/decisions?domain=Example.COM", "alice", "", 400, `domain`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.do(t, tc.method, tc.path, tc.subject, tc.body)
			if code != tc.code || !strings.Contains(body, tc.want) {
				t.Errorf("%d %s", code, body)
			}
		})
	}
	// Without a runner configured the crawl routes are not served at all.
	s := &api.Server{Identity: identity.Headers{}}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/api/crawls", strings.NewReader(`{}`))
	s.Handler().ServeHTTP(rec, req)
	if rec.Code != 404 || !strings.Contains(rec.Body.String(), "Route POST:/api/crawls not found") {
		t.Errorf("unserved crawl route: %d %s", rec.Code, rec.Body)
	}
}
