package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The host leases (ledger.HostLeases, migration 000012): every capture of
// a host locks the host's host_pace row to start and to end, so the
// captures of one host are ordered by PostgreSQL whichever process makes
// them, and every time is PostgreSQL's clock.

var _ ledger.HostLeases = (*Store)(nil)

// waiterStale is how long a waiter that stopped asking stays in line.
const waiterStale = 5 * time.Second

// notTurn is the wait of a party that is ready but not first in line.
const notTurn = 20 * time.Millisecond

// TryHost implements ledger.HostLeases.
func (s *Store) TryHost(ctx context.Context, req ledger.HostLeaseRequest) (lease ledger.HostLease, ok bool, wait time.Duration, err error) {
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

// RenewHost implements ledger.HostLeases.
func (s *Store) RenewHost(ctx context.Context, holder string, ttl time.Duration) error {
	_, err := s.Pool.Exec(ctx, `
		UPDATE host_captures SET expires_at = clock_timestamp() + $2 * interval '1 microsecond'
		WHERE holder = $1 AND ended_at IS NULL`, holder, ttl.Microseconds())
	return err
}

// ReleaseHost implements ledger.HostLeases.
func (s *Store) ReleaseHost(ctx context.Context, holder string, hold time.Duration, source string) error {
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
