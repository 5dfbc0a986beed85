package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// The search index's election (search.Leases): the one row of
// search_indexer (migration 000019) says which index the indexed_at marks
// were made for and which process holds a Bleve index.

var _ search.Leases = (*Store)(nil)

const indexerCols = `index_id, holder, lease_until > now(), address, secret, lease_until, opensearch_until > now() FROM search_indexer`

func scanIndexer(row pgx.Row) (search.IndexerLease, error) {
	var l search.IndexerLease
	err := row.Scan(&l.IndexID, &l.Holder, &l.Live, &l.Address, &l.Secret, &l.Until, &l.OpenSearchLive)
	return l, err
}

// SearchIndexer reads the record.
func (s *Store) SearchIndexer(ctx context.Context) (search.IndexerLease, error) {
	return scanIndexer(s.Pool.QueryRow(ctx, `SELECT `+indexerCols))
}

// AcquireSearchIndexer takes the lease when it is free, run out, or
// holder's already; an OpenSearch process checked in keeps it from being
// taken (search.SplitError).
func (s *Store) AcquireSearchIndexer(ctx context.Context, holder, address, secret string, ttl time.Duration) (search.IndexerLease, bool, error) {
	var l search.IndexerLease
	var got bool
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		l, err = scanIndexer(tx.QueryRow(ctx, `SELECT `+indexerCols+` FOR UPDATE`))
		if err != nil {
			return err
		}
		if l.OpenSearchLive && search.IsOpenSearchIdentity(l.IndexID) {
			return &search.SplitError{Reason: "another process of this database indexes into " + l.IndexID +
				" (CAPTURE_LEDGER_OPENSEARCH_URL is set there, unset here): give every process the same CAPTURE_LEDGER_OPENSEARCH_URL and CAPTURE_LEDGER_OPENSEARCH_INDEX, or stop those processes first"}
		}
		if l.Live && l.Holder != holder {
			return nil
		}
		l, err = scanIndexer(tx.QueryRow(ctx, `
			UPDATE search_indexer SET holder = $1, address = $2, secret = $3, lease_until = now() + $4::interval,
				acquired_at = CASE WHEN holder = $1 THEN acquired_at ELSE now() END
			RETURNING `+indexerCols[:len(indexerCols)-len(" FROM search_indexer")], holder, address, secret, ttl))
		got = err == nil
		return err
	})
	return l, got, err
}

// RenewSearchIndexer extends holder's lease.
func (s *Store) RenewSearchIndexer(ctx context.Context, holder string, ttl time.Duration) (bool, error) {
	tag, err := s.Pool.Exec(ctx, `UPDATE search_indexer SET lease_until = now() + $2::interval WHERE holder = $1`, holder, ttl)
	return tag.RowsAffected() == 1, err
}

// ReleaseSearchIndexer ends holder's lease now and notifies the processes
// waiting to take it.
func (s *Store) ReleaseSearchIndexer(ctx context.Context, holder string) error {
	_, err := s.Pool.Exec(ctx, `
		WITH r AS (UPDATE search_indexer SET lease_until = 'epoch', address = '', secret = '' WHERE holder = $1 RETURNING 1)
		SELECT pg_notify('ledger_search_indexer', '') FROM r`, holder)
	return err
}

// AdoptSearchIndex records indexID as the index, holder holding the
// lease; another index recorded before clears every mark.
func (s *Store) AdoptSearchIndex(ctx context.Context, holder, indexID string) (int64, error) {
	var reset int64
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var recorded string
		err := tx.QueryRow(ctx, `SELECT index_id FROM search_indexer WHERE holder = $1 FOR UPDATE`, holder).Scan(&recorded)
		if errors.Is(err, pgx.ErrNoRows) {
			return search.ErrNotIndexer
		}
		if err != nil || recorded == indexID {
			return err
		}
		reset, err = clearMarks(ctx, tx)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE search_indexer SET index_id = $1`, indexID)
		return err
	})
	return reset, err
}

// clearMarks is the rebuild statement: every indexed_at back to NULL, and
// every failure due for a retry now.
func clearMarks(ctx context.Context, tx pgx.Tx) (int64, error) {
	tag, err := tx.Exec(ctx, `
		WITH due AS (UPDATE search_index_failures SET retry_at = now())
		UPDATE archives SET indexed_at = NULL WHERE indexed_at IS NOT NULL`)
	return tag.RowsAffected(), err
}

// CheckInOpenSearch records an OpenSearch process using indexID.
func (s *Store) CheckInOpenSearch(ctx context.Context, indexID string, ttl time.Duration) (int64, error) {
	var reset int64
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		l, err := scanIndexer(tx.QueryRow(ctx, `SELECT `+indexerCols+` FOR UPDATE`))
		if err != nil {
			return err
		}
		switch {
		case l.Live:
			where := l.Address
			if where == "" {
				where = "a ledgerctl command"
			}
			return &search.SplitError{Reason: fmt.Sprintf("another process of this database (%s) holds the on-disk (Bleve) search index (CAPTURE_LEDGER_OPENSEARCH_URL is unset there, set here): give every process the same CAPTURE_LEDGER_OPENSEARCH_URL, or stop that one first", where)}
		case l.OpenSearchLive && l.IndexID != indexID:
			return &search.SplitError{Reason: "another process of this database indexes into " + l.IndexID +
				": give every process the same CAPTURE_LEDGER_OPENSEARCH_URL and CAPTURE_LEDGER_OPENSEARCH_INDEX"}
		}
		if l.IndexID != indexID {
			if reset, err = clearMarks(ctx, tx); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE search_indexer SET index_id = $1, opensearch_until = now() + $2::interval`, indexID, ttl)
		return err
	})
	return reset, err
}

// MarkIndexedAs marks the archives indexed when holder holds the record
// and indexID is the index recorded: the row is locked (FOR SHARE) for the
// statement's transaction, so a takeover (which locks it FOR UPDATE to
// clear the marks) comes wholly before or after.
func (s *Store) MarkIndexedAs(ctx context.Context, holder, indexID string, ids []string) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM search_indexer WHERE index_id = $1 AND (holder = $2 OR $2 = '') FOR SHARE`, indexID, holder).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return search.ErrNotIndexer
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `
			WITH forgotten AS (DELETE FROM search_index_failures WHERE archive_id = ANY($1::uuid[]))
			UPDATE archives SET indexed_at = now() WHERE id = ANY($1::uuid[])`, ids)
		return err
	})
}

// Listen calls fn with the channel of each notification sent on channels
// until ctx ends, on a connection of its own (taken again after an error,
// after a second). Notifications sent while no connection listens are
// lost: callers also poll.
func (s *Store) Listen(ctx context.Context, channels []string, fn func(channel string)) {
	for ctx.Err() == nil {
		err := s.listenOnce(ctx, channels, fn)
		if ctx.Err() != nil {
			return
		}
		_ = err
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

func (s *Store) listenOnce(ctx context.Context, channels []string, fn func(channel string)) error {
	pc, err := s.Pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection keeps its LISTENs: it is taken out of the pool and
	// closed after.
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return err
		}
	}
	fn("") // (re)connected: something may have been missed
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		fn(n.Channel)
	}
}

// WakeSearchIndexer notifies the process holding the index that archives
// wait to be indexed.
func (s *Store) WakeSearchIndexer(ctx context.Context) error {
	_, err := s.Pool.Exec(ctx, `SELECT pg_notify('ledger_search_index', '')`)
	return err
}
