package search_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/outbox"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// The system suite: a Japanese and English corpus of more than 200 WACZ
// files written with wacz.Write, uploaded to the test S3 server
// (versitygw), registered as archives of three organizations with their
// admission tuples in OpenFGA, indexed by the indexer (ranged reads) and
// searched through the Searcher with can_view filtering — once per backend.

// corpusPage is one page of the corpus and what it is about, which is
// how the expected results are worked out (never from the engine).
type corpusPage struct {
	url, title, text string
	withheld         string
	responsive       bool // contains レスポンシブなデザイン
	tokyo, kyoto     bool // contains 東京 / 京都 (never both)
	run              bool // contains run, runs, RUNNING… in English
}

type corpusArchive struct {
	id, task, org, key string
	pages              []corpusPage
	wacz               []byte
}

const corpusSize = 220

var corpusOrgs = []string{"acme", "acme", "globex", "globex", "initech"}

// buildCorpus writes the corpus's WACZ files (the same bytes every run).
func buildCorpus(t testing.TB) []corpusArchive {
	t.Helper()
	created := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var out []corpusArchive
	for i := range corpusSize {
		a := corpusArchive{id: uuid.NewString(), task: uuid.NewString(), org: corpusOrgs[i%len(corpusOrgs)]}
		a.key = fmt.Sprintf("org/%s/%s_c0ffee00.wacz", a.org, a.task)
		n := 1
		if i%7 == 0 {
			n = 2
		}
		for p := range n {
			k := i*3 + p
			pg := corpusPage{url: fmt.Sprintf("https://site%d.example/page/%d", i%17, k)}
			title := fmt.Sprintf("ページ %d — Page %d", k, k)
			text := []string{fmt.Sprintf("これは %d 番目の記事の本文です。", k), fmt.Sprintf("This is the body of article %d.", k)}
			if k%9 == 0 {
				pg.responsive = true
				text = append(text, "画面の幅に合わせて組み替えるレスポンシブなデザインを採用しました。")
			}
			if k%11 == 0 {
				pg.tokyo = true
				title = "東京の天気 " + title
				text = append(text, "東京は晴れ、気温は二十度。")
			} else if k%13 == 0 {
				pg.kyoto = true
				text = append(text, "京都の寺では紅葉が見ごろです。")
			}
			switch k % 8 {
			case 3:
				pg.run = true
				text = append(text, "She runs along the river every morning.")
			case 5:
				pg.run = true
				title = "RUNNING club notes " + title
			}
			pg.title, pg.text = title, strings.Join(text, "\n\n")
			switch i {
			case 17:
				pg = corpusPage{url: pg.url, withheld: "no-archive"}
			case 23:
				pg = corpusPage{url: pg.url, withheld: "url-policy"}
			}
			a.pages = append(a.pages, pg)
		}
		c := wacz.Capture{Created: created.Add(time.Duration(i) * time.Minute), Software: "ledgerctl test"}
		for _, pg := range a.pages {
			c.Pages = append(c.Pages, wacz.Page{URL: pg.url, Date: c.Created, Title: pg.title, Text: pg.text, TextWithheld: pg.withheld})
			c.Exchanges = append(c.Exchanges, wacz.Exchange{URL: pg.url, Date: c.Created, Status: 200,
				Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}},
				Body:   []byte("<html><title>" + pg.title + "</title><body>" + pg.text + "</body></html>")})
		}
		var buf bytes.Buffer
		if _, err := wacz.Write(&buf, c); err != nil {
			t.Fatal(err)
		}
		a.wacz = buf.Bytes()
		out = append(out, a)
	}
	return out
}

// brokenArchive is a registered archive whose WACZ cannot be read (or
// reads with problems).
type brokenArchive struct {
	name, id, task, key string
	body                []byte // nil: never uploaded
	reason              string // in the failure reason; "" when it indexes
}

func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const pagesHeader = `{"format":"json-pages-1.0","id":"pages","title":"All Pages"}` + "\n"

func brokenArchives(t testing.TB) []brokenArchive {
	list := []brokenArchive{
		{name: "not a zip", body: []byte("this is not a ZIP file at all, just text"), reason: "not a ZIP"},
		{name: "no pages", body: zipOf(t, map[string]string{"datapackage.json": "{}"}), reason: "no pages/pages.jsonl"},
		{name: "wrong types", body: zipOf(t, map[string]string{"pages/pages.jsonl": pagesHeader + `{"url":"https://wrong.example/","title":5,"textTruncated":"yes"}` + "\n"}), reason: "no readable page"},
		{name: "missing object", reason: "no such object"},
		{name: "empty", body: zipOf(t, map[string]string{"pages/pages.jsonl": pagesHeader})},
		{name: "partial", body: zipOf(t, map[string]string{"pages/pages.jsonl": pagesHeader + "not json\n" + `{"url":"https://partial.example/","title":"partial","text":"a partial archive page"}` + "\n"})},
	}
	for i := range list {
		list[i].id, list[i].task = uuid.NewString(), uuid.NewString()
		list[i].key = "org/acme/broken-" + list[i].task + ".wacz"
	}
	return list
}

// system is one backend's run of the suite.
type system struct {
	env      *apptest.Env
	store    *postgres.Store
	backend  search.Backend
	indexer  *search.Indexer
	searcher *search.Searcher
}

func newSystem(t *testing.T, backend search.Backend, corpus []corpusArchive, broken []brokenArchive) *system {
	t.Helper()
	ctx := context.Background()
	env := apptest.New(t)
	env.App.SetSearchBackend(backend)
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Objects into the bucket, a few at a time.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, a := range corpus {
		g.Go(func() error { return env.Blob.Put(gctx, env.Bucket, a.key, "application/wacz", a.wacz) })
	}
	for _, b := range broken {
		if b.body != nil {
			g.Go(func() error { return env.Blob.Put(gctx, env.Bucket, b.key, "application/wacz", b.body) })
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	// Ledger rows with one COPY, and their admission tuples in OpenFGA.
	var rows [][]any
	var tuples []authz.Tuple
	var sources []apptest.Source
	add := func(id, task, org, key string, i int) {
		rows = append(rows, []any{id, task, env.Bucket, key, fmt.Sprintf("https://site%d.example/", i%17), []string{"corpus"},
			time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute)})
		owner := "submitter-" + org
		at := rows[len(rows)-1][6].(time.Time)
		sources = append(sources,
			apptest.Source{ArchiveID: id, TaskID: task, At: at, Kind: ledger.ReasonOrganization, Principal: org},
			apptest.Source{ArchiveID: id, TaskID: task, At: at, Kind: ledger.ReasonOwner, Principal: owner})
		for _, tu := range ledger.AdmissionTuples(id, task, org, &owner).Writes {
			tuples = append(tuples, authz.Tuple{User: tu.User, Relation: tu.Relation, Object: tu.Object})
		}
	}
	for i, a := range corpus {
		add(a.id, a.task, a.org, a.key, i)
	}
	for i, b := range broken {
		add(b.id, b.task, "acme", b.key, corpusSize+i)
	}
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"archives"}, []string{"id", "task_id", "bucket", "object_key", "source_url", "labels", "captured_at"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	if err := apptest.CopySources(ctx, conn, sources); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(tuples); i += 100 {
		if err := env.FGA.Write(ctx, tuples[i:min(i+100, len(tuples))], nil); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := env.App.Indexer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s, err := env.App.Searcher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return &system{env: env, store: st, backend: backend, indexer: ix, searcher: s}
}

type caller struct {
	subject string
	orgs    []string
}

var callers = []caller{
	{"alice", []string{"acme"}},
	{"bob", []string{"globex"}},
	{"carol", []string{"acme", "initech"}},
	{"mallory", []string{"umbrella"}}, // sees nothing
}

func (c caller) sees(org string) bool { return slices.Contains(c.orgs, org) }

// searchAll follows Next from the first page to the last, limit hits a
// page, and returns the hits, the first page's total and exactness.
func searchAll(t *testing.T, s *search.Searcher, c caller, raw string, limit int) ([]search.Hit, int, bool) {
	t.Helper()
	q := mustQuery(t, raw)
	req := search.Request{Query: q, Limit: limit}
	var hits []search.Hit
	total, exact := -1, false
	for range 200 {
		page, err := s.Search(context.Background(), c.subject, c.orgs, req)
		if err != nil {
			t.Fatalf("%s %q: %v", c.subject, raw, err)
		}
		if total < 0 {
			if page.Total == nil {
				t.Fatalf("%s %q: the first page has no total", c.subject, raw)
			}
			total, exact = *page.Total, page.TotalExact
		} else if page.Total != nil {
			t.Fatalf("%s %q: a later page has a total", c.subject, raw)
		}
		if len(page.Hits) > limit {
			t.Fatalf("%s %q: %d hits on a page of %d", c.subject, raw, len(page.Hits), limit)
		}
		hits = append(hits, page.Hits...)
		if page.Next == nil {
			return hits, total, exact
		}
		req.Cursor = *page.Next
	}
	t.Fatalf("%s %q: paging does not end", c.subject, raw)
	return nil, 0, false
}

// expected is the url of every corpus page that match says matches and
// that c may see.
func expected(corpus []corpusArchive, c caller, match func(corpusPage) bool) []string {
	var out []string
	for _, a := range corpus {
		for _, p := range a.pages {
			if match(p) && c.sees(a.org) {
				out = append(out, p.url)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestSearchSystem runs the system suite against both backends.
func TestSearchSystem(t *testing.T) {
	t.Parallel()
	corpus := buildCorpus(t)
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runSystemSuite(t, open(t), corpus)
		})
	}
}

func runSystemSuite(t *testing.T, backend search.Backend, corpus []corpusArchive) {
	ctx := context.Background()
	broken := brokenArchives(t)
	start := time.Now()
	sys := newSystem(t, backend, corpus, broken)
	t.Logf("setup %v", time.Since(start).Round(time.Millisecond))
	start = time.Now()

	// Index everything pending: the corpus and the empty and partial
	// archives are indexed, the four broken ones fail, each with its
	// reason, and the rest is not held up by them.
	wantPages := 1 // the partial archive's one good page
	for _, a := range corpus {
		wantPages += len(a.pages)
	}
	res, err := sys.indexer.IndexPending(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Indexed != corpusSize+2 || res.Failed != 4 || res.Pages != wantPages || res.SkippedLines != 1 {
		t.Fatalf("first pass: %+v (want %d indexed, 4 failed, %d pages, 1 skipped line)", res, corpusSize+2, wantPages)
	}
	t.Logf("indexed %d archives, %d pages in %v", res.Indexed, res.Pages, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	counts, failures, err := sys.store.IndexStatus(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	if counts != (postgres.IndexCounts{Archives: corpusSize + 6, Indexed: corpusSize + 2, Pending: 0, Failed: 4}) || len(failures) != 4 {
		t.Fatalf("status: %+v, %d failures", counts, len(failures))
	}
	reasons := map[string]string{}
	for _, f := range failures {
		reasons[f.ArchiveID] = f.Reason
	}
	for _, b := range broken {
		if got := reasons[b.id]; (b.reason == "") != (got == "") || !strings.Contains(got, b.reason) {
			t.Errorf("%s: failure reason %q, want one naming %q", b.name, got, b.reason)
		}
	}
	// A failed archive waits for its retry time: the next pass is empty.
	if again, err := sys.indexer.IndexPending(ctx, nil); err != nil || again.Indexed+again.Failed != 0 {
		t.Fatalf("second pass: %+v %v", again, err)
	}

	// A withheld page is indexed, with its reason and no text.
	for _, i := range []int{17, 23} {
		a := corpus[i]
		docs, err := backend.Documents(ctx, []string{search.DocID(a.id, 0)})
		d, ok := docs[search.DocID(a.id, 0)]
		if err != nil || !ok || d.TextWithheld == nil || *d.TextWithheld != a.pages[0].withheld || d.Text != "" || d.Title != "" || d.URL != a.pages[0].url {
			t.Fatalf("withheld page of archive %d: %+v %v", i, d, err)
		}
	}

	queries := []struct {
		q     string
		match func(corpusPage) bool
	}{
		{"レスポンシブ", func(p corpusPage) bool { return p.responsive }},
		{"レスポンシブなデザイン", func(p corpusPage) bool { return p.responsive }},
		{"東京", func(p corpusPage) bool { return p.tokyo }},
		{"京都", func(p corpusPage) bool { return p.kyoto }},
		{"running", func(p corpusPage) bool { return p.run }},
		{"RUNS", func(p corpusPage) bool { return p.run }},
		{"Run", func(p corpusPage) bool { return p.run }},
		{"東京 running", func(p corpusPage) bool { return p.tokyo && p.run }},
		{"article", func(p corpusPage) bool { return p.withheld == "" }},
	}
	results := map[string][]search.Hit{}
	for _, c := range callers {
		for _, qc := range queries {
			hits, total, exact := searchAll(t, sys.searcher, c, qc.q, 7)
			want := expected(corpus, c, qc.match)
			var got []string
			for _, h := range hits {
				got = append(got, h.URL)
			}
			if len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
				t.Errorf("%s %q: a hit twice", c.subject, qc.q)
			}
			slices.Sort(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s %q: %d hits, want %d\n got %v\nwant %v", c.subject, qc.q, len(got), len(want), got, want)
			}
			// total counts only what the caller may see: exactly, when
			// every match was examined; a lower bound otherwise.
			if exact && total != len(want) || !exact && (total > len(want) || total < min(len(want), 7)) {
				t.Errorf("%s %q: total %d (exact %v), %d visible", c.subject, qc.q, total, exact, len(want))
			}
			if qc.q == "レスポンシブ" {
				for _, h := range hits {
					if !strings.Contains(strings.Join(h.Highlight, " "), "<mark>レスポンシブ</mark>") {
						t.Errorf("%s: snippet without the match: %q", h.URL, h.Highlight)
					}
				}
			}
			results[c.subject+" "+qc.q] = hits
		}
	}
	t.Logf("%d searches followed to their end in %v", len(results), time.Since(start).Round(time.Millisecond))
	if len(results["mallory 東京"]) != 0 {
		t.Fatal("a caller of another organization sees hits")
	}
	// Nor does the search do any work for it: the index query itself is
	// narrowed to the caller's recorded grantees, so the matches in others'
	// archives (every page has "article") are never examined or checked,
	// and the answer costs what an absent word costs.
	for _, q := range []string{"article", "nothing-like-this"} {
		page, err := sys.searcher.Search(ctx, "mallory", []string{"umbrella"}, search.Request{Query: mustQuery(t, q), Limit: 20})
		if err != nil || len(page.Hits) != 0 || page.Examined != 0 || page.Checked != 0 {
			t.Errorf("an outsider's %q: %d hits, %d candidates examined, %d archives checked (%v); want none of each", q, len(page.Hits), page.Examined, page.Checked, err)
		}
	}

	// A cursor opens only for its caller and its query.
	first, err := sys.searcher.Search(ctx, "alice", []string{"acme"}, search.Request{Query: mustQuery(t, "article"), Limit: 5})
	if err != nil || first.Next == nil {
		t.Fatalf("first page: %v %v", first.Next, err)
	}
	for _, bad := range []struct {
		c caller
		q string
	}{{caller{"bob", []string{"globex"}}, "article"}, {caller{"alice", []string{"acme"}}, "running"}, {caller{"alice", []string{"acme", "globex"}}, "article"}} {
		_, err := sys.searcher.Search(ctx, bad.c.subject, bad.c.orgs, search.Request{Query: mustQuery(t, bad.q), Limit: 5, Cursor: *first.Next})
		if !errors.Is(err, search.ErrBadCursor) {
			t.Errorf("%s %q with alice's cursor: %v", bad.c.subject, bad.q, err)
		}
	}

	// `search reindex`: the one statement, then the indexer catches up;
	// every answer is the same as before.
	if n, err := sys.store.ClearIndexed(ctx); err != nil || n != int64(corpusSize+2) {
		t.Fatalf("clear: %d %v", n, err)
	}
	res, err = sys.indexer.IndexPending(ctx, nil)
	if err != nil || res.Indexed != corpusSize+2 || res.Failed != 4 {
		t.Fatalf("reindex: %+v %v", res, err)
	}
	for _, c := range callers {
		for _, qc := range queries {
			hits, _, _ := searchAll(t, sys.searcher, c, qc.q, 7)
			if !reflect.DeepEqual(hits, results[c.subject+" "+qc.q]) {
				t.Errorf("%s %q: after reindex %d hits, before %d (or another order)", c.subject, qc.q, len(hits), len(results[c.subject+" "+qc.q]))
			}
		}
	}
	runScopeChanges(t, sys, corpus)
}

// urlsOf is the sorted urls of hits.
func urlsOf(hits []search.Hit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.URL)
	}
	slices.Sort(out)
	return out
}

// pageURLs is the sorted urls of the archives' pages that are not withheld
// (those "article" matches).
func pageURLs(archives ...corpusArchive) []string {
	var out []string
	for _, a := range archives {
		for _, p := range a.pages {
			if p.withheld == "" {
				out = append(out, p.url)
			}
		}
	}
	slices.Sort(out)
	return out
}

// runScopeChanges: what the ledger records after an archive was indexed
// reaches the search at once — a share granted to an outsider makes the
// archive's pages findable by it, a revoke hides them again, and an
// organization the archive's job gains later finds them before and after
// the archive is indexed again — while hits stay exactly what OpenFGA
// allows.
func runScopeChanges(t *testing.T, sys *system, corpus []corpusArchive) {
	ctx := context.Background()
	mallory := caller{"mallory", []string{"umbrella"}}
	search1 := func(c caller) []string {
		t.Helper()
		hits, total, exact := searchAll(t, sys.searcher, c, "article", 7)
		if exact && total != len(hits) {
			t.Errorf("%s: total %d, %d hits", c.subject, total, len(hits))
		}
		return urlsOf(hits)
	}
	drain := func() {
		t.Helper()
		if _, err := sys.env.App.Drain(ctx, outbox.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if got := search1(mallory); len(got) != 0 {
		t.Fatalf("mallory before any share: %v", got)
	}
	shares, err := sys.env.App.Shares(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// corpus[2] is globex's; its owner shares it with mallory.
	shared := corpus[2]
	who := "mallory"
	g, err := shares.Grant(ctx, "submitter-globex", shared.id, archive.ShareRequest{User: &who, Duration: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	drain()
	if got, want := search1(mallory), pageURLs(shared); !reflect.DeepEqual(got, want) {
		t.Fatalf("mallory after a share granted after indexing: %v, want %v", got, want)
	}
	if _, _, err := shares.Revoke(ctx, "submitter-globex", shared.id, g.ID); err != nil {
		t.Fatal(err)
	}
	drain()
	if got := search1(mallory); len(got) != 0 {
		t.Fatalf("mallory after the share was revoked: %v", got)
	}
	// A revoke queued but not yet delivered: the ledger no longer names the
	// archive, so the search does not find it, whatever OpenFGA says yet.
	g, err = shares.Grant(ctx, "submitter-globex", shared.id, archive.ShareRequest{User: &who, Duration: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	drain()
	if _, _, err := shares.Revoke(ctx, "submitter-globex", shared.id, g.ID); err != nil {
		t.Fatal(err)
	}
	if got := search1(mallory); len(got) != 0 {
		t.Fatalf("mallory after a revoke not yet delivered: %v", got)
	}
	drain()

	// The job of corpus[4] (initech's) gains umbrella through a second
	// archive of the same task: corpus[4] is marked for indexing again,
	// found by id until then, and by its new grantee after.
	gained := corpus[4]
	owner := "submitter-umbrella"
	if _, ok, err := sys.store.InsertArchive(ctx, ledger.NewArchive{TaskID: gained.task, Bucket: sys.env.Bucket, ObjectKey: "org/umbrella/" + gained.task + ".wacz",
		SourceURL: "https://umbrella.example/", CapturedAt: time.Now()},
		func(id string) ledger.OutboxPayload {
			return ledger.AdmissionTuples(id, gained.task, "umbrella", &owner)
		}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	drain()
	var indexed *time.Time
	if err := sys.store.Pool.QueryRow(ctx, `SELECT indexed_at FROM archives WHERE id = $1`, gained.id).Scan(&indexed); err != nil || indexed != nil {
		t.Fatalf("an archive that gained a grantee keeps indexed_at %v (%v)", indexed, err)
	}
	want := pageURLs(gained)
	if got := search1(mallory); !reflect.DeepEqual(got, want) {
		t.Fatalf("mallory, whose organization the job gained, before re-indexing: %v, want %v", got, want)
	}
	if _, err := sys.indexer.IndexArchives(ctx, []string{gained.id}); err != nil {
		t.Fatal(err)
	}
	docs, err := sys.backend.Documents(ctx, []string{search.DocID(gained.id, 0)})
	if err != nil || !slices.Contains(docs[search.DocID(gained.id, 0)].Grantees, "org:umbrella") {
		t.Fatalf("re-indexed page grantees: %+v %v", docs, err)
	}
	if got := search1(mallory); !reflect.DeepEqual(got, want) {
		t.Fatalf("mallory after re-indexing: %v, want %v", got, want)
	}
	// An admission that commits while the archive is being indexed (after
	// its grantees were read for the pages, before it is marked indexed):
	// the indexer reads them again after marking it, finds one more, and
	// leaves it to be indexed again rather than indexed with a grantee its
	// pages lack.
	racing := corpus[6]
	if err := sys.store.MarkUnindexed(ctx, []string{racing.id}); err != nil {
		t.Fatal(err)
	}
	hooli := "submitter-hooli"
	ix := *sys.indexer
	ix.Ledger = &admitWhileIndexing{Ledger: sys.store, admit: func() {
		if _, ok, err := sys.store.InsertArchive(ctx, ledger.NewArchive{TaskID: racing.task, Bucket: sys.env.Bucket, ObjectKey: "org/hooli/" + racing.task + ".wacz",
			SourceURL: "https://hooli.example/", CapturedAt: time.Now()},
			func(id string) ledger.OutboxPayload { return ledger.AdmissionTuples(id, racing.task, "hooli", &hooli) }); err != nil || !ok {
			t.Error(ok, err)
		}
	}}
	if res, err := ix.IndexArchives(ctx, []string{racing.id}); err != nil || res.Indexed != 1 {
		t.Fatalf("index while an admission commits: %+v %v", res, err)
	}
	if err := sys.store.Pool.QueryRow(ctx, `SELECT indexed_at FROM archives WHERE id = $1`, racing.id).Scan(&indexed); err != nil || indexed != nil {
		t.Fatalf("an archive whose grantees changed while it was indexed is marked indexed at %v (%v)", indexed, err)
	}
	drain()
	hooliCaller := caller{"someone", []string{"hooli"}}
	if got, want := search1(hooliCaller), pageURLs(racing); !reflect.DeepEqual(got, want) {
		t.Fatalf("hooli, gained while indexing, before indexing again: %v, want %v", got, want)
	}
	if _, err := sys.indexer.IndexArchives(ctx, []string{racing.id}); err != nil {
		t.Fatal(err)
	}
	if got, want := search1(hooliCaller), pageURLs(racing); !reflect.DeepEqual(got, want) {
		t.Fatalf("hooli after indexing again: %v, want %v", got, want)
	}

	// Everyone else's answers are unchanged by all this.
	if got, want := search1(caller{"alice", []string{"acme"}}), expected(corpus, caller{"alice", []string{"acme"}}, func(p corpusPage) bool { return p.withheld == "" }); !reflect.DeepEqual(got, want) {
		t.Fatalf("alice: %d hits, want %d", len(got), len(want))
	}
}

// admitWhileIndexing runs admit right after the indexer first reads the
// grantees of the archives it indexes, and hands back what it read before.
type admitWhileIndexing struct {
	search.Ledger
	admit func()
	done  bool
}

func (a *admitWhileIndexing) ArchiveGrantees(ctx context.Context, ids []string) (map[string][]string, error) {
	g, err := a.Ledger.ArchiveGrantees(ctx, ids)
	if !a.done {
		a.done = true
		a.admit()
	}
	return g, err
}
