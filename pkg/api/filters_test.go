package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// filterFixture is a ledger of captures across hosts, days and a crawl,
// indexed, served with a list page of one archive (so paging shows).
type filterFixture struct {
	base    string
	crawlID string
	ids     map[string]string // name → archive id
}

func newFilterFixture(t *testing.T) filterFixture {
	t.Helper()
	ctx := context.Background()
	env := apptest.New(t)
	day := func(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }
	named := []struct {
		name string
		a    searchArchive
	}{
		{"a0", searchArchive{org: "acme", url: "https://example.com/a", at: day(20, 9), title: "Plum tree", text: "a plum tree in bloom"}},
		{"a1", searchArchive{org: "acme", url: "https://example.com/a", at: day(21, 9), title: "Plum tree", text: "a plum tree in fruit"}},
		{"a2", searchArchive{org: "acme", url: "https://other.test/b", at: day(21, 10), title: "Cherry blossom", text: "cherry trees"}},
		{"a3", searchArchive{org: "acme", url: "https://Example.com:8443/c", at: day(22, 9), title: "<b>Plum</b> jam", text: "plum jam recipe"}},
		{"g0", searchArchive{org: "globex", url: "https://example.com/a", at: day(22, 10), title: "Plum tree", text: "a plum tree in winter"}},
	}
	f := filterFixture{ids: map[string]string{}}
	var archives []searchArchive
	for _, n := range named {
		n.a.id, n.a.task = uuid.NewString(), uuid.NewString()
		f.ids[n.name] = n.a.id
		archives = append(archives, n.a)
	}
	addSearchArchives(t, env, archives)
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, `INSERT INTO crawls (seeds, max_depth, max_pages, per_host_delay_ms, host_parallelism, org_id, requested_by, state, stop_reason, finished_at)
		VALUES ('{https://example.com/}', 0, 30, 0, 1, 'acme', 'alice', 'succeeded', 'completed', now()) RETURNING id::text`).Scan(&f.crawlID); err != nil {
		t.Fatal(err)
	}
	for i, a := range []searchArchive{archives[1], archives[2]} {
		if _, err := conn.Exec(ctx, `INSERT INTO crawl_pages (crawl_id, url, depth, host, state, task_id) VALUES ($1, $2, 0, 'example.com', 'captured', $3)`,
			f.crawlID, fmt.Sprintf("https://example.com/%d", i), a.task); err != nil {
			t.Fatal(err)
		}
	}
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
	if res, err := ix.IndexPending(ctx, nil); err != nil || res.Indexed != len(archives) {
		t.Fatalf("index: %+v %v", res, err)
	}
	searcher, err := env.App.Searcher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	access, err := env.App.Access(ctx)
	if err != nil {
		t.Fatal(err)
	}
	access.PageSize = 1
	srv := httptest.NewServer((&api.Server{Access: access, Identity: identity.Headers{}, Submitters: app.Permissions{Client: env.FGA}, Search: searcher}).Handler())
	t.Cleanup(srv.Close)
	f.base = srv.URL
	return f
}

// listAll pages through GET /api/archives?query as alice (acme), failing on
// a repeated archive, and returns the archives' names in order.
func (f filterFixture) listAll(t *testing.T, query string) ([]string, []archive.PageBody) {
	t.Helper()
	name := map[string]string{}
	for n, id := range f.ids {
		name[id] = n
	}
	var got []string
	var pages []archive.PageBody
	before := ""
	for range 20 {
		u := f.base + "/api/archives?" + query
		if before != "" {
			u += "&before=" + url.QueryEscape(before)
		}
		status, body := searchCall(t, "GET", u, "alice", "acme")
		var p archive.PageBody
		if err := json.Unmarshal(body, &p); status != 200 || err != nil {
			t.Fatalf("%s: %d %s", query, status, body)
		}
		pages = append(pages, p)
		for _, a := range p.Archives {
			if slices.Contains(got, name[a.ID]) {
				t.Fatalf("%s: %s shown twice", query, name[a.ID])
			}
			got = append(got, name[a.ID])
		}
		if p.Next == nil {
			return got, pages
		}
		before = p.Next.Before
	}
	t.Fatalf("%s: more than 20 pages", query)
	return nil, nil
}

// TestArchiveListFilters: GET /api/archives keeps only the archives of a
// crawl, a host, a capture-time range or a text in URL or title, pages
// through them one at a time without a duplicate, shows each row's title
// (kept when the archive was indexed), and a cursor opens only for the
// filter it was handed out with.
func TestArchiveListFilters(t *testing.T) {
	t.Parallel()
	f := newFilterFixture(t)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"a3", "a2", "a1", "a0"}},
		{"host=example.com", []string{"a3", "a1", "a0"}},
		{"host=EXAMPLE.COM", []string{"a3", "a1", "a0"}},
		{"host=other.test", []string{"a2"}},
		{"from=2026-11-21&to=2026-11-21", []string{"a2", "a1"}},
		{"from=2026-11-21T09:30:00Z", []string{"a3", "a2"}},
		{"to=2026-11-21T09:00:00Z", []string{"a1", "a0"}},
		{"q=plum", []string{"a3", "a1", "a0"}},
		{"q=PLUM+JAM", nil},
		{"q=%3Cb%3Eplum", []string{"a3"}},
		{"q=other.test", []string{"a2"}},
		{"crawl=" + f.crawlID, []string{"a2", "a1"}},
		{"crawl=" + f.crawlID + "&host=example.com&q=tree", []string{"a1"}},
		{"crawl=" + uuid.NewString(), nil},
	} {
		got, pages := f.listAll(t, tc.query)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.query, got, tc.want)
		}
		if tc.query == "host=other.test" && (len(pages[0].Archives) != 1 || pages[0].Archives[0].Title != "Cherry blossom") {
			t.Errorf("the row's title: %+v", pages[0].Archives)
		}
	}
	// A cursor of one filter does not open for another (nor for none).
	_, pages := f.listAll(t, "host=example.com")
	token := pages[0].Next.Before
	for _, q := range []string{"", "host=other.test&", "host=example.com&q=plum&"} {
		status, body := searchCall(t, "GET", f.base+"/api/archives?"+q+"before="+url.QueryEscape(token), "alice", "acme")
		if status != 400 || !strings.Contains(string(body), "querystring/before") {
			t.Errorf("host=example.com's cursor with %q: %d %s", q, status, body)
		}
	}
	// Hostile values: a 400 naming the parameter, before identity.
	for _, tc := range []struct{ query, message string }{
		{"host=a/b", "querystring/host must be a host name"},
		{"host=example.com:80", "querystring/host must be a host name"},
		{"host=%00", "querystring/host must not contain control characters"},
		{"host=%FF", "querystring/host must be valid UTF-8"},
		{"host=%ED%A0%80", "querystring/host must be valid UTF-8"},
		{"host=a&host=b", "querystring/host must be a single value"},
		{"crawl=nope", `querystring/crawl must match format "uuid"`},
		{"from=yesterday", "querystring/from must be a date-time (RFC 3339) or a date (YYYY-MM-DD)"},
		{"from=2026-11-22&to=2026-11-20", "querystring/to must not be before from"},
		{"to=0000-01-01", "querystring/to must be between the years 1 and 9998"},
		{"q=a%00b", "querystring/q must not contain control characters"},
		{"q=" + strings.Repeat("x", 257), "querystring/q must NOT have more than 256 characters"},
	} {
		for _, who := range []string{"", "alice"} {
			status, body := searchCall(t, "GET", f.base+"/api/archives?"+tc.query, who, "acme")
			var got struct{ Message string }
			_ = json.Unmarshal(body, &got)
			if status != 400 || !strings.HasPrefix(got.Message, tc.message) {
				t.Errorf("%q as %q: %d %s, want 400 %q", tc.query, who, status, body, tc.message)
			}
		}
	}
}

// TestSearchFiltersAndCollapse: GET /api/search takes the list's filters
// (crawl, host, from, to), collapses the captures of one URL into the
// newest with the others listed — only those the caller may view — and
// says whether total is exact.
func TestSearchFiltersAndCollapse(t *testing.T) {
	t.Parallel()
	f := newFilterFixture(t)
	name := map[string]string{}
	for n, id := range f.ids {
		name[id] = n
	}
	ask := func(subject, orgs, query string) (search.Page, string) {
		t.Helper()
		status, body := searchCall(t, "GET", f.base+"/api/search?"+query, subject, orgs)
		var p search.Page
		if err := json.Unmarshal(body, &p); status != 200 || err != nil {
			t.Fatalf("%s: %d %s", query, status, body)
		}
		return p, string(body)
	}
	hits := func(p search.Page) []string {
		var out []string
		for _, h := range p.Hits {
			s := name[h.ArchiveID]
			for _, o := range h.OtherCaptures {
				s += "+" + name[o.ArchiveID]
			}
			out = append(out, s)
		}
		slices.Sort(out)
		return out
	}
	p, body := ask("alice", "acme", "q=plum")
	// total counts hits as shown: a0 is a1's older capture, not a hit.
	if got := hits(p); !slices.Equal(got, []string{"a1+a0", "a3"}) || p.Total == nil || *p.Total != 2 || !p.TotalExact || p.TotalIsLowerBound {
		t.Errorf("alice's plum: %v %s", got, body)
	}
	for _, h := range p.Hits {
		if name[h.ArchiveID] == "a1" && (len(h.OtherCaptures) != 1 || !h.OtherCaptures[0].CapturedAt.Equal(time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)) || h.OtherCapturesMore) {
			t.Errorf("a1's other captures: %+v", h)
		}
	}
	// globex's capture of the same URL: bob sees it alone, with none of
	// acme's as other captures; alice never sees it.
	if p, body := ask("bob", "globex", "q=plum"); !slices.Equal(hits(p), []string{"g0"}) {
		t.Errorf("bob's plum: %v %s", hits(p), body)
	}
	// A page of one hit: the other capture comes from the ledger.
	if p, body := ask("alice", "acme", "q=fruit"); !slices.Equal(hits(p), []string{"a1+a0"}) {
		t.Errorf("alice's fruit: %v %s", hits(p), body)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"q=plum&host=other.test", nil},
		{"q=cherry&host=other.test", []string{"a2"}},
		{"q=plum&host=example.com&from=2026-11-22", []string{"a3"}},
		{"q=plum&to=2026-11-20", []string{"a0"}},
		{"q=tree&crawl=" + f.crawlID, []string{"a1", "a2"}},
	} {
		if p, body := ask("alice", "acme", tc.query); !slices.Equal(hits(p), tc.want) {
			t.Errorf("%s: %v, want %v (%s)", tc.query, hits(p), tc.want, body)
		}
	}
	for _, tc := range []struct{ query, message string }{
		{"q=plum&host=%00", "querystring/host must not contain control characters"},
		{"q=plum&crawl=x", `querystring/crawl must match format "uuid"`},
		{"q=plum&from=2026-13-01", "querystring/from must be a date-time"},
	} {
		status, body := searchCall(t, "GET", f.base+"/api/search?"+tc.query, "alice", "acme")
		var got struct{ Message string }
		_ = json.Unmarshal(body, &got)
		if status != 400 || !strings.HasPrefix(got.Message, tc.message) {
			t.Errorf("%q: %d %s, want 400 %q", tc.query, status, body, tc.message)
		}
	}
	_ = http.StatusOK
}

// TestSearchPassesListGate: searches and lists share one gate. Callers who
// see nothing search (the index not narrowed, so each candidate costs a
// check, as in the list's full scan) and hold their places: the same
// caller's list (429) and a third search (503) are refused at once, with
// Retry-After, before any check — minting is not held up, and the admitted searches
// finish once OpenFGA answers.
func TestSearchPassesListGate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	var archives []searchArchive
	for i := range 30 {
		org := "contoso"
		if i == 0 {
			org = "acme"
		}
		archives = append(archives, searchArchive{id: uuid.NewString(), task: uuid.NewString(), org: org, title: fmt.Sprintf("plum %d", i), text: "plum"})
	}
	addSearchArchives(t, env, archives)
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
	if res, err := ix.IndexPending(ctx, nil); err != nil || res.Indexed != len(archives) {
		t.Fatalf("index: %+v %v", res, err)
	}
	store, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	perms := &pausingPerms{Permissions: app.Permissions{Client: env.FGA}, entered: make(chan string, 16), release: make(chan struct{})}
	gate := archive.NewScanGate(archive.GateBounds{Lists: 2, PerCaller: 1})
	searcher := &search.Searcher{Backend: b, Perms: perms, Keys: store, TimeBudget: 3 * time.Second, Gate: gate}
	access := &archive.Access{Perms: perms, TimeBudget: 3 * time.Second, Gate: gate}
	_ = listServer(t, env, access) // fills access's catalog and signer
	srv := httptest.NewServer((&api.Server{Access: access, Identity: identity.Headers{}, Submitters: app.Permissions{Client: env.FGA}, Search: searcher}).Handler())
	t.Cleanup(srv.Close)
	base := srv.URL

	type result struct {
		who    string
		status int
		body   string
	}
	done := make(chan result, 2)
	start := func(subject string) {
		holding := gate.Running()
		go func() {
			status, body := searchCall(t, "GET", base+"/api/search?q=plum", subject, "nobody")
			done <- result{subject, status, string(body)}
		}()
		for deadline := time.Now().Add(30 * time.Second); gate.Running() == holding; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s's search never entered the gate", subject)
			}
		}
	}
	start("mallory")
	select {
	case s := <-perms.entered:
		if s != "mallory" {
			t.Fatalf("%s is checking", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mallory's search never asked OpenFGA")
	}
	// Her list waits for her search's place: refused at once.
	callerBusy := `{"error":"too many of your archive lists are running at once (limit 1); retry after 3 s"}`
	if a := getList(t, base, "", "mallory", "nobody"); a.status != 429 || a.header.Get("Retry-After") != "3" || a.body != callerBusy {
		t.Errorf("mallory's list beside her search: %d Retry-After=%q %s, want 429 %s", a.status, a.header.Get("Retry-After"), a.body, callerBusy)
	}
	start("oscar")
	serverBusy := `{"error":"server busy: too many searches are running at once (limit 2); retry after 3 s"}`
	for _, who := range []string{"trudy", "bob"} {
		req, _ := http.NewRequest("GET", base+"/api/search?q=plum", nil)
		req.Header.Set(identity.SubjectHeader, who)
		req.Header.Set(identity.OrganizationsHeader, "acme")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		_, _ = io.Copy(&body, res.Body)
		res.Body.Close()
		if res.StatusCode != 503 || res.Header.Get("Retry-After") != "3" || strings.TrimSpace(body.String()) != serverBusy {
			t.Errorf("%s's search past the server's bound: %d Retry-After=%q %s, want 503 %s", who, res.StatusCode, res.Header.Get("Retry-After"), body.String(), serverBusy)
		}
	}
	select {
	case s := <-perms.entered:
		t.Errorf("a refused search (%s) asked OpenFGA", s)
	default:
	}
	// Minting does not pass the gate.
	req, _ := http.NewRequest("POST", base+"/api/archives/"+archives[0].id+"/url", nil)
	req.Header.Set(identity.SubjectHeader, "bob")
	req.Header.Set(identity.OrganizationsHeader, "acme")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Errorf("mint while the searches are full: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	close(perms.release)
	for range 2 {
		r := <-done
		if r.status != 200 || !strings.Contains(r.body, `"hits":[]`) {
			t.Errorf("%s's admitted search: %d %s", r.who, r.status, r.body)
		}
	}
	if status, body := searchCall(t, "GET", base+"/api/search?q=plum", "bob", "acme"); status != 200 || !strings.Contains(string(body), archives[0].id) {
		t.Errorf("bob after the searches ended: %d %s", status, body)
	}
}
