package search_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// noLater is the ledger's captures with LaterCaptures answering none: the
// search without the collapse (its other captures still listed), the peer
// of BenchmarkSearchCollapse.
type noLater struct{ search.Captures }

func (noLater) LaterCaptures(context.Context, []string, ledger.ArchiveFilter, int) (map[string][]ledger.ArchiveRef, error) {
	return map[string][]ledger.ArchiveRef{}, nil
}

// BenchmarkSearchCollapse: a re-crawled site, collapseURLs pages captured
// collapseCaptures times each (one archive per capture, about 600
// characters a page, all acme's), loaded into a Bleve index, with their
// ledger rows, recorded grantees and admission tuples (OpenFGA embedded).
// alice searches a word every page has (so every URL's captures compete),
// first page of 20 hits and the page after it, as serve runs it, with the
// collapse and without it (LaterCaptures answering none; the other captures
// still listed), interleaved. Results go to docs/benchmarks.md.
//
//	go test ./pkg/search -run '^$' -bench SearchCollapse -benchtime 40x -v
func BenchmarkSearchCollapse(b *testing.B) {
	if testing.Short() {
		b.Skip("heavy benchmark: skipped under -short")
	}
	ctx := context.Background()
	env := apptest.New(b)
	backend, err := search.OpenBleve(filepath.Join(b.TempDir(), "index"))
	if err != nil {
		b.Fatal(err)
	}
	defer backend.Close()
	env.App.SetSearchBackend(backend)
	const collapseURLs, collapseCaptures = 800, 5
	rng := rand.New(rand.NewPCG(7, 8))
	start := time.Now()
	var docs []search.Document
	var rows [][]any
	var sources []apptest.Source
	var tuples []authz.Tuple
	base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for c := range collapseCaptures {
		for u := range collapseURLs {
			id, task := uuid.NewString(), uuid.NewString()
			at := base.Add(time.Duration(c)*24*time.Hour + time.Duration(u)*time.Second)
			pageURL := fmt.Sprintf("https://site.example/page/%d", u)
			title, text := benchText(rng, u)
			docs = append(docs, search.Document{ArchiveID: id, URL: pageURL, Title: title, Text: text + " The garden again.",
				ObjectKey: "org/acme/" + task + ".wacz", SourceURL: pageURL, Labels: []string{}, CapturedAt: at,
				Grantees: []string{search.GranteeKey(ledger.ReasonOrganization, "acme")}})
			rows = append(rows, []any{id, task, env.Bucket, "org/acme/" + task + ".wacz", pageURL, []string{}, at})
			sources = append(sources, apptest.Source{ArchiveID: id, TaskID: task, At: at, Kind: ledger.ReasonOrganization, Principal: "acme"})
			for _, tu := range ledger.AdmissionTuples(id, task, "acme", nil).Writes {
				tuples = append(tuples, authz.Tuple{User: tu.User, Relation: tu.Relation, Object: tu.Object})
			}
		}
	}
	if err := backend.Load(ctx, docs); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"archives"}, []string{"id", "task_id", "bucket", "object_key", "source_url", "labels", "captured_at"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if err := apptest.CopySources(ctx, conn, sources); err != nil {
		b.Fatal(err)
	}
	// Indexed, as serve's indexer leaves them (else more than 1,000
	// archives waiting would keep the index from narrowing the query).
	if _, err := conn.Exec(ctx, "UPDATE archives SET indexed_at = now()"); err != nil {
		b.Fatal(err)
	}
	_, _ = conn.Exec(ctx, "ANALYZE archives, archive_sources")
	conn.Close(ctx)
	for i := 0; i < len(tuples); i += 100 {
		if err := env.FGA.Write(ctx, tuples[i:min(i+100, len(tuples))], nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("setup: %d captures of %d URLs in %v", len(docs), collapseURLs, time.Since(start).Round(time.Millisecond))
	with, err := env.App.Searcher(ctx)
	if err != nil {
		b.Fatal(err)
	}
	without := *with
	without.Captures = noLater{with.Captures}
	q := mustQuery(b, "garden")
	// Two pages: the first (with its total) and the one after it.
	twoPages := func(s *search.Searcher) (hits, examined, checked int, first, second time.Duration) {
		t0 := time.Now()
		p, err := s.Search(ctx, "alice", []string{"acme"}, search.Request{Query: q, Limit: 20})
		if err != nil {
			b.Fatal(err)
		}
		first = time.Since(t0)
		hits, examined, checked = len(p.Hits), p.Examined, p.Checked
		if p.Next == nil {
			b.Fatal("one page only")
		}
		t0 = time.Now()
		p2, err := s.Search(ctx, "alice", []string{"acme"}, search.Request{Query: q, Limit: 20, Cursor: *p.Next})
		if err != nil {
			b.Fatal(err)
		}
		second = time.Since(t0)
		return hits + len(p2.Hits), examined + p2.Examined, checked + p2.Checked, first, second
	}
	for range 10 {
		twoPages(with)
		twoPages(&without)
	}
	var w1, w2, o1, o2 []time.Duration
	var wHits, wExamined, wChecked, oHits, oExamined, oChecked int
	b.ResetTimer()
	for i := range b.N {
		sides := []func(){
			func() {
				h, e, c, a, z := twoPages(with)
				wHits, wExamined, wChecked = wHits+h, wExamined+e, wChecked+c
				w1, w2 = append(w1, a), append(w2, z)
			},
			func() {
				h, e, c, a, z := twoPages(&without)
				oHits, oExamined, oChecked = oHits+h, oExamined+e, oChecked+c
				o1, o2 = append(o1, a), append(o2, z)
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
	n := float64(b.N)
	b.ReportMetric(pct(w1, 50), "first-p50-ms")
	b.ReportMetric(pct(w1, 50)/pct(o1, 50), "first-p50-ratio")
	b.ReportMetric(pct(w2, 50)/pct(o2, 50), "second-p50-ratio")
	b.Logf("n=%d: first page with the collapse p50 %.1f ms p95 %.1f ms, without p50 %.1f ms p95 %.1f ms (%.2f× p50, %.2f× p95) | second page with p50 %.1f ms p95 %.1f ms, without p50 %.1f ms p95 %.1f ms (%.2f× p50) | two pages: with %.0f hits, %.0f candidates examined, %.0f archives checked; without %.0f hits, %.0f examined, %.0f checked",
		b.N, pct(w1, 50), pct(w1, 95), pct(o1, 50), pct(o1, 95), pct(w1, 50)/pct(o1, 50), pct(w1, 95)/pct(o1, 95),
		pct(w2, 50), pct(w2, 95), pct(o2, 50), pct(o2, 95), pct(w2, 50)/pct(o2, 50),
		float64(wHits)/n, float64(wExamined)/n, float64(wChecked)/n, float64(oHits)/n, float64(oExamined)/n, float64(oChecked)/n)
}
