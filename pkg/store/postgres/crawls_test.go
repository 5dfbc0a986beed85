package postgres_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// tracer keeps the SQL and arguments of every query.
type tracer struct {
	mu      sync.Mutex
	queries []traced
}

type traced struct {
	sql  string
	args []any
}

func (t *tracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.queries = append(t.queries, traced{d.SQL, d.Args})
	return ctx
}

func (t *tracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *tracer) last() traced {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.queries[len(t.queries)-1]
}

func crawlStore(t *testing.T) (*postgres.Store, *tracer, context.Context) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(testenv.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := &tracer{}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return &postgres.Store{Pool: pool}, tr, ctx
}

func newCrawl(seeds ...string) postgres.NewCrawl {
	hosts := make([]string, len(seeds))
	for i, s := range seeds {
		hosts[i] = strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://"), "/", 2)[0]
	}
	return postgres.NewCrawl{
		Seeds: seeds, Hosts: hosts, Rules: []byte(`[{"follow":"same-origin"}]`),
		MaxDepth: 2, MaxPages: 30, PerHostDelayMs: 0, HostParallelism: 4,
		OrgID: "acme", RequestedBy: "alice", Now: time.Now(),
	}
}

func TestInsertCrawl(t *testing.T) {
	t.Parallel()
	s, _, ctx := crawlStore(t)
	id, pages, err := s.InsertCrawl(ctx, newCrawl("https://a.example/", "https://[::1]:8080/x"))
	if err != nil || len(pages) != 2 || pages[1].Host != "[::1]:8080" || pages[0].ID >= pages[1].ID {
		t.Fatalf("InsertCrawl = %s %+v %v", id, pages, err)
	}
	_, _, err = s.InsertCrawl(ctx, newCrawl("https://b.example/"))
	var active *postgres.ActiveCrawlError
	if !errors.As(err, &active) || active.CrawlID != id || active.StartedAt.IsZero() {
		t.Fatalf("second running crawl: %v", err)
	}
	if ok, err := s.FailCrawl(ctx, id, "done", time.Now()); err != nil || !ok {
		t.Fatal(ok, err)
	}
	// Other failures are not translated.
	_, _, err = s.InsertCrawl(ctx, newCrawl())
	if err == nil || errors.As(err, &active) {
		t.Fatalf("a crawl without seeds: %v", err)
	}
	if _, err := s.Crawl(ctx, "5b0a3c1e-0000-4000-8000-000000000000"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Crawl(unknown) = %v", err)
	}
}

func TestLevelTxInsertArchives(t *testing.T) {
	t.Parallel()
	s, _, ctx := crawlStore(t)
	id, _, err := s.InsertCrawl(ctx, newCrawl("https://a.example/"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.InsertArchive(ctx, postgres.NewArchive{TaskID: "11111111-1111-4111-8111-111111111111", Bucket: "b", ObjectKey: "known.wacz", SourceURL: "https://a.example/", CapturedAt: time.Now()},
		func(archiveID string) ledger.OutboxPayload {
			return ledger.AdmissionTuples(archiveID, "11111111-1111-4111-8111-111111111111", "acme", nil)
		}); err != nil {
		t.Fatal(err)
	}
	corr := "c"
	rows := []postgres.NewArchive{
		{TaskID: "22222222-2222-4222-8222-222222222222", CorrelationID: &corr, Bucket: "b", ObjectKey: "new 1.wacz", SourceURL: "https://a.example/1", Labels: []string{"x", "y"}, CapturedAt: time.Now()},
		{TaskID: "11111111-1111-4111-8111-111111111111", Bucket: "b", ObjectKey: "known.wacz", SourceURL: "https://a.example/", CapturedAt: time.Now()},
		{TaskID: "33333333-3333-4333-8333-333333333333", Bucket: "b", ObjectKey: "ключ+2.wacz", SourceURL: "https://a.example/2", CapturedAt: time.Now()},
	}
	var asked []int
	err = s.InLevelTx(ctx, id, func(tx *postgres.LevelTx) error {
		idx, err := tx.InsertArchives(ctx, rows, func(i int, archiveID string) ledger.OutboxPayload {
			asked = append(asked, i)
			return ledger.AdmissionTuples(archiveID, rows[i].TaskID, "acme", nil)
		})
		if !slices.Equal(idx, []int{0, 2}) {
			t.Errorf("inserted %v, want [0 2]", idx)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(asked)
	if !slices.Equal(asked, []int{0, 2}) {
		t.Errorf("tuples built for %v, want only the new archives", asked)
	}
	var n int
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM fga_outbox`).Scan(&n); err != nil || n != 3 {
		t.Errorf("%d outbox rows, want 3", n)
	}
	var labels []string
	var key string
	if err := s.Pool.QueryRow(ctx, `SELECT labels, object_key FROM archives WHERE task_id = '22222222-2222-4222-8222-222222222222'`).Scan(&labels, &key); err != nil ||
		!slices.Equal(labels, []string{"x", "y"}) || key != "new 1.wacz" {
		t.Errorf("archive row: %v %q %v", labels, key, err)
	}
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM archives WHERE object_key = 'ключ+2.wacz'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("a non-ASCII key was not kept verbatim")
	}

	// A transaction that fails leaves nothing.
	boom := errors.New("boom")
	err = s.InLevelTx(ctx, id, func(tx *postgres.LevelTx) error {
		if _, err := tx.InsertArchives(ctx, []postgres.NewArchive{{TaskID: "44444444-4444-4444-8444-444444444444", Bucket: "b", ObjectKey: "rolled-back.wacz", SourceURL: "https://a.example/", CapturedAt: time.Now()}},
			func(i int, id string) ledger.OutboxPayload {
				return ledger.AdmissionTuples(id, "44444444-4444-4444-8444-444444444444", "acme", nil)
			}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM archives WHERE object_key = 'rolled-back.wacz'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("a rolled-back archive is in the ledger")
	}
}

func TestCrawlRobotsAndDecisions(t *testing.T) {
	t.Parallel()
	s, tr, ctx := crawlStore(t)
	id, _, err := s.InsertCrawl(ctx, newCrawl("https://a.example/"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.InLevelTx(ctx, id, func(tx *postgres.LevelTx) error {
		if _, err := tx.InsertPages(ctx, 1, []postgres.NewPage{
			{URL: "https://a.example/1", Host: "a.example"},
			{URL: "https://a.example:8443/2", Host: "a.example:8443"},
			{URL: "http://[::1]:8080/3", Host: "[::1]:8080"},
			{URL: "http://[::1]/4", Host: "[::1]"},
		}); err != nil {
			return err
		}
		skip := "robots"
		closed, err := tx.ClosePages(ctx, 1, []postgres.PageClose{
			{URL: "https://a.example/1", State: "skipped", SkipReason: &skip},
			{URL: "https://a.example:8443/2", State: "skipped", SkipReason: &skip},
			{URL: "http://[::1]:8080/3", State: "skipped", SkipReason: &skip},
			{URL: "http://[::1]/4", State: "skipped", SkipReason: &skip},
			{URL: "https://a.example/", State: "captured"}, // depth 0: not closed by a depth-1 report
			{URL: "https://unknown.example/", State: "captured"},
		})
		if len(closed) != 4 {
			t.Errorf("closed %+v, want the 4 depth-1 pages", closed)
		}
		if err != nil {
			return err
		}
		return tx.ReplaceDecisions(ctx, 0, []postgres.DecisionRecord{
			{Rule: 1, Action: "skip", Hostname: "ads.example.com", Links: 3, Samples: []string{"https://ads.example.com/1"}},
			{Rule: 1, Action: "skip", Hostname: "x.ads.example.com", Links: 1},
			{Rule: 2, Action: "follow", Hostname: "badads.example.com", Links: 2},
			{Rule: 2, Action: "skip", Hostname: "ads_x.example.com", Links: 2},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	robots, err := s.CrawlRobots(ctx, id, 5)
	if err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, r := range robots {
		got += r.Hostname + "=" + strings.Join(r.Samples, ",") + ";"
	}
	if got != "[::1]=http://[::1]:8080/3,http://[::1]/4;a.example=https://a.example/1,https://a.example:8443/2;" {
		t.Errorf("robots = %s", got)
	}

	for _, tc := range []struct {
		domain, action string
		want           []string
	}{
		{"ads.example.com", "skip", []string{"ads.example.com", "x.ads.example.com"}},
		{"example.com", "skip", []string{"ads.example.com", "x.ads.example.com", "ads_x.example.com"}},
		{"ads_x.example.com", "skip", []string{"ads_x.example.com"}},
		{"adsxx.example.com", "skip", nil}, // '_' is not a wildcard
		{"ads.example.com", "follow", nil},
		{"example.com", "follow", []string{"badads.example.com"}},
	} {
		rows, err := s.DecisionsByDomain(ctx, postgres.CrawlScope{Orgs: []string{"acme"}}, tc.domain, time.Now().Add(-time.Hour), tc.action, 10)
		if err != nil {
			t.Fatal(err)
		}
		var hosts []string
		for _, r := range rows {
			hosts = append(hosts, r.Hostname)
			// Rule 1 is the crawl's same-origin; it has no rule 2, so
			// that pattern is NULL.
			wantPattern := map[int]string{1: "same-origin", 2: "<nil>"}[r.Rule]
			got := "<nil>"
			if r.Pattern != nil {
				got = *r.Pattern
			}
			if r.CrawlID != id || got != wantPattern {
				t.Errorf("row %+v (pattern %s)", r, got)
			}
		}
		if !slices.Equal(hosts, tc.want) {
			t.Errorf("DecisionsByDomain(%s, %s) = %v, want %v", tc.domain, tc.action, hosts, tc.want)
		}
	}

	// The lookup can use the index on reverse(hostname).
	q := tr.last()
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.Query(ctx, "EXPLAIN "+q.sql, q.args...)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(plan, "\n"), "crawl_decisions_rhostname_idx") {
		t.Errorf("the domain lookup does not use the reverse(hostname) index:\n%s", strings.Join(plan, "\n"))
	}
	_, _ = conn.Exec(ctx, `RESET enable_seqscan`)
}

// TestInsertSubmissionsVerifiedReplacesAClaim: an unverified submission
// never replaces a recorded task; a verified one (its manifest bound to the
// reporting crawl) replaces a row of another correlation, and only that.
func TestInsertSubmissionsVerifiedReplacesAClaim(t *testing.T) {
	t.Parallel()
	s, _, ctx := crawlStore(t)
	id, _, err := s.InsertCrawl(ctx, newCrawl("https://a.example/"))
	if err != nil {
		t.Fatal(err)
	}
	task := "0192f0c4-5d7e-7a3b-9c1d-00000000abcd"
	str := func(v string) *string { return &v }
	insert := func(org, corr string, verified bool) {
		t.Helper()
		err := s.InLevelTx(ctx, id, func(tx *postgres.LevelTx) error {
			return tx.InsertSubmissions(ctx, []postgres.NewSubmission{{
				TaskID: task, CorrelationID: str(corr), OrgID: org, SubmittedBy: str("x"),
				ManifestKey: str("k/" + corr), SubmittedAt: time.Now(), Verified: verified,
			}})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	owner := func() string {
		t.Helper()
		var org, corr string
		if err := s.Pool.QueryRow(ctx, `SELECT org_id, correlation_id FROM capture_submissions WHERE task_id = $1`, task).Scan(&org, &corr); err != nil {
			t.Fatal(err)
		}
		return org + "/" + corr
	}
	insert("evil", "crawl-e", false)
	insert("acme", "crawl-a", false)
	if got := owner(); got != "evil/crawl-e" {
		t.Fatalf("an unverified row replaced a claim: %s", got)
	}
	insert("acme", "crawl-a", true)
	if got := owner(); got != "acme/crawl-a" {
		t.Fatalf("a verified row did not replace a claim of another correlation: %s", got)
	}
	insert("acme", "crawl-a", true) // same correlation: nothing to replace
	insert("evil", "crawl-e", false)
	if got := owner(); got != "acme/crawl-a" {
		t.Fatalf("after a later unverified claim: %s", got)
	}
}
