package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// searchArchive is one archive the search tests put in the bucket and the
// ledger: one page.
type searchArchive struct {
	id, task, org, title, text string
	// url and at default to https://example.com/<id prefix> and a minute
	// per archive from 2026-11-20 09:00 UTC.
	url string
	at  time.Time
}

// addSearchArchives writes each archive's WACZ (wacz.Write) to the bucket,
// its ledger row, and its admission tuples to OpenFGA.
func addSearchArchives(t *testing.T, env *apptest.Env, archives []searchArchive) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for i, a := range archives {
		at := time.Date(2026, 11, 20, 9, i, 0, 0, time.UTC)
		u := fmt.Sprintf("https://example.com/%s", a.id[:8])
		if a.url != "" {
			u = a.url
		}
		if !a.at.IsZero() {
			at = a.at
		}
		var buf bytes.Buffer
		if _, err := wacz.Write(&buf, wacz.Capture{Created: at, Pages: []wacz.Page{{URL: u, Date: at, Title: a.title, Text: a.text}}}); err != nil {
			t.Fatal(err)
		}
		key := "org/" + a.org + "/" + a.task + ".wacz"
		if err := env.Blob.Put(ctx, env.Bucket, key, "application/wacz", buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO archives (id, task_id, bucket, object_key, source_url, captured_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			a.id, a.task, env.Bucket, key, u, at); err != nil {
			t.Fatal(err)
		}
		if err := apptest.CopySources(ctx, conn, []apptest.Source{{ArchiveID: a.id, TaskID: a.task, At: at, Kind: ledger.ReasonOrganization, Principal: a.org}}); err != nil {
			t.Fatal(err)
		}
		var tuples []authz.Tuple
		for _, tu := range ledger.AdmissionTuples(a.id, a.task, a.org, nil).Writes {
			tuples = append(tuples, authz.Tuple{User: tu.User, Relation: tu.Relation, Object: tu.Object})
		}
		if err := env.FGA.Write(ctx, tuples, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// searchServer serves the API with search on a fresh Bleve index.
func searchServer(t *testing.T, env *apptest.Env) (string, *search.Indexer) {
	t.Helper()
	ctx := context.Background()
	b, err := search.OpenBleve(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	env.App.SetSearchBackend(b)
	ix, err := env.App.Indexer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	searcher, err := env.App.Searcher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	crawls, err := env.App.CrawlIndexer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	access, err := env.App.Access(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := &api.Server{Access: access, Identity: identity.Headers{}, Submitters: app.Permissions{Client: env.FGA}, Search: searcher, CrawlIndex: crawls}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv.URL, ix
}

func searchCall(t *testing.T, method, u, subject, orgs string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	if subject != "" {
		req.Header.Set(identity.SubjectHeader, subject)
		req.Header.Set(identity.OrganizationsHeader, orgs)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

// TestSearchRoute: GET /api/search end to end — identity, validation,
// permission filtering, totals, escaped snippets and cursors.
func TestSearchRoute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	base, ix := searchServer(t, env)
	var archives []searchArchive
	for i := range 12 {
		org := "acme"
		if i%3 == 0 {
			org = "globex"
		}
		archives = append(archives, searchArchive{id: uuid.NewString(), task: uuid.NewString(), org: org,
			title: fmt.Sprintf("レスポンシブなデザイン %d", i), text: fmt.Sprintf(`<script>alert("%d")</script> 画面に合わせるレスポンシブなデザイン & more`, i)})
	}
	addSearchArchives(t, env, archives)
	if res, err := ix.IndexPending(ctx, nil); err != nil || res.Indexed != 12 {
		t.Fatalf("index: %+v %v", res, err)
	}

	// Validation comes first, and says what is wrong.
	for _, tc := range []struct{ query, message string }{
		{"", "querystring must have required property 'q'"},
		{"?q=", "querystring/q must not be empty"},
		{"?q=%20%E3%80%80", "querystring/q must not be empty"},
		{"?q=" + strings.Repeat("a", 257), "querystring/q must NOT have more than 256 characters"},
		{"?q=a%00b", "querystring/q must not contain control characters"},
		{"?q=%FF", "querystring/q must be valid UTF-8"},
		{"?q=a&q=b", "querystring/q must be a single value"},
		{"?q=a&limit=0", "querystring/limit must be an integer between 1 and 100"},
		{"?q=a&limit=101", "querystring/limit must be an integer between 1 and 100"},
		{"?q=a&limit=1%00", "querystring/limit must be an integer between 1 and 100"},
		{"?q=a&cursor=nonsense", "querystring/cursor " + search.ErrBadCursor.Error()},
		{"?q=a&cursor=c1.%00", "querystring/cursor " + search.ErrBadCursor.Error()},
		{"?q=a&before=x", `querystring must NOT have additional properties ("before")`},
	} {
		for _, who := range []string{"", "alice"} { // before identity: the same 400 without one
			status, body := searchCall(t, "GET", base+"/api/search"+tc.query, who, "acme")
			var got struct{ Message string }
			_ = json.Unmarshal(body, &got)
			if status != 400 || got.Message != tc.message {
				t.Errorf("%q as %q: %d %s, want 400 %q", tc.query, who, status, body, tc.message)
			}
		}
	}
	if status, body := searchCall(t, "GET", base+"/api/search?q=x", "", ""); status != 401 || string(bytes.TrimSpace(body)) != `{"error":"unauthenticated"}` {
		t.Errorf("no identity: %d %s", status, body)
	}

	// alice (acme) sees the 8 acme archives and counts only those.
	var seen []string
	cursor := ""
	for page := 0; ; page++ {
		u := base + "/api/search?q=" + url.QueryEscape("レスポンシブ") + "&limit=3"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		status, body := searchCall(t, "GET", u, "alice", "acme")
		var p search.Page
		if err := json.Unmarshal(body, &p); status != 200 || err != nil {
			t.Fatalf("page %d: %d %s", page, status, body)
		}
		if page == 0 && (p.Total == nil || *p.Total != 8 || !p.TotalExact) {
			t.Fatalf("first page total: %s", body)
		}
		if page > 0 && p.Total != nil {
			t.Fatalf("a later page has a total: %s", body)
		}
		for _, h := range p.Hits {
			seen = append(seen, h.ArchiveID)
			if len(h.Highlight) == 0 || strings.Contains(h.Highlight[0], "<script>") || !strings.Contains(h.Highlight[0], "&lt;script&gt;") ||
				!strings.Contains(h.Highlight[0], "<mark>レスポンシブ</mark>") || !strings.Contains(h.TitleHighlight, "<mark>レスポンシブ</mark>") {
				t.Errorf("hit %s: highlight %q title %q", h.ArchiveID, h.Highlight, h.TitleHighlight)
			}
		}
		if p.Next == nil {
			break
		}
		cursor = *p.Next
		// The cursor is alice's: bob cannot use it.
		if status, body := searchCall(t, "GET", base+"/api/search?q="+url.QueryEscape("レスポンシブ")+"&cursor="+url.QueryEscape(cursor), "bob", "globex"); status != 400 || !strings.Contains(string(body), "querystring/cursor") {
			t.Errorf("bob with alice's cursor: %d %s", status, body)
		}
	}
	want := map[string]bool{}
	for _, a := range archives {
		if a.org == "acme" {
			want[a.id] = true
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("alice saw %d hits, want %d", len(seen), len(want))
	}
	for _, id := range seen {
		if !want[id] {
			t.Fatalf("alice saw %s, another organization's", id)
		}
		delete(want, id)
	}

	// Someone of another organization: no hit, total 0.
	status, body := searchCall(t, "GET", base+"/api/search?q="+url.QueryEscape("レスポンシブ"), "mallory", "umbrella")
	if status != 200 || !strings.Contains(string(body), `"hits":[]`) || !strings.Contains(string(body), `"total":0`) {
		t.Errorf("mallory: %d %s", status, body)
	}
}

// TestIndexCrawlRoute: POST /api/crawls/{id}/index indexes the crawl's
// archives not yet indexed, for someone who may touch the crawl; anyone
// else gets the 404 of an absent crawl.
func TestIndexCrawlRoute(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	base, _ := searchServer(t, env)
	archives := []searchArchive{
		{id: uuid.NewString(), task: uuid.NewString(), org: "acme", title: "one", text: "first page"},
		{id: uuid.NewString(), task: uuid.NewString(), org: "acme", title: "two", text: "second page"},
		{id: uuid.NewString(), task: uuid.NewString(), org: "acme", title: "other", text: "not of the crawl"},
	}
	addSearchArchives(t, env, archives)
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var crawlID string
	if err := conn.QueryRow(ctx, `INSERT INTO crawls (seeds, max_depth, max_pages, per_host_delay_ms, host_parallelism, org_id, requested_by, state, stop_reason, finished_at)
		VALUES ('{https://example.com/}', 0, 30, 0, 1, 'acme', 'alice', 'succeeded', 'completed', now()) RETURNING id::text`).Scan(&crawlID); err != nil {
		t.Fatal(err)
	}
	for i, a := range archives[:2] {
		if _, err := conn.Exec(ctx, `INSERT INTO crawl_pages (crawl_id, url, depth, host, state, task_id) VALUES ($1, $2, 0, 'example.com', 'captured', $3)`,
			crawlID, fmt.Sprintf("https://example.com/%d", i), a.task); err != nil {
			t.Fatal(err)
		}
	}
	path := base + "/api/crawls/" + crawlID + "/index"
	for _, tc := range []struct {
		name, url, subject, orgs string
		status                   int
		body                     string
	}{
		{"no identity", path, "", "", 401, `{"error":"unauthenticated"}`},
		{"not a UUID", base + "/api/crawls/nope/index", "alice", "acme", 400, ""},
		{"not theirs", path, "bob", "globex", 404, `{"error":"not found"}`},
		{"absent", base + "/api/crawls/" + uuid.NewString() + "/index", "alice", "acme", 404, `{"error":"not found"}`},
		{"the requester", path, "alice", "acme", 202, `{"indexed":2,"pages":2,"failed":0}`},
		{"again: nothing left", path, "alice", "acme", 202, `{"indexed":0,"pages":0,"failed":0}`},
	} {
		status, body := searchCall(t, "POST", tc.url, tc.subject, tc.orgs)
		if status != tc.status || (tc.body != "" && string(bytes.TrimSpace(body)) != tc.body) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, status, body, tc.status, tc.body)
		}
	}
	var indexed int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM archives WHERE indexed_at IS NOT NULL`).Scan(&indexed); err != nil || indexed != 2 {
		t.Fatalf("indexed archives: %d %v", indexed, err)
	}
}
