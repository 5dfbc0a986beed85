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

func newCrawl(seeds ...string) ledger.NewCrawl {
	hosts := make([]string, len(seeds))
	for i, s := range seeds {
		hosts[i] = strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(s, "https://"), "http://"), "/", 2)[0]
	}
	return ledger.NewCrawl{
		Seeds: seeds, Hosts: hosts, Rules: []byte(`[{"follow":"same-origin"}]`),
		MaxDepth: 2, MaxPages: 30, PerHostDelayMs: 0, HostParallelism: 4,
		OrgID: "acme", RequestedBy: "alice", Now: time.Now(),
	}
}

// runningCrawl inserts a crawl of https://example.com/ started at t0 and
// returns its id.
func runningCrawl(t *testing.T, ctx context.Context, s *postgres.Store, t0 time.Time) string {
	t.Helper()
	nc := newCrawl("https://example.com/")
	nc.Now = t0
	id, _, err := s.InsertCrawl(ctx, nc)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestInsertCrawl(t *testing.T) {
	t.Parallel()
	s, _, ctx := crawlStore(t)
	id, pages, err := s.InsertCrawl(ctx, newCrawl("https://a.example/", "https://[::1]:8080/x"))
	if err != nil || len(pages) != 2 || pages[1].Host != "[::1]:8080" || pages[0].ID >= pages[1].ID {
		t.Fatalf("InsertCrawl = %s %+v %v", id, pages, err)
	}
	// No bound: a second running crawl of the organization is taken.
	if _, _, err = s.InsertCrawl(ctx, newCrawl("https://b.example/")); err != nil {
		t.Fatalf("second running crawl without a bound: %v", err)
	}
	bounded := newCrawl("https://c.example/")
	bounded.MaxRunning = 2
	_, _, err = s.InsertCrawl(ctx, bounded)
	var active *ledger.ActiveCrawlError
	if !errors.As(err, &active) || active.CrawlID != id || active.StartedAt.IsZero() || active.Running != 2 || active.Limit != 2 {
		t.Fatalf("third running crawl at a bound of 2: %v %+v", err, active)
	}
	// The bound counts the organization's own crawls only.
	other := newCrawl("https://c.example/")
	other.MaxRunning, other.OrgID = 1, "globex"
	if _, _, err := s.InsertCrawl(ctx, other); err != nil {
		t.Fatalf("another organization's crawl: %v", err)
	}
	if ok, _, err := s.FailCrawl(ctx, id, "done", time.Now(), nil); err != nil || !ok {
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
	if _, _, err := s.InsertArchive(ctx, ledger.NewArchive{TaskID: "11111111-1111-4111-8111-111111111111", Bucket: "b", ObjectKey: "known.wacz", SourceURL: "https://a.example/", CapturedAt: time.Now()},
		func(archiveID string) ledger.OutboxPayload {
			return ledger.AdmissionTuples(archiveID, "11111111-1111-4111-8111-111111111111", "acme", nil)
		}); err != nil {
		t.Fatal(err)
	}
	corr := "c"
	rows := []ledger.NewArchive{
		{TaskID: "22222222-2222-4222-8222-222222222222", CorrelationID: &corr, Bucket: "b", ObjectKey: "new 1.wacz", SourceURL: "https://a.example/1", Labels: []string{"x", "y"}, CapturedAt: time.Now()},
		{TaskID: "11111111-1111-4111-8111-111111111111", Bucket: "b", ObjectKey: "known.wacz", SourceURL: "https://a.example/", CapturedAt: time.Now()},
		{TaskID: "33333333-3333-4333-8333-333333333333", Bucket: "b", ObjectKey: "ключ+2.wacz", SourceURL: "https://a.example/2", CapturedAt: time.Now()},
	}
	var asked []int
	applied, err := s.ApplyLevel(ctx, id, 0, nil, func(st ledger.LevelState) (*ledger.LevelPlan, error) {
		return &ledger.LevelPlan{Archives: rows, Tuples: func(i int, archiveID string) ledger.OutboxPayload {
			asked = append(asked, i)
			return ledger.AdmissionTuples(archiveID, rows[i].TaskID, "acme", nil)
		}, Totals: ledger.LevelTotals{LevelRecord: ledger.LevelRecord{Depth: 0, Digest: make([]byte, 32)}, Now: time.Now()}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied.Admitted, []int{0, 2}) {
		t.Errorf("inserted %v, want [0 2]", applied.Admitted)
	}
	// The level counts every archive of its pages in the ledger as that
	// capture, one registered before its report included.
	var admitted int
	if err := s.Pool.QueryRow(ctx, `SELECT archives_admitted FROM crawl_levels WHERE crawl_id = $1 AND depth = 0`, id).Scan(&admitted); err != nil || admitted != 3 {
		t.Errorf("the level records %d archives admitted (%v), want 3", admitted, err)
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

	// A plan the store cannot apply whole leaves nothing: here it closes a
	// page that is not pending at its depth.
	_, err = s.ApplyLevel(ctx, id, 1, nil, func(st ledger.LevelState) (*ledger.LevelPlan, error) {
		return &ledger.LevelPlan{
			Closes:   []ledger.PageClose{{URL: "https://a.example/", State: "captured"}},
			Archives: []ledger.NewArchive{{TaskID: "44444444-4444-4444-8444-444444444444", Bucket: "b", ObjectKey: "rolled-back.wacz", SourceURL: "https://a.example/", CapturedAt: time.Now()}},
			Tuples: func(i int, id string) ledger.OutboxPayload {
				return ledger.AdmissionTuples(id, "44444444-4444-4444-8444-444444444444", "acme", nil)
			},
			Totals: ledger.LevelTotals{LevelRecord: ledger.LevelRecord{Depth: 1, Digest: make([]byte, 32)}, Now: time.Now()},
		}, nil
	})
	if err == nil || !strings.Contains(err.Error(), "no longer pending") {
		t.Fatalf("a plan closing a page that is not pending: %v", err)
	}
	// And a decision that fails writes nothing either.
	boom := errors.New("boom")
	if _, err := s.ApplyLevel(ctx, id, 1, nil, func(ledger.LevelState) (*ledger.LevelPlan, error) { return nil, boom }); !errors.Is(err, boom) {
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
	level := func(depth int, urls []string, plan ledger.LevelPlan) ledger.LevelState {
		t.Helper()
		var st ledger.LevelState
		plan.Totals.Depth, plan.Totals.Digest, plan.Totals.Now = depth, make([]byte, 32), time.Now()
		_, err := s.ApplyLevel(ctx, id, depth, urls, func(got ledger.LevelState) (*ledger.LevelPlan, error) {
			st = got
			return &plan, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	next := []string{"https://a.example/1", "https://a.example:8443/2", "http://[::1]:8080/3", "http://[::1]/4"}
	hosts := []string{"a.example", "a.example:8443", "[::1]:8080", "[::1]"}
	var pages []ledger.NewPage
	for i, u := range next {
		pages = append(pages, ledger.NewPage{URL: u, Host: hosts[i]})
	}
	st := level(0, []string{"https://a.example/"}, ledger.LevelPlan{
		Closes: []ledger.PageClose{{URL: "https://a.example/", State: "captured"}},
		Next:   pages,
		Decisions: []ledger.DecisionRecord{
			{Rule: 1, Action: "skip", Hostname: "ads.example.com", Links: 3, Samples: []string{"https://ads.example.com/1"}},
			{Rule: 1, Action: "skip", Hostname: "x.ads.example.com", Links: 1},
			{Rule: 2, Action: "follow", Hostname: "badads.example.com", Links: 2},
			{Rule: 2, Action: "skip", Hostname: "ads_x.example.com", Links: 2},
		},
	})
	if len(st.Pending) != 1 || st.AtDepth != 1 || st.KnownCount != 1 || len(st.Known) != 1 {
		t.Errorf("depth-0 state: %+v", st)
	}
	skip := "robots"
	var closes []ledger.PageClose
	for _, u := range next {
		closes = append(closes, ledger.PageClose{URL: u, State: "skipped", SkipReason: &skip})
	}
	// The state names only the pending pages of this depth among those the
	// report names: not the depth-0 page, not an unknown one.
	st = level(1, append(slices.Clone(next), "https://a.example/", "https://unknown.example/"), ledger.LevelPlan{Closes: closes})
	if len(st.Pending) != 4 || st.AtDepth != 4 || st.KnownCount != 5 {
		t.Errorf("depth-1 state: pending %v, at depth %d, known %d", st.Pending, st.AtDepth, st.KnownCount)
	}
	if _, ok := st.Pending["https://a.example/"]; ok {
		t.Errorf("a depth-0 page is pending at depth 1")
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
		rows, err := s.DecisionsByDomain(ctx, ledger.CrawlScope{Orgs: []string{"acme"}}, tc.domain, time.Now().Add(-time.Hour), tc.action, 10)
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
	depth := 0 // each insert is a level of its own
	insert := func(org, corr string, verified bool) {
		t.Helper()
		depth++
		_, err := s.ApplyLevel(ctx, id, depth, nil, func(ledger.LevelState) (*ledger.LevelPlan, error) {
			return &ledger.LevelPlan{Submissions: []ledger.NewSubmission{{
				TaskID: task, CorrelationID: str(corr), OrgID: org, SubmittedBy: str("x"),
				ManifestKey: str("k/" + corr), SubmittedAt: time.Now(), Verified: verified,
			}}, Totals: ledger.LevelTotals{LevelRecord: ledger.LevelRecord{Depth: depth, Digest: make([]byte, 32)}, Now: time.Now()}}, nil
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
