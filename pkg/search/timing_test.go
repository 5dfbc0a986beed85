package search_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// noChecks is the permissions of a caller for whom nothing may be asked:
// an outsider's search must settle without OpenFGA.
type noChecks struct{}

func (noChecks) CanViewMany(context.Context, string, []string, []string) ([]bool, error) {
	return nil, errors.New("OpenFGA was asked about an outsider's search")
}

// BenchmarkSearchHiddenWord: does an outsider's search take longer when the
// word is on pages of archives it may not see? A Bleve index of 3,000 pages
// of acme (benchText) and 300 of bobco, each of bobco's pages with the word
// zeppelin and one of them also with quokka; xylograph is on no page. The
// ledger records acme's and bobco's archives (archive_sources) as the
// admission path does. mallory (organization umbrella) sees none of them,
// alice (acme) sees acme's but none of bobco's. Each searches each word b.N
// times, interleaved in a shuffled order, through the searcher as serve
// wires it (grantee filter in the index query, Scope and Recorded) and,
// mallory also in the same rounds, as it was before (Recorded alone: hits
// dropped after the index). Reported: the median of each, and the
// interquartile range as the noise.
//
//	go test ./pkg/search -run '^$' -bench HiddenWord -benchtime 400x -v
func BenchmarkSearchHiddenWord(b *testing.B) {
	if testing.Short() {
		b.Skip("needs the test stack: skipped under -short")
	}
	ctx := context.Background()
	dsn := testenv.Database(b)
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

	const acme, bobco = 3000, 300
	rng := rand.New(rand.NewPCG(7, 8))
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var docs []search.Document
	var rows [][]any
	var sources []apptest.Source
	for i := range acme + bobco {
		org := "acme"
		title, text := benchText(rng, i)
		if i >= acme {
			org = "bobco"
			text += " The zeppelin lands at noon."
			if i == acme {
				text += " A quokka smiles."
			}
		}
		id, task := uuid.NewString(), uuid.NewString()
		docs = append(docs, search.Document{ArchiveID: id, URL: fmt.Sprintf("https://%s.example/%d", org, i), Title: title, Text: text,
			ObjectKey: fmt.Sprintf("org/%s/%s.wacz", org, task), SourceURL: "https://" + org + ".example/", CapturedAt: at,
			Grantees: []string{search.GranteeKey(ledger.ReasonOrganization, org), search.GranteeKey(ledger.ReasonOwner, "submitter-"+org)}})
		rows = append(rows, []any{id, task, "bench", docs[i].ObjectKey, docs[i].SourceURL, at, at})
		sources = append(sources,
			apptest.Source{ArchiveID: id, TaskID: task, At: at, Kind: ledger.ReasonOrganization, Principal: org},
			apptest.Source{ArchiveID: id, TaskID: task, At: at, Kind: ledger.ReasonOwner, Principal: "submitter-" + org})
	}
	if err := backend.Load(ctx, docs); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.CopyFrom(ctx, pgx.Identifier{"archives"}, []string{"id", "task_id", "bucket", "object_key", "source_url", "captured_at", "indexed_at"}, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	if err := apptest.CopySources(ctx, pool, sources); err != nil {
		b.Fatal(err)
	}
	_, _ = pool.Exec(ctx, "ANALYZE archives, archive_sources, job_sources, shares")

	words := []struct {
		name, q string
		hidden  int
	}{{"absent", "xylograph", 0}, {"on 1 hidden page", "quokka", 1}, {"on 300 hidden pages", "zeppelin", 300}}
	for _, w := range words {
		if _, n, err := backend.Candidates(ctx, mustQuery(b, w.q), nil, nil, 1); err != nil || n != w.hidden {
			b.Fatalf("%q matches %d pages (%v), want %d", w.q, n, err, w.hidden)
		}
	}
	filtered := &search.Searcher{Backend: backend, Perms: noChecks{}, Keys: st, Recorded: st, Scope: st}
	searchers := []struct {
		name    string
		s       *search.Searcher
		subject string
		orgs    []string
	}{
		{"mallory, filtered in the index", filtered, "mallory", []string{"umbrella"}},
		{"alice (acme), filtered in the index", filtered, "alice", []string{"acme"}},
		{"mallory, before: dropped after the index", &search.Searcher{Backend: backend, Perms: noChecks{}, Keys: st, Recorded: st}, "mallory", []string{"umbrella"}},
	}
	type side struct{ s, w int }
	var sides []side
	for s := range searchers {
		for w := range words {
			sides = append(sides, side{s, w})
		}
	}
	times := make([][][]time.Duration, len(searchers))
	examined := make([][]int, len(searchers))
	for s := range times {
		times[s] = make([][]time.Duration, len(words))
		examined[s] = make([]int, len(words))
	}
	run := func(sd side, record bool) {
		q := mustQuery(b, words[sd.w].q)
		t0 := time.Now()
		page, err := searchers[sd.s].s.Search(ctx, searchers[sd.s].subject, searchers[sd.s].orgs, search.Request{Query: q, Limit: 20})
		d := time.Since(t0)
		if err != nil || len(page.Hits) != 0 || page.Total == nil || *page.Total != 0 {
			b.Fatalf("%s %q: %d hits (%v)", searchers[sd.s].name, words[sd.w].q, len(page.Hits), err)
		}
		if record {
			times[sd.s][sd.w] = append(times[sd.s][sd.w], d)
			examined[sd.s][sd.w] = page.Examined
		}
	}
	for range 20 { // warm up
		for _, sd := range sides {
			run(sd, false)
		}
	}
	b.ResetTimer()
	for range b.N {
		rng.Shuffle(len(sides), func(i, j int) { sides[i], sides[j] = sides[j], sides[i] })
		for _, sd := range sides {
			run(sd, true)
		}
	}
	b.StopTimer()
	q := func(l []time.Duration, p float64) float64 {
		l = slices.Clone(l)
		slices.Sort(l)
		return float64(l[min(int(float64(len(l))*p), len(l)-1)]) / float64(time.Millisecond)
	}
	var report strings.Builder
	for s := range searchers {
		base := q(times[s][0], 0.5)
		for w := range words {
			l := times[s][w]
			med, q1, q3 := q(l, 0.5), q(l, 0.25), q(l, 0.75)
			fmt.Fprintf(&report, "\n  %-42s word %-20s median %.3f ms (IQR %.3f–%.3f) Δ vs absent %+.3f ms (%.2f×), %d candidates examined",
				searchers[s].name, words[w].name, med, q1, q3, med-base, med/base, examined[s][w])
			b.ReportMetric(med, fmt.Sprintf("s%d-w%d-median-ms", s, w))
		}
	}
	b.Logf("searches that find nothing visible, %d interleaved rounds (3,300 pages, 300 of bobco):%s", b.N, report.String())
}
