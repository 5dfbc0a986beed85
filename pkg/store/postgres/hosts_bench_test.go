package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// The host lease's cost per capture: one round trip to take it and one to
// release it (the functions of migration 000020), next to the transactions
// the store ran before them (txLeases, kept here as the peer).

// countingStore is a store whose pool counts the statements it sends
// (BEGIN and COMMIT included: each is a round trip).
func countingStore(tb testing.TB) (*postgres.Store, *atomic.Int64) {
	tb.Helper()
	cfg, err := pgxpool.ParseConfig(testenv.Database(tb))
	if err != nil {
		tb.Fatal(err)
	}
	n := &atomic.Int64{}
	cfg.ConnConfig.Tracer = countTracer{n}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return &postgres.Store{Pool: pool}, n
}

type countTracer struct{ n *atomic.Int64 }

func (c countTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (countTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// leaseOnce takes a free host's lease at delay 0 and releases it.
func leaseOnce(tb testing.TB, l ledger.HostLeases, host string) {
	tb.Helper()
	ctx := context.Background()
	req := ledger.HostLeaseRequest{Host: host, Holder: uuid.NewString(), Kind: ledger.HostKindCrawl, Org: "acme", URL: "https://" + host + "/",
		Source: "setting", AtOnce: 1, TTL: 30 * time.Second}
	_, ok, wait, err := l.TryHost(ctx, req)
	if err != nil || !ok {
		tb.Fatalf("take the lease of %s: ok %v, wait %s, %v", host, ok, wait, err)
	}
	if err := l.ReleaseHost(ctx, req.Holder, 0, "setting"); err != nil {
		tb.Fatal(err)
	}
}

// TestHostLeaseRoundTrips: taking a free host's lease and releasing it is
// two round trips to PostgreSQL (it was 18 with the transactions).
func TestHostLeaseRoundTrips(t *testing.T) {
	t.Parallel()
	s, n := countingStore(t)
	host := "trips-" + uuid.NewString()[:8] + ".example"
	leaseOnce(t, s, host) // the host's first lease inserts its row
	before := n.Load()
	leaseOnce(t, s, host)
	if got := n.Load() - before; got != 2 {
		t.Errorf("a lease taken and released in %d round trips, want 2", got)
	}
	before = n.Load()
	leaseOnce(t, txLeases{s}, host)
	t.Logf("the transactions of before: %d round trips", n.Load()-before)
}

// BenchmarkHostLease: a free host's lease taken and released, with the
// functions and with the transactions of before, alternately in the same
// run, each on hosts of its own.
func BenchmarkHostLease(b *testing.B) {
	s, n := countingStore(b)
	impls := []struct {
		name string
		l    ledger.HostLeases
	}{{"fn", s}, {"tx", txLeases{s}}}
	var took [2]time.Duration
	var trips [2]int64
	b.ResetTimer()
	for i := range b.N {
		for k := range 2 {
			j := (i + k) % 2
			host := fmt.Sprintf("bench-%s-%d.example", impls[j].name, i%10)
			start, q := time.Now(), n.Load()
			leaseOnce(b, impls[j].l, host)
			took[j] += time.Since(start)
			trips[j] += n.Load() - q
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(took[0].Microseconds())/float64(b.N), "fn-us/lease")
	b.ReportMetric(float64(took[1].Microseconds())/float64(b.N), "tx-us/lease")
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "tx/fn-x")
	b.ReportMetric(float64(trips[0])/float64(b.N), "fn-trips/lease")
	b.ReportMetric(float64(trips[1])/float64(b.N), "tx-trips/lease")
}

// txLeases is the store with the lease taken and released by the
// transactions it ran before host_lease_try and host_lease_release.
type txLeases struct{ *postgres.Store }

// waiterStale and notTurn are the store's.
const (
	waiterStale = 5 * time.Second
	notTurn     = 20 * time.Millisecond
)

// TryHost is the transaction the lease was taken with before
// host_lease_try (about a dozen statements).
func (s txLeases) TryHost(ctx context.Context, req ledger.HostLeaseRequest) (lease ledger.HostLease, ok bool, wait time.Duration, err error) {
	var crawlID *string
	if req.CrawlID != "" {
		crawlID = &req.CrawlID
	}
	myDelay := req.Delay.Truncate(time.Microsecond)
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO host_pace (host) VALUES ($1) ON CONFLICT DO NOTHING`, req.Host); err != nil {
			return err
		}
		var (
			lastEnd, holdUntil *time.Time
			holdSource         *string
			now                time.Time
			crawlDelayMs       int
		)
		if err := tx.QueryRow(ctx, `SELECT last_end, hold_until, hold_source, crawl_delay_ms, clock_timestamp() FROM host_pace WHERE host = $1 FOR UPDATE`,
			req.Host).Scan(&lastEnd, &holdUntil, &holdSource, &crawlDelayMs, &now); err != nil {
			return err
		}
		if req.RobotsRead {
			crawlDelayMs = int(min(max(req.CrawlDelay, 0)/time.Millisecond, 1<<31-1))
			if _, err := tx.Exec(ctx, `UPDATE host_pace SET crawl_delay_ms = $2 WHERE host = $1`, req.Host, crawlDelayMs); err != nil {
				return err
			}
		}
		mySource := req.Source
		if cd := time.Duration(crawlDelayMs) * time.Millisecond; cd > myDelay {
			myDelay, mySource = cd, "crawl-delay"
		}
		// A lease its process stopped renewing ends at its expiry.
		var reaped *time.Time
		if err := tx.QueryRow(ctx, `
			WITH x AS (
				UPDATE host_captures SET ended_at = greatest(expires_at, started_at), expired = true
				WHERE host = $1 AND ended_at IS NULL AND expires_at < $2
				RETURNING ended_at)
			SELECT max(ended_at) FROM x`, req.Host, now).Scan(&reaped); err != nil {
			return err
		}
		if reaped != nil && (lastEnd == nil || reaped.After(*lastEnd)) {
			lastEnd = reaped
			if _, err := tx.Exec(ctx, `UPDATE host_pace SET last_end = $2 WHERE host = $1`, req.Host, *reaped); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `
			DELETE FROM host_waiters WHERE host = $1 AND seen_at < $2`, req.Host, now.Add(-waiterStale)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO host_waiters (host, holder, org_id, delay_ms, since, seen_at) VALUES ($1, $2, $3, $4, $5, $5)
			ON CONFLICT (host, holder) DO UPDATE SET seen_at = excluded.seen_at, delay_ms = excluded.delay_ms`,
			req.Host, req.Holder, req.Org, int(myDelay/time.Millisecond), now); err != nil {
			return err
		}
		var open int
		if err := tx.QueryRow(ctx, `SELECT count(*)::int FROM host_captures WHERE host = $1 AND ended_at IS NULL`, req.Host).Scan(&open); err != nil {
			return err
		}
		if open >= max(req.AtOnce, 1) {
			wait = 2 * notTurn
			return nil
		}
		ready, source := now, mySource
		if lastEnd != nil {
			ready = lastEnd.Add(myDelay)
		}
		if holdUntil != nil && holdUntil.After(ready) {
			ready = *holdUntil
			if holdSource != nil {
				source = *holdSource
			}
		}
		if now.Before(ready) {
			wait = ready.Sub(now)
			return nil
		}
		// Ready: the turn goes to the ready waiter of the organization
		// served least recently on this host, the oldest within it.
		var first string
		err := tx.QueryRow(ctx, `
			SELECT w.holder::text FROM host_waiters w
			LEFT JOIN host_turns t ON t.host = w.host AND t.org_id = w.org_id
			WHERE w.host = $1 AND ($2::timestamptz IS NULL OR $2 + w.delay_ms * interval '1 millisecond' <= $3)
			ORDER BY t.granted_at NULLS FIRST, w.since, w.holder
			LIMIT 1`, req.Host, lastEnd, now).Scan(&first)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if first != "" && first != req.Holder {
			wait = notTurn
			return nil
		}
		delay := myDelay
		if lastEnd != nil {
			delay = ready.Sub(*lastEnd)
		}
		delayMs := int(max(delay, 0) / time.Millisecond)
		if _, err := tx.Exec(ctx, `
			INSERT INTO host_captures (host, holder, kind, org_id, crawl_id, url, started_at, expires_at, prev_end, delay_ms, delay_source, asked_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
			        (SELECT since FROM host_waiters WHERE host = $1 AND holder = $2))`,
			req.Host, req.Holder, req.Kind, req.Org, crawlID, req.URL, now, now.Add(req.TTL), lastEnd, delayMs, source); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM host_waiters WHERE host = $1 AND holder = $2`, req.Host, req.Holder); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO host_turns (host, org_id, granted_at) VALUES ($1, $2, $3)
			ON CONFLICT (host, org_id) DO UPDATE SET granted_at = excluded.granted_at`, req.Host, req.Org, now); err != nil {
			return err
		}
		lease = ledger.HostLease{Holder: req.Holder, StartedAt: now, Delay: time.Duration(delayMs) * time.Millisecond, Source: source}
		ok = true
		return nil
	})
	if err != nil {
		return ledger.HostLease{}, false, 0, fmt.Errorf("take the lease of host %s: %w", req.Host, err)
	}
	return lease, ok, wait, nil
}

// RenewHost is the same statement the store runs.
func (s txLeases) RenewHost(ctx context.Context, holder string, ttl time.Duration) error {
	_, err := s.Pool.Exec(ctx, `
		UPDATE host_captures SET expires_at = clock_timestamp() + $2 * interval '1 microsecond'
		WHERE holder = $1 AND ended_at IS NULL`, holder, ttl.Microseconds())
	return err
}

// ReleaseHost is the transaction the lease was released with before
// host_lease_release.
func (s txLeases) ReleaseHost(ctx context.Context, holder string, hold time.Duration, source string) error {
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var host string
		if err := tx.QueryRow(ctx, `SELECT host FROM host_captures WHERE holder = $1`, holder).Scan(&host); err != nil {
			return err
		}
		var now time.Time
		if err := tx.QueryRow(ctx, `SELECT clock_timestamp() FROM host_pace WHERE host = $1 FOR UPDATE`, host).Scan(&now); err != nil {
			return err
		}
		var end time.Time
		hold = max(hold, 0).Truncate(time.Millisecond)
		err := tx.QueryRow(ctx, `
			UPDATE host_captures SET ended_at = greatest($2, started_at), hold_ms = $3, hold_source = $4
			WHERE holder = $1 AND ended_at IS NULL RETURNING ended_at`, holder, now, int(hold/time.Millisecond), source).Scan(&end)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // expired, and ended by the next party
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			UPDATE host_pace SET
				last_end = greatest(last_end, $2),
				hold_source = CASE WHEN hold_until IS NULL OR hold_until < $3 THEN $4 ELSE hold_source END,
				hold_until = greatest(hold_until, $3)
			WHERE host = $1`, host, end, end.Add(hold), source)
		return err
	})
	if err != nil {
		return fmt.Errorf("release the lease %s: %w", holder, err)
	}
	return nil
}
