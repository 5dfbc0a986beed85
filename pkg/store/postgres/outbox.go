package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// ClaimOutbox leases up to n due rows for lease: they stay pending but are
// invisible to other drainers until the lease ends, so two drainers never
// deliver a row at the same time, and no transaction is held open across the
// calls to OpenFGA. A drainer that dies leaves its rows to the next one once
// the lease is over.
// Only rows with an id above after are considered, so one drain is a single
// pass that never retries a row it has just failed.
//
// Per-tuple order (migrations/000009_outbox_tuple_order.up.sql): a row is
// not leased while another row naming one of its tuples is leased (in
// flight: an older intent, superseded since), and each row comes back
// without the tuples a newer row has superseded, so an older intent is
// never sent after a newer one.
func (s *Store) ClaimOutbox(ctx context.Context, after int64, n int, lease time.Duration) ([]ledger.OutboxRow, error) {
	rows, err := s.Pool.Query(ctx, `
		UPDATE fga_outbox o SET next_attempt_at = now() + $2::interval, leased_until = now() + $2::interval
		FROM (SELECT id FROM fga_outbox c
		      WHERE processed_at IS NULL AND dead_at IS NULL AND next_attempt_at <= now() AND id > $3
		        AND NOT (tuple_keys && (SELECT coalesce(array_agg(k), '{}') FROM fga_outbox p, unnest(p.tuple_keys) k
		                                WHERE p.leased_until IS NOT NULL AND p.leased_until > now()))
		      ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) c
		WHERE o.id = c.id
		RETURNING o.id, fga_outbox_live(o.payload, o.superseded_keys), o.attempts`, n, lease.String(), after)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.OutboxRow])
	if err != nil {
		return nil, err
	}
	// RETURNING comes back in no particular order; deliver oldest first.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].ID < out[j-1].ID; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// MarkDelivered records rows as delivered and ends their lease. A row a
// newer one superseded while it was in flight is already closed, and stays
// as it is.
func (s *Store) MarkDelivered(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.Pool.Exec(ctx, `
		UPDATE fga_outbox SET leased_until = NULL,
		       last_error = CASE WHEN processed_at IS NULL THEN NULL ELSE last_error END,
		       processed_at = coalesce(processed_at, now())
		WHERE id = ANY($1)`, ids)
	return err
}

// MarkFailed records a failed attempt: the row is retried after backoff, or
// dead-lettered when dead is true.
func (s *Store) MarkFailed(ctx context.Context, id int64, msg string, backoff time.Duration, dead bool) error {
	_, err := s.Pool.Exec(ctx, `
		UPDATE fga_outbox SET leased_until = NULL,
		       attempts = attempts + 1, last_error = $2,
		       next_attempt_at = now() + $3::interval,
		       dead_at = CASE WHEN $4 THEN now() END
		WHERE id = $1 AND processed_at IS NULL`, id, msg, backoff.String(), dead)
	if err == nil {
		// Superseded while in flight: closed already; only the lease ends.
		_, err = s.Pool.Exec(ctx, `UPDATE fga_outbox SET leased_until = NULL WHERE id = $1 AND leased_until IS NOT NULL`, id)
	}
	return err
}

// ReleaseOutbox gives leased rows back untouched (attempts unchanged), e.g.
// when OpenFGA turned out to be unreachable.
func (s *Store) ReleaseOutbox(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := s.Pool.Exec(ctx, `
		UPDATE fga_outbox SET leased_until = NULL,
		       next_attempt_at = CASE WHEN processed_at IS NULL AND dead_at IS NULL THEN now() ELSE next_attempt_at END
		WHERE id = ANY($1)`, ids)
	return err
}

// OutboxCounts summarises the outbox.
type OutboxCounts struct {
	Pending   int `json:"pending"`
	Delivered int `json:"delivered"`
	Dead      int `json:"dead"`
}

// OutboxInFlight counts the rows a drainer holds now (leased, not yet
// marked delivered or failed). A row superseded while in flight is closed
// already but still held: it counts, as ClaimOutbox still keeps its
// tuples' newer rows back until it is marked.
func (s *Store) OutboxInFlight(ctx context.Context) (int, error) {
	var n int
	err := s.Pool.QueryRow(ctx, `
		SELECT count(*) FROM fga_outbox WHERE leased_until IS NOT NULL AND leased_until > now()`).Scan(&n)
	return n, err
}

// CountOutbox counts rows by state.
func (s *Store) CountOutbox(ctx context.Context) (OutboxCounts, error) {
	var c OutboxCounts
	err := s.Pool.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE processed_at IS NULL AND dead_at IS NULL),
		       count(*) FILTER (WHERE processed_at IS NOT NULL),
		       count(*) FILTER (WHERE dead_at IS NOT NULL)
		FROM fga_outbox`).Scan(&c.Pending, &c.Delivered, &c.Dead)
	return c, err
}

// DeadRow is a dead-lettered outbox row.
type DeadRow struct {
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	DeadAt    time.Time `json:"deadAt"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"lastError"`
	Payload   string    `json:"payload"`
}

// DeadOutbox lists dead-lettered rows, oldest first, up to limit.
func (s *Store) DeadOutbox(ctx context.Context, limit int) ([]DeadRow, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT id, created_at, dead_at, attempts, coalesce(last_error, ''), payload::text
		FROM fga_outbox WHERE dead_at IS NOT NULL ORDER BY id LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[DeadRow])
}

// RequeueDead gives dead-lettered rows (all, or those in ids) a fresh start.
// A requeued row still leaves out the tuples newer rows superseded, so it
// never brings back an older intent over a newer one.
func (s *Store) RequeueDead(ctx context.Context, ids []int64) (int64, error) {
	tag, err := s.Pool.Exec(ctx, `
		UPDATE fga_outbox SET dead_at = NULL, attempts = 0, next_attempt_at = now()
		WHERE dead_at IS NOT NULL AND (coalesce(cardinality($1::bigint[]), 0) = 0 OR id = ANY($1))`, ids)
	return tag.RowsAffected(), err
}
