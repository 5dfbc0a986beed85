package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// tombstoneCols are the columns scanTombstone reads, in order.
const tombstoneCols = `archive_id::text, task_id::text, bucket, object_key, source_url, captured_at, deleted_by, deleted_at,
	object_keys, objects_deleted_at, attempts, last_error`

func scanTombstone(r pgx.CollectableRow) (ledger.Tombstone, error) {
	var t ledger.Tombstone
	err := r.Scan(&t.ArchiveID, &t.TaskID, &t.Bucket, &t.ObjectKey, &t.SourceURL, &t.CapturedAt, &t.DeletedBy, &t.DeletedAt,
		&t.ObjectKeys, &t.ObjectsDeletedAt, &t.Attempts, &t.LastError)
	return t, err
}

// maxTuplesPerRow is how many tuples one outbox row carries: OpenFGA takes
// at most 100 in one Write, and a row that deletes is delivered on its own.
const maxTuplesPerRow = 100

// TombstoneArchive deletes archive id from the ledger in one transaction:
// it locks the row, reads what plan needs (the row, its task's submission,
// the shares whose tuples are in OpenFGA), ends those shares as
// "archive-deleted" by by at at, writes the tombstone with the object keys
// plan chose, removes the archives row, and queues the deletes of plan's
// tuples. Removing the objects is the caller's next step (MarkObjectsDeleted
// records it); until then the tombstone is pending.
//
// An archive already deleted returns its tombstone with created false, so a
// second call finishes what the first left undone. ledger.ErrNotFound when
// there is neither an archive nor a tombstone. An error of plan rolls
// everything back.
func (s *Store) TombstoneArchive(ctx context.Context, id, by string, at time.Time, plan func(ledger.DeletingArchive) (ledger.DeletePlan, error)) (tomb ledger.Tombstone, created bool, err error) {
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		a := ledger.DeletingArchive{ID: id}
		err := tx.QueryRow(ctx, `SELECT task_id::text, bucket, object_key, source_url, captured_at FROM archives WHERE id = $1 FOR UPDATE`, id).
			Scan(&a.TaskID, &a.Bucket, &a.ObjectKey, &a.SourceURL, &a.CapturedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			rows, err := tx.Query(ctx, `SELECT `+tombstoneCols+` FROM archive_tombstones WHERE archive_id = $1`, id)
			if err != nil {
				return err
			}
			tomb, err = pgx.CollectExactlyOneRow(rows, scanTombstone)
			if errors.Is(err, pgx.ErrNoRows) {
				return ledger.ErrNotFound
			}
			return err
		}
		if err != nil {
			return fmt.Errorf("read archive: %w", err)
		}
		var sub ledger.DeletingSubmission
		err = tx.QueryRow(ctx, `SELECT org_id, submitted_by, manifest_key FROM capture_submissions WHERE task_id = $1`, a.TaskID).
			Scan(&sub.OrgID, &sub.SubmittedBy, &sub.ManifestKey)
		switch {
		case err == nil:
			a.Submission = &sub
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("read submission: %w", err)
		}
		rows, err := tx.Query(ctx, `
			UPDATE shares SET revoked_at = $2, revoked_by = $3, revoke_reason = 'archive-deleted'
			WHERE archive_id = $1 AND revoked_at IS NULL RETURNING `+shareCols, id, at, by)
		if err != nil {
			return fmt.Errorf("end shares: %w", err)
		}
		if a.Shares, err = pgx.CollectRows(rows, scanShare); err != nil {
			return fmt.Errorf("end shares: %w", err)
		}
		p, err := plan(a)
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx, `
			INSERT INTO archive_tombstones (archive_id, task_id, bucket, object_key, source_url, captured_at, deleted_by, deleted_at, object_keys)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			RETURNING `+tombstoneCols,
			id, a.TaskID, a.Bucket, a.ObjectKey, a.SourceURL, a.CapturedAt, by, at, p.ObjectKeys)
		if err != nil {
			return fmt.Errorf("write tombstone: %w", err)
		}
		if tomb, err = pgx.CollectExactlyOneRow(rows, scanTombstone); err != nil {
			return fmt.Errorf("write tombstone: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM archives WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete archive: %w", err)
		}
		for start := 0; start < len(p.Tuples); start += maxTuplesPerRow {
			if err := queue(ctx, tx, ledger.OutboxPayload{Deletes: p.Tuples[start:min(start+maxTuplesPerRow, len(p.Tuples))]}); err != nil {
				return err
			}
		}
		created = true
		return nil
	})
	return tomb, created, err
}

// PendingTombstone returns the tombstone of archive id when by deleted it
// and its objects are not all removed yet, else ledger.ErrNotFound.
func (s *Store) PendingTombstone(ctx context.Context, id, by string) (ledger.Tombstone, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+tombstoneCols+` FROM archive_tombstones
		WHERE archive_id = $1 AND deleted_by = $2 AND objects_deleted_at IS NULL`, id, by)
	if err != nil {
		return ledger.Tombstone{}, err
	}
	t, err := pgx.CollectExactlyOneRow(rows, scanTombstone)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Tombstone{}, ledger.ErrNotFound
	}
	return t, err
}

// PendingTombstones returns up to limit tombstones whose objects are not all
// removed, oldest deletion first.
func (s *Store) PendingTombstones(ctx context.Context, limit int) ([]ledger.Tombstone, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+tombstoneCols+` FROM archive_tombstones
		WHERE objects_deleted_at IS NULL ORDER BY deleted_at, archive_id LIMIT $1`, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanTombstone)
}

// MarkObjectsDeleted records that every object of the tombstone is gone.
func (s *Store) MarkObjectsDeleted(ctx context.Context, id string, at time.Time) error {
	_, err := s.Pool.Exec(ctx, `UPDATE archive_tombstones SET objects_deleted_at = $2, last_error = NULL
		WHERE archive_id = $1 AND objects_deleted_at IS NULL`, id, at)
	return err
}

// RecordObjectsFailure records a failed attempt at removing the objects; the
// tombstone stays pending.
func (s *Store) RecordObjectsFailure(ctx context.Context, id, msg string) error {
	_, err := s.Pool.Exec(ctx, `UPDATE archive_tombstones SET attempts = attempts + 1, last_error = $2
		WHERE archive_id = $1 AND objects_deleted_at IS NULL`, id, msg)
	return err
}
