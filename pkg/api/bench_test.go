package api_test

// Benchmarks of the two archive read paths, each measured in the same run
// next to its physical limit and reported as a ratio (docs/benchmarks.md):
//
//   - BenchmarkMintURL: POST /api/archives/{id}/url over loopback HTTP vs. a
//     loop doing only the essential work (primary-key SELECT + in-process
//     OpenFGA Check + presign), at concurrency 1 and 8.
//   - BenchmarkListArchives: a full first page of GET /api/archives over
//     loopback HTTP with 100,000 archives in the ledger, for callers who may
//     see 50%, 10% and 1% of them, vs. one BatchCheck of 50 can_view checks.
//   - BenchmarkListGuard: steady minting while 40 callers who see nothing
//     list at once, with and without the list's guard, vs. minting alone.
//
// All run the embedded OpenFGA on its PostgreSQL datastore (not the memory
// store) and need the dev stack's LEDGER_TEST_* variables. They are
// benchmarks, so a plain `go test ./...` never runs them; they also skip
// under -short. Results go to docs/benchmarks.md.
//
//	eval "$(bin/ledgerctl dev stack up --shell)"
//	go test ./pkg/api -run '^$' -bench MintURL -benchtime 5000x -v
//	go test ./pkg/api -run '^$' -bench ListArchives -benchtime 20s -timeout 30m -v
//	go test ./pkg/api -run '^$' -bench ListGuard -benchtime 1x -timeout 20m -v
//
// (-v also prints the setup line: rows copied, tuples written, time taken.)

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// benchArchive is one ledger row of a benchmark and who may see it: members
// of org (through its capture job) and owner (the submitter).
type benchArchive struct {
	id, task, org, owner string
	capturedAt           time.Time
}

// benchRows makes n archives, newest first (row 0 is the newest), one
// capture job each, with org chosen per row by orgOf: organizations are
// interleaved in time the way independent submissions are.
func benchRows(n int, rng *rand.Rand, orgOf func(*rand.Rand) string) []benchArchive {
	newest := time.Now().Add(-time.Hour).Truncate(time.Second)
	rows := make([]benchArchive, n)
	for i := range rows {
		rows[i] = benchArchive{
			id:         uuid.NewString(),
			task:       uuid.NewString(),
			org:        orgOf(rng),
			owner:      fmt.Sprintf("submitter-%d", rng.IntN(20)),
			capturedAt: newest.Add(-time.Duration(i) * time.Second),
		}
	}
	return rows
}

// benchStack is the production wiring of the read path: the ledger database
// (pgx pool as App.Store opens it), an embedded OpenFGA on a PostgreSQL
// datastore, the S3 presigner, and the API served on 127.0.0.1.
type benchStack struct {
	fga    *authz.Embedded
	fgaDSN string
	store  *postgres.Store
	signer *blob.Client
	bucket string
	access *archive.Access
	perms  app.Permissions
	srv    *httptest.Server
	client *http.Client
}

func newBenchStack(tb testing.TB) *benchStack {
	tb.Helper()
	if testing.Short() {
		tb.Skip("heavy benchmark: skipped under -short")
	}
	ctx := context.Background()
	dsn := testenv.Database(tb)
	signer, bucket, s3 := testenv.Bucket(tb)
	fgaClient, fgaDSN := newPostgresFGA(tb)
	storeID, modelID := fgaClient.Target()
	a := app.New(config.Settings{
		DatabaseURL: dsn,
		S3Endpoint:  s3.Endpoint, S3Bucket: bucket, S3AccessKeyID: s3.AccessKeyID, S3SecretAccessKey: s3.SecretAccessKey,
		S3Region: "us-east-1", S3ForcePathStyle: true,
		FGAStoreID: storeID, FGAModelID: modelID,
	}, nil)
	a.SetAuthz(fgaClient)
	tb.Cleanup(a.Close)
	store, err := a.Store(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	access, err := a.Access(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	perms, err := a.Permissions(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	s := &api.Server{Access: access, Identity: identity.Headers{}, Submitters: perms}
	srv := httptest.NewServer(s.Handler()) // listens on 127.0.0.1
	tb.Cleanup(srv.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, DisableCompression: true}}
	tb.Cleanup(client.CloseIdleConnections)
	return &benchStack{fga: fgaClient, fgaDSN: fgaDSN, store: store, signer: signer, bucket: bucket, access: access, perms: perms, srv: srv, client: client}
}

// newPostgresFGA starts an embedded OpenFGA on a fresh, migrated PostgreSQL
// datastore with a store and the project's model.
func newPostgresFGA(tb testing.TB) (*authz.Embedded, string) {
	tb.Helper()
	ctx := context.Background()
	dsn := testenv.EmptyDatabase(tb)
	if err := authz.PreparePostgres(ctx, dsn); err != nil {
		tb.Fatal(err)
	}
	c, err := authz.NewPostgres(ctx, dsn, authz.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	if _, err := c.FindOrCreateStore(ctx, "bench"); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.WriteModel(ctx, fga.Model); err != nil {
		tb.Fatal(err)
	}
	return c, dsn
}

// load inserts rows with one COPY and writes their admission tuples (the
// ones the outbox would deliver) straight to OpenFGA in writes of 100, a few
// at a time, then refreshes both databases' planner statistics.
func (s *benchStack) load(tb testing.TB, rows []benchArchive) {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	n, err := s.store.Pool.CopyFrom(ctx, pgx.Identifier{"archives"},
		[]string{"id", "task_id", "bucket", "object_key", "source_url", "wacz_complete", "captured_at"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			r := rows[i]
			return []any{
				[16]byte(uuid.MustParse(r.id)), [16]byte(uuid.MustParse(r.task)), s.bucket,
				"org/" + r.org + "/" + r.capturedAt.Format("2006-01") + "/" + r.task + "_c0ffee00.wacz",
				fmt.Sprintf("https://example.com/page/%d", i), true, r.capturedAt,
			}, nil
		}))
	if err != nil || int(n) != len(rows) {
		tb.Fatalf("copy archives: %d rows, %v", n, err)
	}
	// What the admission path records beside the tuples it queues (the
	// candidate list's sources).
	src := make([]apptest.Source, 0, 2*len(rows))
	for _, r := range rows {
		src = append(src,
			apptest.Source{ArchiveID: r.id, TaskID: r.task, At: r.capturedAt, Kind: ledger.ReasonOrganization, Principal: r.org},
			apptest.Source{ArchiveID: r.id, TaskID: r.task, At: r.capturedAt, Kind: ledger.ReasonOwner, Principal: r.owner})
	}
	if err := apptest.CopySources(ctx, s.store.Pool, src); err != nil {
		tb.Fatal(err)
	}
	copied := time.Since(start)

	tuples := make([]authz.Tuple, 0, 3*len(rows))
	for _, r := range rows {
		owner := r.owner
		for _, t := range ledger.AdmissionTuples(r.id, r.task, r.org, &owner).Writes {
			tuples = append(tuples, authz.Tuple{User: t.User, Relation: t.Relation, Object: t.Object})
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i := 0; i < len(tuples); i += 100 { // OpenFGA's default MaxTuplesPerWrite
		chunk := tuples[i:min(i+100, len(tuples))]
		g.Go(func() error { return s.fga.Write(gctx, chunk, nil) })
	}
	if err := g.Wait(); err != nil {
		tb.Fatalf("write tuples: %v", err)
	}
	written := time.Since(start) - copied

	if _, err := s.store.Pool.Exec(ctx, "ANALYZE archives, archive_sources, job_sources"); err != nil {
		tb.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, s.fgaDSN)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("setup: %d archives copied in %v, %d tuples written in %v, analyzed in %v",
		len(rows), copied.Round(time.Millisecond), len(tuples), written.Round(time.Millisecond),
		(time.Since(start) - copied - written).Round(time.Millisecond))
}

func (s *benchStack) request(ctx context.Context, method, path, subject string, orgs []string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.srv.URL+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set(identity.SubjectHeader, subject)
	req.Header.Set(identity.OrganizationsHeader, strings.Join(orgs, ","))
	return req, nil
}

// do sends one request on the keep-alive client and reads the whole body.
func (s *benchStack) do(ctx context.Context, method, path, subject string, orgs []string) (int, []byte, error) {
	req, err := s.request(ctx, method, path, subject, orgs)
	if err != nil {
		return 0, nil, err
	}
	res, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, body, err
}

// runStats is what one side of a comparison did.
type runStats struct {
	ops  int
	wall time.Duration
	lat  []time.Duration
}

func (r *runStats) rate() float64 { return float64(r.ops) / r.wall.Seconds() }

func (r *runStats) mean() time.Duration { return r.wall / time.Duration(max(r.ops, 1)) }

// pct is the p-th percentile latency (nearest rank).
func (r *runStats) pct(p float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	l := slices.Clone(r.lat)
	slices.Sort(l)
	i := int(float64(len(l))*p/100+0.999999) - 1
	return l[min(max(i, 0), len(l)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchOp is one operation; rng is the calling worker's own.
type benchOp func(ctx context.Context, rng *rand.Rand) error

// concurrently runs n calls of op on workers goroutines and times them.
func concurrently(ctx context.Context, workers, n int, seed uint64, op benchOp) (runStats, error) {
	var next atomic.Int64
	lats := make([][]time.Duration, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				if err := op(ctx, rng); err != nil {
					errs[w] = err
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	st := runStats{ops: n, wall: time.Since(start), lat: slices.Concat(lats...)}
	for _, err := range errs {
		if err != nil {
			return st, err
		}
	}
	return st, nil
}

// warmUp runs op (untimed) at the given concurrency for at least d. A fresh
// embedded OpenFGA is several times slower for its first few thousand checks
// (its check planner is still exploring strategies, the datastore pool is
// still opening connections); the benchmarks measure the steady state of a
// long-running server.
func warmUp(tb testing.TB, workers int, d time.Duration, op benchOp) {
	tb.Helper()
	ctx := context.Background()
	for start := time.Now(); time.Since(start) < d; {
		if _, err := concurrently(ctx, workers, 2*workers, 999, op); err != nil {
			tb.Fatalf("warm-up: %v", err)
		}
	}
}

// sideBySide runs b.N calls of each op at the given concurrency, in four
// interleaved rounds (the order alternating) so that load drift on a shared
// machine hits every side alike. Each op first gets a short untimed warm-up.
func sideBySide(b *testing.B, workers int, ops ...benchOp) []runStats {
	b.Helper()
	ctx := context.Background()
	for _, op := range ops {
		warmUp(b, workers, time.Second, op)
	}
	const rounds = 4
	stats := make([]runStats, len(ops))
	b.ResetTimer()
	for r := range rounds {
		n := b.N*(r+1)/rounds - b.N*r/rounds
		if n == 0 {
			continue
		}
		for k := range ops {
			i := k
			if r%2 == 1 {
				i = len(ops) - 1 - k
			}
			st, err := concurrently(ctx, workers, n, uint64(r*len(ops)+i), ops[i])
			if err != nil {
				b.Fatalf("side %d: %v", i, err)
			}
			stats[i].ops += st.ops
			stats[i].wall += st.wall
			stats[i].lat = append(stats[i].lat, st.lat...)
		}
	}
	b.StopTimer()
	return stats
}

// BenchmarkMintURL: minting a presigned URL through the API vs. the
// essential work of minting (no HTTP), at concurrency 1 and 8, with 10,000
// archives in the ledger, for random archives the caller may see.
func BenchmarkMintURL(b *testing.B) {
	s := newBenchStack(b)
	rng := rand.New(rand.NewPCG(1, 2))
	rows := benchRows(10_000, rng, func(r *rand.Rand) string {
		if r.IntN(2) == 0 {
			return "acme"
		}
		return "contoso"
	})
	s.load(b, rows)
	subject, orgs := "bob", []string{"acme"}
	var visible, hidden []string
	for _, r := range rows {
		if r.org == "acme" {
			visible = append(visible, r.id)
		} else {
			hidden = append(hidden, r.id)
		}
	}
	ctx := context.Background()

	// The API answers what the limit loop computes: 200 with a signed URL
	// for a visible archive, 404 for another organization's.
	if st, body, err := s.do(ctx, "POST", "/api/archives/"+visible[0]+"/url", subject, orgs); err != nil || st != 200 || !strings.Contains(string(body), "X-Amz-Signature=") {
		b.Fatalf("mint a visible archive: %d %s %v", st, body, err)
	}
	if st, _, err := s.do(ctx, "POST", "/api/archives/"+hidden[0]+"/url", subject, orgs); err != nil || st != 404 {
		b.Fatalf("mint a hidden archive: %d %v", st, err)
	}

	mint := s.mintOp(visible, subject, orgs)
	limit := func(ctx context.Context, rng *rand.Rand) error {
		id := visible[rng.IntN(len(visible))]
		var bucket, key string
		if err := s.store.Pool.QueryRow(ctx, `SELECT bucket, object_key FROM archives WHERE id = $1`, id).Scan(&bucket, &key); err != nil {
			return err
		}
		ok, err := s.fga.Check(ctx, authz.ArchiveCheck(subject, orgs, id, time.Now()))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("check denied %s", id)
		}
		_, err = s.signer.PresignGet(ctx, bucket, key, archive.URLTTL)
		return err
	}

	warmUp(b, 8, 5*time.Second, limit)
	for _, c := range []int{1, 8} {
		b.Run(fmt.Sprintf("c=%d", c), func(b *testing.B) {
			st := sideBySide(b, c, mint, limit)
			apiSide, lim := &st[0], &st[1]
			ratio := lim.rate() / apiSide.rate()
			b.ReportMetric(float64(apiSide.mean().Nanoseconds()), "ns/op")
			b.ReportMetric(apiSide.rate(), "req/s")
			b.ReportMetric(ms(apiSide.pct(50)), "p50-ms")
			b.ReportMetric(ms(apiSide.pct(99)), "p99-ms")
			b.ReportMetric(lim.rate(), "limit-req/s")
			b.ReportMetric(ms(lim.pct(50)), "limit-p50-ms")
			b.ReportMetric(ms(lim.pct(99)), "limit-p99-ms")
			b.ReportMetric(ratio, "limit/api")
			b.Logf("mint c=%d n=%d: API %.0f req/s (p50 %.2f ms, p99 %.2f ms) | limit %.0f/s (p50 %.2f ms, p99 %.2f ms) | limit/API %.2f× (aim ≤ 2)",
				c, b.N, apiSide.rate(), ms(apiSide.pct(50)), ms(apiSide.pct(99)), lim.rate(), ms(lim.pct(50)), ms(lim.pct(99)), ratio)
		})
	}
}

// BenchmarkListArchives: the first page of GET /api/archives with 100,000
// archives in the ledger, for three callers who may see 50%, 10% and 1% of
// them (members of three organizations, interleaved in time with a fourth
// that none of them is in), vs. one BatchCheck of 50 can_view checks for the
// same caller (the 50 newest archives: the list's first batch).
func BenchmarkListArchives(b *testing.B) {
	s := newBenchStack(b)
	// The list strategy's own cost, as measured before the guard: no gate
	// and no time budget (BenchmarkListGuard measures the guard), so the
	// untimed page below and the timed ones stop at the same row.
	s.access.Gate, s.access.TimeBudget = nil, api.RequestTimeout
	type caller struct {
		name, subject, org string
		share              float64
	}
	callers := []caller{
		{"visible=50%", "viewer-half", "org-half", 0.50},
		{"visible=10%", "viewer-tenth", "org-tenth", 0.10},
		{"visible=1%", "viewer-hundredth", "org-hundredth", 0.01},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	// LEDGER_BENCH_LIST_ARCHIVES sets the ledger's size (default 100,000).
	n := 100_000
	if v := os.Getenv("LEDGER_BENCH_LIST_ARCHIVES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("LEDGER_BENCH_LIST_ARCHIVES=%q: want a number ≥ 1000", v)
		}
	}
	rows := benchRows(n, rng, func(r *rand.Rand) string {
		u := r.Float64()
		for _, c := range callers {
			if u < c.share {
				return c.org
			}
			u -= c.share
		}
		return "org-rest"
	})
	s.load(b, rows)
	newest50 := make([]string, 50)
	for i := range newest50 {
		newest50[i] = rows[i].id
	}
	warmUp(b, 1, 5*time.Second, func(ctx context.Context, rng *rand.Rand) error {
		c := callers[rng.IntN(len(callers))]
		_, err := s.perms.CanViewMany(ctx, c.subject, []string{c.org}, newest50)
		return err
	})

	for _, c := range callers {
		for _, src := range []archive.ListSource{archive.SourceCandidates, archive.SourceScan} {
			benchListPage(b, s, rows, newest50, c.name+"/source="+src.String(), c.subject, c.org, src)
		}
	}
}

// benchListPage times the first page of GET /api/archives for one caller of
// one organization, reading rows from src, next to one BatchCheck of 50.
func benchListPage(b *testing.B, s *benchStack, rows []benchArchive, newest50 []string, name, subject, org string, src archive.ListSource) {
	ctx := context.Background()
	orgs := []string{org}
	s.access.Source = src // the served Access
	// Untimed: the page through the use case, to learn how many rows it
	// asked about, and proof that it is exactly the first visible rows in
	// list order (nothing narrowed before OpenFGA hid a visible row).
	counted := *s.access
	perms := &countingPerms{Permissions: s.access.Perms}
	counted.Perms = perms
	page, err := counted.List(ctx, subject, orgs, nil)
	if err != nil {
		b.Fatal(err)
	}
	var want []string
	for _, r := range rows {
		if r.org == org && len(want) < 50 {
			want = append(want, r.id)
		}
	}
	var got []string
	for _, a := range page.Archives {
		got = append(got, a.ID)
	}
	if !slices.Equal(got, want) || page.Truncated {
		b.Fatalf("%s: the page holds %d rows (truncated %v), not the first %d visible ones", name, len(got), page.Truncated, len(want))
	}
	st, body, err := s.do(ctx, "GET", "/api/archives", subject, orgs)
	var httpPage api.ArchivePage
	if err == nil {
		err = json.Unmarshal(body, &httpPage)
	}
	if err != nil || st != 200 || len(httpPage.Archives) != len(page.Archives) || httpPage.Truncated != page.Truncated {
		b.Fatalf("%s over HTTP: %d %v (%d rows, want %d)", name, st, err, len(httpPage.Archives), len(page.Archives))
	}
	batchTrue := 0
	allowed, err := s.perms.CanViewMany(ctx, subject, orgs, newest50)
	if err != nil {
		b.Fatal(err)
	}
	for _, ok := range allowed {
		if ok {
			batchTrue++
		}
	}

	listPage := func(ctx context.Context, _ *rand.Rand) error {
		req, err := s.request(ctx, "GET", "/api/archives", subject, orgs)
		if err != nil {
			return err
		}
		res, err := s.client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err == nil && res.StatusCode != 200 {
			err = fmt.Errorf("list: status %d", res.StatusCode)
		}
		return err
	}
	batch50 := func(ctx context.Context, _ *rand.Rand) error {
		got, err := s.perms.CanViewMany(ctx, subject, orgs, newest50)
		if err == nil && len(got) != 50 {
			err = fmt.Errorf("batch check: %d answers", len(got))
		}
		return err
	}

	b.Run(name, func(b *testing.B) {
		st := sideBySide(b, 1, listPage, batch50)
		pg, lim := &st[0], &st[1]
		ratio := float64(pg.mean()) / float64(lim.mean())
		b.ReportMetric(float64(pg.mean().Nanoseconds()), "ns/op")
		b.ReportMetric(ms(pg.mean()), "page-ms")
		b.ReportMetric(ms(pg.pct(50)), "page-p50-ms")
		b.ReportMetric(ms(lim.mean()), "batch50-ms")
		b.ReportMetric(ms(lim.pct(50)), "batch50-p50-ms")
		b.ReportMetric(ratio, "page/batch50")
		b.ReportMetric(float64(len(page.Archives)), "rows")
		b.ReportMetric(float64(page.Scanned), "scanned")
		b.ReportMetric(float64(perms.checks), "checks")
		b.Logf("list %s over %d archives n=%d: page %.1f ms (p50 %.1f) = %d rows, %d asked about, %d checked in %d BatchCheck calls | BatchCheck of 50 (%d allowed) %.1f ms (p50 %.1f) | page/BatchCheck50 %.2f× (aim ≤ 2)",
			name, len(rows), b.N, ms(pg.mean()), ms(pg.pct(50)), len(page.Archives), page.Scanned, perms.checks, perms.calls,
			batchTrue, ms(lim.mean()), ms(lim.pct(50)), ratio)
	})
}

// countingPerms counts what a page sends to OpenFGA: rows checked (a batch
// is checked whole, so this can exceed the rows scanned) and calls.
type countingPerms struct {
	archive.Permissions
	checks, calls int
}

func (p *countingPerms) CanViewMany(ctx context.Context, subject string, orgs []string, ids []string) ([]bool, error) {
	p.checks += len(ids)
	p.calls++
	return p.Permissions.CanViewMany(ctx, subject, orgs, ids)
}

// BenchmarkListGuard: the attack the list's guard stops (list_guard_test.go)
// under load. 40 callers
// who see none of the 10,000 archives list at once and keep listing
// (following next while truncated, starting over at the end, and ignoring
// Retry-After: a refused lister comes back after 100 ms), while one client
// mints URLs at a steady 50 per second. Phases of 20 s each on the same
// stack and the same pools:
//
//   - idle: minting alone, before and after the guarded phase (the limit
//     is the p99 of both, measured before any unguarded list ran);
//   - guarded: the 40 listers against the Access as `serve` wires it (the
//     defaults: time budget, check budget, list and check concurrency);
//   - unguarded: the 40 listers against the same Access with no gate and no
//     time budget (only the 5,000-check bound the list had before);
//   - one lister, guarded then unguarded: what the guard costs a sparse
//     caller who is alone (checks per second).
//
// Minting is measured open-loop (one request every 20 ms whatever the
// previous did), so a slow server shows as latency, not as fewer samples.
// Run with -benchtime 1x (each iteration is all the phases).
func BenchmarkListGuard(b *testing.B) {
	const (
		mintRate = 50 // per second
		phase    = 20 * time.Second
	)
	s := newBenchStack(b)
	rng := rand.New(rand.NewPCG(5, 6))
	rows := benchRows(10_000, rng, func(r *rand.Rand) string {
		if r.IntN(2) == 0 {
			return "acme"
		}
		return "contoso"
	})
	s.load(b, rows)
	var visible []string
	for _, r := range rows {
		if r.org == "acme" {
			visible = append(visible, r.id)
		}
	}
	// The guard bounds the full scan, where a caller who sees nothing is
	// the most expensive (with candidates such a caller asks OpenFGA
	// nothing at all).
	s.access.Source = archive.SourceScan
	// Both sides count the checks their lists ask OpenFGA for.
	guardedChecks := &atomicCountingPerms{Permissions: s.access.Perms}
	guarded := new(archive.Access)
	*guarded = *s.access
	guarded.Perms = guardedChecks
	unguardedChecks := &atomicCountingPerms{Permissions: s.access.Perms}
	unguardedAccess := *s.access
	unguardedAccess.Perms = unguardedChecks
	unguardedAccess.Gate, unguardedAccess.TimeBudget = nil, api.RequestTimeout
	unguardedSrv := httptest.NewServer((&api.Server{Access: &unguardedAccess, Identity: identity.Headers{}, Submitters: s.perms}).Handler())
	b.Cleanup(unguardedSrv.Close)
	bounds := guarded.Gate.Bounds()
	b.Logf("guard: %d lists at once, %d per caller, %d checks in flight, time budget %v, check budget %d (0 = 5000)", bounds.Lists, bounds.PerCaller, bounds.Checks, archive.DefaultTimeBudget, guarded.ScanLimit)
	guardedSrv := httptest.NewServer((&api.Server{Access: guarded, Identity: identity.Headers{}, Submitters: s.perms}).Handler())
	b.Cleanup(guardedSrv.Close)

	mint := s.mintOp(visible, "bob", []string{"acme"})
	warmUp(b, 2, 5*time.Second, mint)

	// A sparse lister sees nothing, so every answer must be empty.
	sparsePage := func(ctx context.Context, base, subject, query string) (status int, next *api.CursorJSON, err error) {
		ctx, cancel := context.WithTimeout(ctx, api.RequestTimeout+5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/archives"+query, nil)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set(identity.SubjectHeader, subject)
		req.Header.Set(identity.OrganizationsHeader, "org-none")
		res, err := s.client.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != 200 {
			return res.StatusCode, nil, err
		}
		var page api.ArchivePage
		if err := json.Unmarshal(body, &page); err != nil {
			return 0, nil, err
		}
		if len(page.Archives) != 0 {
			return 0, nil, fmt.Errorf("a sparse caller was shown %d archives", len(page.Archives))
		}
		return 200, page.Next, nil
	}

	type phaseStats struct {
		name                string
		mints               runStats
		mintErrs            int
		lists               runStats // answered 200
		refused, failed     int      // 503; anything else (5xx, time-outs)
		cut                 int      // still running when the phase ended
		walks               int      // sparse lists followed to their end
		refusedLat, failLat []time.Duration
		checks              int64 // rows the lists asked OpenFGA about
		listWall            time.Duration
	}
	run := func(name, base string, listers int, counter *atomicCountingPerms) phaseStats {
		st := phaseStats{name: name}
		withListers := listers > 0
		var checks0 int64
		if counter != nil {
			checks0 = counter.checks.Load()
		}
		listStart := time.Now()
		var mu sync.Mutex
		phaseCtx, stop := context.WithCancel(context.Background())
		defer stop()
		var listing sync.WaitGroup
		if withListers {
			for w := range listers {
				listing.Go(func() {
					subject := fmt.Sprintf("sparse-%d", w)
					query := ""
					for phaseCtx.Err() == nil {
						t0 := time.Now()
						status, next, err := sparsePage(phaseCtx, base, subject, query)
						lat := time.Since(t0)
						if err != nil && phaseCtx.Err() != nil {
							mu.Lock()
							st.cut++
							mu.Unlock()
							return
						}
						mu.Lock()
						switch {
						case err == nil && status == 200:
							st.lists.ops++
							st.lists.lat = append(st.lists.lat, lat)
							if next == nil {
								st.walks++
							}
						case err == nil && status == 503:
							st.refused++
							st.refusedLat = append(st.refusedLat, lat)
						default:
							st.failed++
							st.failLat = append(st.failLat, lat)
						}
						mu.Unlock()
						switch {
						case status == 200 && next != nil:
							query = "?before=" + url.QueryEscape(next.Before) + "&beforeId="
						case status == 200:
							query = ""
						default:
							select {
							case <-phaseCtx.Done():
							case <-time.After(100 * time.Millisecond):
							}
						}
					}
				})
			}
			time.Sleep(2 * time.Second) // let the listers fill the server before timing mints
		}
		var minting sync.WaitGroup
		tick := time.NewTicker(time.Second / mintRate)
		start := time.Now()
		for i := 0; time.Since(start) < phase; i++ {
			<-tick.C
			minting.Go(func() {
				rng := rand.New(rand.NewPCG(7, uint64(i)))
				ctx, cancel := context.WithTimeout(context.Background(), api.RequestTimeout)
				defer cancel()
				t0 := time.Now()
				err := mint(ctx, rng)
				lat := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					st.mintErrs++
					return
				}
				st.mints.ops++
				st.mints.lat = append(st.mints.lat, lat)
			})
		}
		tick.Stop()
		minting.Wait()
		st.mints.wall = time.Since(start)
		stop()
		st.listWall = time.Since(listStart)
		if counter != nil {
			st.checks = counter.checks.Load() - checks0
		}
		listing.Wait()
		if withListers {
			time.Sleep(3 * time.Second) // let the server drop what the cut-off requests left running
		}
		return st
	}

	var phases []phaseStats
	b.ResetTimer()
	for range b.N {
		phases = []phaseStats{
			run("idle", s.srv.URL, 0, nil),
			run("guarded", guardedSrv.URL, 40, guardedChecks),
			run("idle again", s.srv.URL, 0, nil),
			run("unguarded", unguardedSrv.URL, 40, unguardedChecks),
			run("1 lister, guarded", guardedSrv.URL, 1, guardedChecks),
			run("1 lister, unguarded", unguardedSrv.URL, 1, unguardedChecks),
		}
	}
	b.StopTimer()
	idle := phases[0].mints
	idle.lat = append(slices.Clone(idle.lat), phases[2].mints.lat...)
	limit := idle.pct(99)
	for _, p := range phases {
		b.Logf("%-19s mint n=%d err=%d p50 %.2f ms p99 %.2f ms (p99 ÷ idle p99 %.2f×) | lists 200=%d (p50 %.0f ms, p99 %.0f ms) 503=%d (p50 %.2f ms) failed=%d cut-off=%d, walks to the end %d, %d checks (%.0f/s)",
			p.name, p.mints.ops, p.mintErrs, ms(p.mints.pct(50)), ms(p.mints.pct(99)), float64(p.mints.pct(99))/float64(limit),
			p.lists.ops, ms(p.lists.pct(50)), ms(p.lists.pct(99)), p.refused, ms((&runStats{lat: p.refusedLat}).pct(50)), p.failed, p.cut, p.walks,
			p.checks, float64(p.checks)/p.listWall.Seconds())
	}
	b.Logf("limit: idle mint p99 %.2f ms (both idle phases, %d mints)", ms(limit), len(idle.lat))
	b.ReportMetric(ms(limit), "idle-p99-ms")
	b.ReportMetric(ms(phases[1].mints.pct(50)), "guarded-p50-ms")
	b.ReportMetric(ms(phases[1].mints.pct(99)), "guarded-p99-ms")
	b.ReportMetric(ms(phases[3].mints.pct(50)), "unguarded-p50-ms")
	b.ReportMetric(ms(phases[3].mints.pct(99)), "unguarded-p99-ms")
	b.ReportMetric(float64(phases[1].mints.pct(99))/float64(limit), "guarded/idle-p99")
	b.ReportMetric(float64(phases[3].mints.pct(99))/float64(limit), "unguarded/idle-p99")
}

// atomicCountingPerms counts the rows lists ask OpenFGA about, from any
// number of requests at once.
type atomicCountingPerms struct {
	archive.Permissions
	checks atomic.Int64
}

func (p *atomicCountingPerms) CanViewMany(ctx context.Context, subject string, orgs []string, ids []string) ([]bool, error) {
	p.checks.Add(int64(len(ids)))
	return p.Permissions.CanViewMany(ctx, subject, orgs, ids)
}

// mintOp mints a URL for a random archive of visible over HTTP as subject of
// orgs; anything but a 200 is an error.
func (s *benchStack) mintOp(visible []string, subject string, orgs []string) benchOp {
	return func(ctx context.Context, rng *rand.Rand) error {
		id := visible[rng.IntN(len(visible))]
		req, err := s.request(ctx, "POST", "/api/archives/"+id+"/url", subject, orgs)
		if err != nil {
			return err
		}
		res, err := s.client.Do(req)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err == nil && res.StatusCode != 200 {
			err = fmt.Errorf("mint %s: status %d", id, res.StatusCode)
		}
		return err
	}
}
