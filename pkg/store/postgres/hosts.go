package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The host leases (ledger.HostLeases, migrations 000012 and 000020): every capture of
// a host locks the host's host_pace row to start and to end, so the
// captures of one host are ordered by PostgreSQL whichever process makes
// them, and every time is PostgreSQL's clock.

var _ ledger.HostLeases = (*Store)(nil)

// waiterStale is how long a waiter that stopped asking stays in line.
const waiterStale = 5 * time.Second

// notTurn is the wait of a party that is ready but not first in line.
const notTurn = 20 * time.Millisecond

// TryHost implements ledger.HostLeases in one round trip: the function
// host_lease_try (migration 000020) takes the host's host_pace row lock,
// ends the leases whose process stopped renewing them at their expiry,
// drops waiters not seen for waiterStale, puts the caller in line, and
// grants the lease when fewer than AtOnce captures run, the largest delay
// any party keeps has passed since the host's last end, and the turn is
// the caller's: the ready waiter of the organization served least
// recently on the host, the oldest within it.
func (s *Store) TryHost(ctx context.Context, req ledger.HostLeaseRequest) (lease ledger.HostLease, ok bool, wait time.Duration, err error) {
	var crawlID *string
	if req.CrawlID != "" {
		crawlID = &req.CrawlID
	}
	crawlDelayMs := int(min(max(req.CrawlDelay, 0)/time.Millisecond, 1<<31-1))
	var (
		waitUs  int64
		start   *time.Time
		delayMs *int
		source  *string
	)
	err = s.Pool.QueryRow(ctx, `
		SELECT ok, wait_us, lease_start, lease_delay_ms, lease_source
		FROM host_lease_try($1, $2::uuid, $3, $4, $5::uuid, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		req.Host, req.Holder, req.Kind, req.Org, crawlID, req.URL,
		req.Delay.Microseconds(), req.Source, req.RobotsRead, crawlDelayMs,
		req.AtOnce, req.TTL.Microseconds(), waiterStale.Microseconds(), notTurn.Microseconds(),
	).Scan(&ok, &waitUs, &start, &delayMs, &source)
	if err != nil {
		return ledger.HostLease{}, false, 0, fmt.Errorf("take the lease of host %s: %w", req.Host, err)
	}
	if !ok {
		return ledger.HostLease{}, false, time.Duration(waitUs) * time.Microsecond, nil
	}
	if start == nil || delayMs == nil || source == nil {
		return ledger.HostLease{}, false, 0, fmt.Errorf("take the lease of host %s: the database granted it without a start", req.Host)
	}
	return ledger.HostLease{Holder: req.Holder, StartedAt: *start, Delay: time.Duration(*delayMs) * time.Millisecond, Source: *source}, true, 0, nil
}

// RenewHost implements ledger.HostLeases.
func (s *Store) RenewHost(ctx context.Context, holder string, ttl time.Duration) error {
	_, err := s.Pool.Exec(ctx, `
		UPDATE host_captures SET expires_at = clock_timestamp() + $2 * interval '1 microsecond'
		WHERE holder = $1 AND ended_at IS NULL`, holder, ttl.Microseconds())
	return err
}

// ReleaseHost implements ledger.HostLeases in one round trip (the
// function host_lease_release, migration 000020): under the host's row
// lock it ends the capture now and moves the host's last end and hold; a
// lease that expired meanwhile was ended by the next party and is left so.
func (s *Store) ReleaseHost(ctx context.Context, holder string, hold time.Duration, source string) error {
	hold = max(hold, 0).Truncate(time.Millisecond)
	if _, err := s.Pool.Exec(ctx, `SELECT host_lease_release($1::uuid, $2, $3)`, holder, int(hold/time.Millisecond), source); err != nil {
		return fmt.Errorf("release the lease %s: %w", holder, err)
	}
	return nil
}

// LeaveHost implements ledger.HostLeases.
func (s *Store) LeaveHost(ctx context.Context, host, holder string) error {
	_, err := s.Pool.Exec(ctx, `DELETE FROM host_waiters WHERE host = $1 AND holder = $2`, host, holder)
	return err
}

// HostCaptures returns every capture of host that started at or after
// since, in start order.
func (s *Store) HostCaptures(ctx context.Context, host string, since time.Time) ([]ledger.HostCapture, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT id, host, kind, org_id, crawl_id::text, url, started_at, ended_at, expired, prev_end, delay_ms, delay_source,
		       coalesce(hold_ms, 0), coalesce(hold_source, ''), asked_at
		FROM host_captures WHERE host = $1 AND started_at >= $2 ORDER BY started_at, id`, host, since)
	if err != nil {
		return nil, fmt.Errorf("read the captures of host %s: %w", host, err)
	}
	defer rows.Close()
	var out []ledger.HostCapture
	for rows.Next() {
		var c ledger.HostCapture
		var ms, hold int
		if err := rows.Scan(&c.ID, &c.Host, &c.Kind, &c.Org, &c.CrawlID, &c.URL, &c.StartedAt, &c.EndedAt, &c.Expired, &c.PrevEnd, &ms, &c.Source,
			&hold, &c.HoldSource, &c.AskedAt); err != nil {
			return nil, fmt.Errorf("read the captures of host %s: %w", host, err)
		}
		c.Delay, c.Hold = time.Duration(ms)*time.Millisecond, time.Duration(hold)*time.Millisecond
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the captures of host %s: %w", host, err)
	}
	return out, nil
}

// HostsWithPort returns, in order, the hosts recorded as name with a port
// (name:8080, [::1]:8080) that have a capture started at or after since; at
// most limit of them.
func (s *Store) HostsWithPort(ctx context.Context, name string, since time.Time, limit int) ([]string, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT DISTINCT host FROM host_captures
		WHERE left(host, length($1) + 1) = $1 || ':' AND started_at >= $2
		ORDER BY host LIMIT $3`, name, since, limit)
	if err != nil {
		return nil, fmt.Errorf("read the hosts named %s with a port: %w", name, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("read the hosts named %s with a port: %w", name, err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the hosts named %s with a port: %w", name, err)
	}
	return out, nil
}
