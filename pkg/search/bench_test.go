package search_test

// Benchmarks of search, each next to its limit measured in the same run;
// the numbers go to docs/benchmarks.md.
//
//   - BenchmarkIndexing: the indexer reading WACZ files from S3 (ranged
//     reads) into a Bleve index and marking them indexed, in pages/s, vs.
//     reading the same pages.jsonl entries from S3 alone.
//   - BenchmarkSearchQuery: the first page of a search over 30,000
//     indexed pages for callers who may see 50%, 10% and 1% of them,
//     vs. the same query on the same index without the authorization
//     filter (top hits, their documents and snippets) plus one BatchCheck
//     of the page's archives.
//   - BenchmarkSearchHiddenWord (timing_test.go): an outsider's search for
//     a word on 0, 1 and 300 pages it may not see.
//
// Both need the dev stack (LEDGER_TEST_*), run OpenFGA embedded on its
// PostgreSQL datastore, and skip under -short.
//
//	go test ./pkg/search -run '^$' -bench Indexing -benchtime 3x -v
//	go test ./pkg/search -run '^$' -bench SearchQuery -benchtime 60x -timeout 30m -v

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

var (
	benchEN = []string{"garden", "museum", "river", "election", "market", "festival", "software", "weather"}
	benchJA = []string{"大阪", "天気予報", "図書館", "美術館", "祭り", "市場", "庭園", "選挙"}
)

// benchText is a page of about 500 characters in English and Japanese
// about common topics, and, each with its own likelihood, about the topics
// the benchmark searches: responsive (10% of pages), 東京 (5%), library
// (20%) and 鉄道 (10%).
func benchText(rng *rand.Rand, n int) (title, text string) {
	var b strings.Builder
	for i := range 5 {
		fmt.Fprintf(&b, "Paragraph %d of page %d is about the %s. ", i, n, benchEN[rng.IntN(len(benchEN))])
		fmt.Fprintf(&b, "この段落は%sについて書いています。\n", benchJA[rng.IntN(len(benchJA))])
	}
	for _, f := range []struct {
		p    float64
		text string
	}{{0.10, "A responsive layout adapts to the screen. "}, {0.05, "東京の話もあります。"}, {0.20, "The library opens at nine. "}, {0.10, "鉄道で行けます。"}} {
		if rng.Float64() < f.p {
			b.WriteString(f.text)
		}
	}
	return fmt.Sprintf("Page %d: %s", n, benchEN[rng.IntN(len(benchEN))]), b.String()
}

type benchObjects struct{ c *blob.Client }

func (o benchObjects) OpenObject(ctx context.Context, bucket, key string) (search.Object, error) {
	return o.c.OpenReaderAt(ctx, bucket, key)
}

// BenchmarkIndexing: 300 WACZ files of 2 pages each (about 600 characters
// a page) in the test S3 server; each iteration clears indexed_at and runs
// the indexer over all of them (concurrency 4, Bleve), then reads the same
// pages.jsonl entries from S3 alone (the same ranged reads, the same
// concurrency, no index, no ledger) — in alternating order.
func BenchmarkIndexing(b *testing.B) {
	if testing.Short() {
		b.Skip("heavy benchmark: skipped under -short")
	}
	ctx := context.Background()
	dsn := testenv.Database(b)
	objects, bucket, _ := testenv.Bucket(b)
	pool, err := postgres.Open(ctx, dsn, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	st := &postgres.Store{Pool: pool}
	backend, err := search.OpenBleve(filepath.Join(b.TempDir(), "index"))
	if err != nil {
		b.Fatal(err)
	}
	defer backend.Close()

	const archives, perArchive = 300, 2
	rng := rand.New(rand.NewPCG(1, 2))
	var rows [][]any
	var keys []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i := range archives {
		c := wacz.Capture{Created: at}
		for p := range perArchive {
			title, text := benchText(rng, i*perArchive+p)
			c.Pages = append(c.Pages, wacz.Page{URL: fmt.Sprintf("https://bench.example/%d/%d", i, p), Date: at, Title: title, Text: text})
		}
		var buf bytes.Buffer
		if _, err := wacz.Write(&buf, c); err != nil {
			b.Fatal(err)
		}
		key := fmt.Sprintf("org/bench/%d.wacz", i)
		keys = append(keys, key)
		g.Go(func() error { return objects.Put(gctx, bucket, key, "application/wacz", buf.Bytes()) })
		rows = append(rows, []any{uuid.NewString(), uuid.NewString(), bucket, key, "https://bench.example/", at})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"archives"}, []string{"id", "task_id", "bucket", "object_key", "source_url", "captured_at"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	ix := search.NewIndexer(st, benchObjects{objects}, backend, nil)
	readOnly := func() (int, error) {
		var pages atomic.Int64
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(4)
		for _, key := range keys {
			g.Go(func() error {
				r, err := objects.OpenReaderAt(gctx, bucket, key)
				if err != nil {
					return err
				}
				ps, _, err := wacz.ReadPages(r, r.Size())
				pages.Add(int64(len(ps)))
				return err
			})
		}
		return int(pages.Load()), g.Wait()
	}
	index := func() (int, error) {
		if _, err := st.ClearIndexed(ctx); err != nil {
			return 0, err
		}
		res, err := ix.IndexPending(ctx, nil)
		if err == nil && (res.Indexed != archives || res.Failed != 0) {
			err = fmt.Errorf("indexed %d, failed %d", res.Indexed, res.Failed)
		}
		return res.Pages, err
	}
	if _, err := index(); err != nil { // warm: the first pass creates the index's segments
		b.Fatal(err)
	}
	var idxTime, readTime time.Duration
	var idxPages, readPages int
	b.ResetTimer()
	for i := range b.N {
		sides := []func(){
			func() {
				t0 := time.Now()
				n, err := index()
				if err != nil {
					b.Fatal(err)
				}
				idxTime += time.Since(t0)
				idxPages += n
			},
			func() {
				t0 := time.Now()
				n, err := readOnly()
				if err != nil {
					b.Fatal(err)
				}
				readTime += time.Since(t0)
				readPages += n
			},
		}
		if i%2 == 1 {
			slices.Reverse(sides)
		}
		for _, side := range sides {
			side()
		}
	}
	b.StopTimer()
	ip, rp := float64(idxPages)/idxTime.Seconds(), float64(readPages)/readTime.Seconds()
	b.ReportMetric(ip, "index-pages/s")
	b.ReportMetric(rp, "read-pages/s")
	b.ReportMetric(rp/ip, "read/index")
	b.Logf("%d iterations of %d pages: index %.0f pages/s (%v a pass), S3 reads alone %.0f pages/s (%v a pass): indexing takes %.2f× the reads",
		b.N, archives*perArchive, ip, (idxTime / time.Duration(b.N)).Round(time.Millisecond), rp, (readTime / time.Duration(b.N)).Round(time.Millisecond), rp/ip)
}

// benchPerms counts the archives OpenFGA is asked about.
type benchPerms struct {
	search.Permissions
	asked atomic.Int64
	calls atomic.Int64
}

func (p *benchPerms) CanViewMany(ctx context.Context, subject string, orgs []string, ids []string) ([]bool, error) {
	p.asked.Add(int64(len(ids)))
	p.calls.Add(1)
	return p.Permissions.CanViewMany(ctx, subject, orgs, ids)
}

// BenchmarkSearchQuery: benchPages pages (one per archive, about 600
// characters each, with their archive's grantee keys) loaded straight into
// a Bleve index; as many archive rows, their recorded grantees and their
// admission tuples in OpenFGA (embedded, PostgreSQL datastore), the
// archives spread at random over four organizations holding 50%, 10%, 1%
// and 39% of them. For a member of each of the first three, the first page
// of 20 hits as serve searches (Searcher.Search with Scope: the index query
// narrowed to the caller's grantee keys, BatchCheck, the total over at
// least the best 20 matches, documents and snippets), the same counting the
// total over at least the best 100 matches, the search as it was before
// (Recorded alone: hits of archives not recorded for the caller dropped
// after the index, total over at least the best 100), and the limit: the same query without the
// authorization filter (the best 20 candidates, their documents and
// snippets, the index's own total) plus one BatchCheck of those 20
// candidates' archives; interleaved, over three queries of different
// selectivity.
func BenchmarkSearchQuery(b *testing.B) {
	if testing.Short() {
		b.Skip("heavy benchmark: skipped under -short")
	}
	ctx := context.Background()
	dsn := testenv.Database(b)
	pool, err := postgres.Open(ctx, dsn, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	st := &postgres.Store{Pool: pool}
	fgaDSN := testenv.EmptyDatabase(b)
	if err := authz.PreparePostgres(ctx, fgaDSN); err != nil {
		b.Fatal(err)
	}
	fgaClient, err := authz.NewPostgres(ctx, fgaDSN, authz.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer fgaClient.Close()
	if _, err := fgaClient.FindOrCreateStore(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	if _, err := fgaClient.WriteModel(ctx, fga.Model); err != nil {
		b.Fatal(err)
	}
	backend, err := search.OpenBleve(filepath.Join(b.TempDir(), "index"))
	if err != nil {
		b.Fatal(err)
	}
	defer backend.Close()

	type caller struct {
		name, subject, org string
		share              float64
	}
	callers := []caller{
		{"visible=50%", "viewer-half", "org-half", 0.50},
		{"visible=10%", "viewer-tenth", "org-tenth", 0.10},
		{"visible=1%", "viewer-hundredth", "org-hundredth", 0.01},
	}
	n := benchPages
	rng := rand.New(rand.NewPCG(5, 6))
	start := time.Now()
	docs := make([]search.Document, n)
	orgOf := make([]string, n)
	tasks := make([]string, n)
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i := range docs {
		u := rng.Float64()
		orgOf[i] = "org-rest"
		for _, c := range callers {
			if u < c.share {
				orgOf[i] = c.org
				break
			}
			u -= c.share
		}
		title, text := benchText(rng, i)
		id := uuid.NewString()
		tasks[i] = uuid.NewString()
		docs[i] = search.Document{ArchiveID: id, URL: fmt.Sprintf("https://bench.example/%d", i), Title: title, Text: text,
			ObjectKey: fmt.Sprintf("org/%s/%s.wacz", orgOf[i], tasks[i]), SourceURL: "https://bench.example/", Labels: []string{}, CapturedAt: at,
			Grantees: []string{search.GranteeKey(ledger.ReasonOrganization, orgOf[i]), search.GranteeKey(ledger.ReasonOwner, "submitter")}}
	}
	if err := backend.Load(ctx, docs); err != nil {
		b.Fatal(err)
	}
	loaded := time.Since(start)
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"archives"}, []string{"id", "task_id", "bucket", "object_key", "source_url", "captured_at", "indexed_at"},
		pgx.CopyFromSlice(n, func(i int) ([]any, error) {
			return []any{docs[i].ArchiveID, tasks[i], "bench", docs[i].ObjectKey, docs[i].SourceURL, at, at}, nil
		})); err != nil {
		b.Fatal(err)
	}
	// What the admission path records beside the tuples it queues (the
	// list's candidates, which search narrows its hits with).
	sources := make([]apptest.Source, 0, 2*n)
	for i := range docs {
		sources = append(sources,
			apptest.Source{ArchiveID: docs[i].ArchiveID, TaskID: tasks[i], At: at, Kind: ledger.ReasonOrganization, Principal: orgOf[i]},
			apptest.Source{ArchiveID: docs[i].ArchiveID, TaskID: tasks[i], At: at, Kind: ledger.ReasonOwner, Principal: "submitter"})
	}
	if err := apptest.CopySources(ctx, pool, sources); err != nil {
		b.Fatal(err)
	}
	var tuples []authz.Tuple
	for i := range docs {
		owner := "submitter"
		for _, t := range ledger.AdmissionTuples(docs[i].ArchiveID, tasks[i], orgOf[i], &owner).Writes {
			tuples = append(tuples, authz.Tuple{User: t.User, Relation: t.Relation, Object: t.Object})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i := 0; i < len(tuples); i += 100 {
		chunk := tuples[i:min(i+100, len(tuples))]
		g.Go(func() error { return fgaClient.Write(gctx, chunk, nil) })
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, fgaDSN)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = conn.Exec(ctx, "ANALYZE")
	conn.Close(ctx)
	_, _ = pool.Exec(ctx, "ANALYZE archives, archive_sources, job_sources, shares")
	b.Logf("setup: %d pages loaded into Bleve in %v; %d rows and %d tuples in %v", n, loaded.Round(time.Millisecond), n, len(tuples), (time.Since(start) - loaded).Round(time.Millisecond))

	queries := []search.Query{mustQuery(b, "responsive"), mustQuery(b, "東京"), mustQuery(b, "library 鉄道")}
	for _, q := range queries {
		_, total, err := backend.Candidates(ctx, q, nil, nil, 1)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("query %q matches %d pages", q.String(), total)
	}
	perms := &benchPerms{Permissions: app.Permissions{Client: fgaClient}}
	// As serve wires it (CAPTURE_LEDGER_LIST_SOURCE=candidates): the index
	// query narrowed to the caller's recorded grantees (Scope), hits
	// confirmed with can_view.
	searcher := &search.Searcher{Backend: backend, Perms: perms, Keys: st, Recorded: st, Scope: st}
	// The same search counting the total over at least the best 100
	// matches (the floor the search kept before the index narrowed it;
	// the cost of counting, shown apart).
	floored := &search.Searcher{Backend: backend, Perms: app.Permissions{Client: fgaClient}, Keys: st, CountFloor: search.DefaultCountFloor, Recorded: st, Scope: st}
	// The search as it was: hits of archives the ledger recorded no
	// grantee of for the caller dropped after the index, then OpenFGA.
	before := &search.Searcher{Backend: backend, Perms: app.Permissions{Client: fgaClient}, Keys: st, Recorded: st}
	checker := app.Permissions{Client: fgaClient}
	// The limit: the unfiltered query (its best 20, documents, snippets)
	// and one BatchCheck of those 20 candidates' archives for the caller.
	limit := func(q search.Query, subject string, orgs []string) error {
		cands, _, err := backend.Candidates(ctx, q, nil, nil, 20)
		if err != nil {
			return err
		}
		ids := make([]string, len(cands))
		archives := make([]string, len(cands))
		for i, c := range cands {
			ids[i], archives[i] = c.DocID(), c.ArchiveID
		}
		if _, err := checker.CanViewMany(ctx, subject, orgs, archives); err != nil {
			return err
		}
		got, err := backend.Documents(ctx, ids)
		for _, id := range ids {
			d := got[id]
			_ = search.Highlight(d.Text, q, 3)
			_ = search.HighlightTitle(d.Title, q)
		}
		return err
	}
	// Warm up OpenFGA's check planner and every side.
	for i := range 30 {
		c := callers[i%len(callers)]
		q := queries[i%len(queries)]
		for _, s := range []*search.Searcher{searcher, before} {
			if _, err := s.Search(ctx, c.subject, []string{c.org}, search.Request{Query: q, Limit: 20}); err != nil {
				b.Fatal(err)
			}
		}
		if err := limit(q, c.subject, []string{c.org}); err != nil {
			b.Fatal(err)
		}
	}

	for _, c := range callers {
		b.Run(c.name, func(b *testing.B) {
			var filt, bare, prev, lim []time.Duration
			perms.asked.Store(0)
			perms.calls.Store(0)
			var hits, examined, truncated, prevExamined int
			b.ResetTimer()
			for i := range b.N {
				q := queries[i%len(queries)]
				orgs := []string{c.org}
				sides := []func(){
					func() {
						t0 := time.Now()
						page, err := searcher.Search(ctx, c.subject, orgs, search.Request{Query: q, Limit: 20})
						if err != nil {
							b.Fatal(err)
						}
						filt = append(filt, time.Since(t0))
						hits += len(page.Hits)
						examined += page.Examined
						if page.Truncated {
							truncated++
						}
					},
					func() {
						t0 := time.Now()
						if _, err := floored.Search(ctx, c.subject, orgs, search.Request{Query: q, Limit: 20}); err != nil {
							b.Fatal(err)
						}
						bare = append(bare, time.Since(t0))
					},
					func() {
						t0 := time.Now()
						page, err := before.Search(ctx, c.subject, orgs, search.Request{Query: q, Limit: 20})
						if err != nil {
							b.Fatal(err)
						}
						prev = append(prev, time.Since(t0))
						prevExamined += page.Examined
					},
					func() {
						t0 := time.Now()
						if err := limit(q, c.subject, orgs); err != nil {
							b.Fatal(err)
						}
						lim = append(lim, time.Since(t0))
					},
				}
				if i%2 == 1 {
					slices.Reverse(sides)
				}
				for _, side := range sides {
					side()
				}
			}
			b.StopTimer()
			pct := func(l []time.Duration, p float64) float64 {
				l = slices.Clone(l)
				slices.Sort(l)
				i := int(float64(len(l))*p/100+0.999999) - 1
				return float64(l[min(max(i, 0), len(l)-1)]) / float64(time.Millisecond)
			}
			f50, f95, l50, l95 := pct(filt, 50), pct(filt, 95), pct(lim, 50), pct(lim, 95)
			p50, p95 := pct(bare, 50), pct(bare, 95)
			v50, v95 := pct(prev, 50), pct(prev, 95)
			b.ReportMetric(f50, "p50-ms")
			b.ReportMetric(f95, "p95-ms")
			b.ReportMetric(p50, "floor100-p50-ms")
			b.ReportMetric(v50, "before-p50-ms")
			b.ReportMetric(l50, "limit-p50-ms")
			b.ReportMetric(f50/l50, "p50-ratio")
			b.Logf("%s n=%d: search p50 %.1f ms p95 %.1f ms | with the total's floor of 100 p50 %.1f ms p95 %.1f ms | before (dropped after the index) p50 %.1f ms p95 %.1f ms, %.0f candidates examined | limit (unfiltered + one BatchCheck of the page) p50 %.1f ms p95 %.1f ms | ratio p50 %.2f× (%.2f× with the floor; before %.2f×), p95 %.2f× | per page: %.1f hits, %.0f candidates examined, %.0f archives checked in %.1f BatchChecks, %d/%d truncated",
				c.name, b.N, f50, f95, p50, p95, v50, v95, float64(prevExamined)/float64(b.N), l50, l95, f50/l50, p50/l50, v50/l50, f95/l95,
				float64(hits)/float64(b.N), float64(examined)/float64(b.N),
				float64(perms.asked.Load())/float64(b.N), float64(perms.calls.Load())/float64(b.N), truncated, b.N)
		})
	}
}

// benchPages is BenchmarkSearchQuery's corpus: 30,000 pages (100,000
// before; the setup, mostly writing three tuples per archive to OpenFGA,
// took minutes on two shared cores).
const benchPages = 30_000
