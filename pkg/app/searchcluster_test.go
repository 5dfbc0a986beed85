package app_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// clusterServe is one serve of a test's database, with its own index
// directory.
type clusterServe struct {
	app  *app.App
	base string
	stop func()
}

func startClusterServe(t testing.TB, env *apptest.Env, name string) *clusterServe {
	t.Helper()
	s := env.App.Settings
	s.APIPort = 0
	s.DevIdentity = true
	s.ReplayKey = strings.Repeat("k", 48)
	s.WebhookURL = ""
	s.CaptureEngine = "http"
	s.SearchDir = filepath.Join(t.TempDir(), name, "index")
	s.SearchLeaseTTL = 1500 * time.Millisecond
	s.SearchPeerListen = "127.0.0.1:0"
	s.Lookup = func(name string) string { // crawls of loopback test sites
		if name == capture.EnvAllowPrivate {
			return "1"
		}
		return os.Getenv(name)
	}
	a := app.New(s, nil)
	a.SetAuthz(env.FGA)
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := a.Server(ctx, app.ServeOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	addr, err := srv.Listen()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once bool
	stop := func() {
		if once {
			return
		}
		once = true
		cancel()
		<-done
		a.Close()
	}
	t.Cleanup(stop)
	return &clusterServe{app: a, base: fmt.Sprintf("http://127.0.0.1:%d", addr.Port), stop: stop}
}

// searchAs asks serve's GET /api/search as subject of orgs.
func (c *clusterServe) searchAs(t *testing.T, subject, orgs, q string) (int, search.Page, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", c.base+"/api/search?q="+url.QueryEscape(q), nil)
	req.Header.Set(identity.SubjectHeader, subject)
	if orgs != "" {
		req.Header.Set(identity.OrganizationsHeader, orgs)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var page search.Page
	_ = json.Unmarshal(body, &page)
	return res.StatusCode, page, string(body)
}

// aliceCalls calls serve's API as alice of acme (dev identity headers),
// with body as JSON when given, and decodes the JSON answer.
func (c *clusterServe) aliceCalls(t testing.TB, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	req.Header.Set(identity.SubjectHeader, "alice")
	req.Header.Set(identity.OrganizationsHeader, "acme")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// admitArchive puts a WACZ whose one page says text in the bucket and
// admits it for org the way an admission records it (the archive row, its
// grantees in the ledger, its tuples in OpenFGA); the row's INSERT is what
// notifies the indexer.
func admitArchive(t *testing.T, env *apptest.Env, org, text string) string {
	t.Helper()
	ctx := context.Background()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("pages/pages.jsonl")
	fmt.Fprintf(w, "%s\n%s\n", `{"format":"json-pages-1.0","id":"pages","title":"All Pages"}`,
		fmt.Sprintf(`{"url":"https://%s.example/%s","title":"%s","text":"%s"}`, org, strings.ReplaceAll(text, " ", "-"), text, text))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	id, task := uuid.NewString(), uuid.NewString()
	key := "org/" + org + "/" + task + ".wacz"
	if err := env.Blob.Put(ctx, env.Bucket, key, "application/wacz", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	for _, tu := range []authz.Tuple{
		{User: authz.CaptureJob(task), Relation: "parent", Object: authz.Archive(id)},
		{User: authz.Organization(org), Relation: "parent", Object: authz.CaptureJob(task)},
	} {
		if err := env.FGA.Write(ctx, []authz.Tuple{tu}, nil); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	at := time.Now().UTC().Truncate(time.Microsecond)
	// One transaction, as an admission's: the notification leaves at commit.
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO archives (id, task_id, bucket, object_key, source_url, captured_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			id, task, env.Bucket, key, "https://"+org+".example/"+strings.ReplaceAll(text, " ", "-"), at); err != nil {
			return err
		}
		return apptest.CopySources(ctx, tx, []apptest.Source{{ArchiveID: id, TaskID: task, At: at, Kind: "organization", Principal: org}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// waitHits polls serve's search as alice of acme until it finds want hits
// for q (no timing asserted: the bound is the test's deadline).
func (c *clusterServe) waitHits(t *testing.T, q string, want int) search.Page {
	t.Helper()
	return c.waitHitsAs(t, "alice", "acme", q, want)
}

// waitHitsAs is waitHits as subject of org.
func (c *clusterServe) waitHitsAs(t *testing.T, subject, org, q string, want int) search.Page {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, page, body := c.searchAs(t, subject, org, q)
		if code == http.StatusOK && len(page.Hits) == want {
			return page
		}
		if time.Now().After(deadline) {
			t.Fatalf("search %q through %s: %d %s, want %d hit(s)", q, c.base, code, body, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSearchAcrossServes: two serves of one database, each with its own
// index directory. The first holds the index; the second never opens its
// own and sends searches to the first, which filters them for the caller
// the second identified. An archive admitted anywhere is searchable through
// either within seconds (woken by PostgreSQL). A forward without the secret
// is refused, hostile names in one are a 400 naming the member. When the
// holder stops, the other takes over, rebuilds its own index (its id is not
// the one recorded) and answers again; the stale holder's marks are fenced.
func TestSearchAcrossServes(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	ctx := context.Background()
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := startClusterServe(t, env, "a")
	b := startClusterServe(t, env, "b")
	first, err := st.SearchIndexer(ctx)
	if err != nil || !first.Live || first.Address == "" || first.Secret == "" || !strings.HasPrefix(first.IndexID, "bleve ") {
		t.Fatalf("record after two serves started: %+v %v", first, err)
	}

	// Admitted after both started: searchable through the one that does
	// not hold the index, for alice of acme only.
	admitArchive(t, env, "acme", "quince orchard")
	admitArchive(t, env, "globex", "quince market")
	page := b.waitHits(t, "quince", 1)
	if page.Hits[0].URL != "https://acme.example/quince-orchard" {
		t.Errorf("alice's hit through b: %+v", page.Hits[0])
	}
	if code, page, body := b.searchAs(t, "mallory", "umbrella", "quince"); code != http.StatusOK || len(page.Hits) != 0 || page.Total == nil || *page.Total != 0 {
		t.Errorf("a caller of neither organization through b: %d %s", code, body)
	}
	// The second archive may land in a later batch than the first.
	if page := b.waitHitsAs(t, "bob", "globex", "quince", 1); page.Hits[0].URL != "https://globex.example/quince-market" {
		t.Errorf("bob's hit through b: %+v", page.Hits[0])
	}
	// A hostile name never reaches the forward: the API refuses it.
	if code, _, body := b.searchAs(t, "alice", "acme#member", "quince"); code == http.StatusOK || code >= 500 {
		t.Errorf("a reserved character in the organization through b: %d %s", code, body)
	}

	// The peer address refuses what does not carry the secret, before
	// reading anything, and checks every member of what does.
	forward := func(secret string, body []byte) (int, map[string]any) {
		req, _ := http.NewRequest("POST", first.Address+"/search", bytes.NewReader(body))
		if secret != "" {
			req.Header.Set(app.SearchSecretHeader, secret)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(res.Body).Decode(&m)
		return res.StatusCode, m
	}
	good := []byte(`{"subject":"alice","orgs":["acme"],"q":"quince","limit":5}`)
	if code, m := forward(first.Secret, good); code != http.StatusOK || len(m["hits"].([]any)) != 1 {
		t.Errorf("a forward with the secret: %d %v", code, m)
	}
	for _, secret := range []string{"", "forged", first.Secret[:len(first.Secret)-1] + "x"} {
		if code, m := forward(secret, good); code != http.StatusUnauthorized || m["hits"] != nil {
			t.Errorf("a forward with secret %q: %d %v", secret, code, m)
		}
	}
	for _, tc := range []struct{ body, field string }{
		{`{"subject":"al\u0000ice","orgs":["acme"],"q":"quince","limit":5}`, "subject"},
		{`{"subject":"alice","orgs":["ac#me"],"q":"quince","limit":5}`, "orgs"},
		{`{"subject":"alice","orgs":["acme:x"],"q":"quince","limit":5}`, "orgs"},
		{"{\"subject\":\"al\xffice\",\"orgs\":[],\"q\":\"quince\",\"limit\":5}", "body"},
		{`{"subject":"alice","orgs":[],"q":"\ud800","limit":5}`, "q"},
		{`{"subject":"alice","orgs":[],"q":"quince","limit":500}`, "limit"},
		{`{"subject":"alice","orgs":[],"q":"quince","limit":5,"crawl":"nope"}`, "crawl"},
		{`{"subject":"alice","orgs":[],"q":"quince","limit":5,"admin":true}`, "body"},
		{`[1]`, "body"},
	} {
		code, m := forward(first.Secret, []byte(tc.body))
		if code != http.StatusBadRequest || m["field"] != tc.field {
			t.Errorf("forward %s: %d %v, want 400 naming %s", tc.body, code, m, tc.field)
		}
	}

	// The holder stops: b takes over (at once: a gave the lease back),
	// rebuilds into its own directory and answers alone.
	a.stop()
	b.waitHits(t, "quince", 1)
	second, err := st.SearchIndexer(ctx)
	if err != nil || !second.Live || second.Holder == first.Holder || second.IndexID == first.IndexID || second.Address == first.Address {
		t.Fatalf("record after the takeover: %+v (before %+v) %v", second, first, err)
	}
	// Admitted after the takeover: searchable within seconds too.
	admitArchive(t, env, "acme", "quince jam")
	b.waitHits(t, "quince", 2)
	// The old holder's marks no longer count.
	if err := st.MarkIndexedAs(ctx, first.Holder, first.IndexID, []string{uuid.NewString()}); !errors.Is(err, search.ErrNotIndexer) {
		t.Errorf("marks of the index that was taken over: %v, want ErrNotIndexer", err)
	}
	// An OpenSearch process would split the index: refused.
	var split *search.SplitError
	if _, err := st.CheckInOpenSearch(ctx, search.OpenSearchIdentity("http://127.0.0.1:9200", "pages"), time.Second); !errors.As(err, &split) {
		t.Errorf("an OpenSearch check-in while a Bleve serve holds the index: %v", err)
	}
}

// TestSearchIndexerDiesTakenOver: a holder that died (its lease recorded,
// never renewed, its address answering nothing) keeps the index only until
// its lease runs out; a serve started meanwhile answers 503 with
// Retry-After (never another index's answers), then takes the index over,
// indexes into its own directory and answers.
func TestSearchIndexerDiesTakenOver(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	ctx := context.Background()
	admitArchive(t, env, "acme", "medlar tart")
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The dead holder: a lease of 3 s, an address nobody answers on.
	if _, err := conn.Exec(ctx, `UPDATE search_indexer SET holder = 'serve dead', index_id = 'bleve dead', address = 'http://127.0.0.1:9', secret = 's', lease_until = now() + interval '3 seconds'`); err != nil {
		t.Fatal(err)
	}
	c := startClusterServe(t, env, "c")
	// A serve keeps a copy of the WACZs it puts only while it holds the
	// index (its indexer reads them from memory).
	keeps := func() bool {
		t.Helper()
		key := "org/acme/" + uuid.NewString() + ".wacz"
		if err := c.app.Blob().Put(ctx, env.Bucket, key, "application/wacz+zip", []byte("a wacz")); err != nil {
			t.Fatal(err)
		}
		_, ok := c.app.Blob().TakeRecent(env.Bucket, key)
		return ok
	}
	if keeps() {
		t.Errorf("a serve that does not hold the search index kept a copy of a WACZ it put")
	}
	code, _, body := c.searchAs(t, "alice", "acme", "medlar")
	if code != http.StatusServiceUnavailable {
		t.Errorf("a search while the dead holder's lease runs: %d %s, want 503", code, body)
	}
	c.waitHits(t, "medlar", 1)
	if !keeps() {
		t.Errorf("the serve that took the index over keeps no copy of the WACZs it puts")
	}
	st, _ := env.App.Store(ctx)
	if rec, err := st.SearchIndexer(ctx); err != nil || rec.Holder == "serve dead" || rec.IndexID == "bleve dead" || !rec.Live {
		t.Errorf("record after the takeover: %+v %v", rec, err)
	}
}

// TestCrawlSearchableThroughOtherServe: a crawl started through one serve
// (whichever process runs it) is searchable through the serve that does
// not hold the index, without asking for it: its levels' admissions wake
// the holder. The crawl's view then reports every archive indexed and how
// long after the crawl's end the last became searchable.
func TestCrawlSearchableThroughOtherServe(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	ctx := context.Background()
	if _, err := authz.Grant(ctx, env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	site := twoPageSite(t, "sorbet")
	startClusterServe(t, env, "a")
	b := startClusterServe(t, env, "b")
	api := func(method, path, body string) (int, map[string]any) { return b.aliceCalls(t, method, path, body) }
	code, out := api("POST", "/api/crawls", fmt.Sprintf(`{"seeds":[%q],"maxDepth":1,"perHostDelayMs":0}`, site.URL+"/"))
	if code != http.StatusAccepted {
		t.Fatalf("start the crawl: %d %v", code, out)
	}
	id := out["crawlId"].(string)
	b.waitHits(t, "sorbet", 2)
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, out = api("GET", "/api/crawls/"+id, "")
		s, _ := out["search"].(map[string]any)
		if code == http.StatusOK && out["state"] == "succeeded" && s != nil && s["searchableAfterMs"] != nil {
			if s["archives"] != float64(2) || s["indexed"] != float64(2) || s["searchableAfterMs"].(float64) < 0 || s["searchableAt"] == nil {
				t.Errorf("the crawl's search member: %v", s)
			}
			t.Logf("end-to-searchable: %v ms after the crawl ended (searchable at %v)", s["searchableAfterMs"], s["searchableAt"])
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the crawl's view: %d %v", code, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// twoPageSite serves a front page linking /a, both with word in their
// title and text: a crawl of depth 1 captures two pages a search for word
// finds.
func twoPageSite(t *testing.T, word string) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprintf(w, `<!doctype html><title>%s home</title><p>lemon %s</p><a href="/a">a</a>`, word, word)
		case "/a":
			fmt.Fprintf(w, `<!doctype html><title>%s a</title><p>mango %s</p>`, word, word)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	return site
}
