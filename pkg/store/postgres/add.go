package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// errNothingWritten rolls AddCapture's transaction back on purpose.
var errNothingWritten = errors.New("nothing to write")

// AddCapture records the submission sub and admits the archive a (nil for a
// capture without one) in one transaction, with the same admission as level
// reports and reconcile (insertArchives): the archives row and the outbox
// row carrying tuples(archiveID, submittedBy) are written together.
//
// A task already recorded is never taken over: recorded for another
// organization, or with a correlation other than sub's, nothing is written;
// recorded for sub's organization, the recorded row stands (it is not
// rewritten) and its submitter is the one passed to tuples. An archive
// already in the ledger at a's (bucket, object_key), or for the same task,
// writes nothing either, not even the submission; so does a tombstoned one
// (a deleted archive's object key or task).
func (s *Store) AddCapture(ctx context.Context, sub ledger.NewSubmission, a *ledger.NewArchive, tuples func(archiveID string, submittedBy *string) ledger.OutboxPayload) (ledger.AddedCapture, error) {
	var res ledger.AddedCapture
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		res = ledger.AddedCapture{}
		if a != nil {
			// A deleted archive's object key or task is never registered
			// again (its tombstone says who deleted it, and when).
			err := tx.QueryRow(ctx, `SELECT archive_id::text FROM archive_tombstones
				WHERE (bucket = $1 AND object_key = $2) OR task_id = $3::uuid ORDER BY deleted_at LIMIT 1`,
				a.Bucket, a.ObjectKey, a.TaskID).Scan(&res.ArchiveID)
			switch {
			case err == nil:
				res.Outcome = ledger.AddTombstoned
				return errNothingWritten
			case !errors.Is(err, pgx.ErrNoRows):
				return fmt.Errorf("look up tombstone: %w", err)
			}
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO capture_submissions (task_id, correlation_id, org_id, submitted_by, manifest_key, manifest_error)
			VALUES ($1, $2, $3, $4, $5, $6)
			ON CONFLICT (task_id) DO NOTHING`,
			sub.TaskID, sub.CorrelationID, sub.OrgID, sub.SubmittedBy, sub.ManifestKey, sub.ManifestError)
		if err != nil {
			return fmt.Errorf("record capture submission: %w", err)
		}
		submittedBy := sub.SubmittedBy
		if tag.RowsAffected() == 0 {
			// Recorded before (a level report, an earlier add): that row
			// decides, and a concurrent writer has committed by now.
			var rec ledger.RecordedSubmission
			if err := tx.QueryRow(ctx, `SELECT org_id, submitted_by, correlation_id FROM capture_submissions WHERE task_id = $1 FOR SHARE`,
				sub.TaskID).Scan(&rec.OrgID, &rec.SubmittedBy, &rec.CorrelationID); err != nil {
				return fmt.Errorf("read capture submission: %w", err)
			}
			res.Recorded = &rec
			if rec.OrgID != sub.OrgID {
				res.Outcome = ledger.AddOtherOrganization
				return errNothingWritten
			}
			if rec.CorrelationID != nil && *rec.CorrelationID != "" &&
				(sub.CorrelationID == nil || !strings.EqualFold(*rec.CorrelationID, *sub.CorrelationID)) {
				res.Outcome = ledger.AddOtherCorrelation
				return errNothingWritten
			}
			submittedBy = rec.SubmittedBy
		}
		if a == nil {
			res.Outcome = ledger.AddNoArchive
			return nil
		}
		err = tx.QueryRow(ctx, `
			SELECT id::text FROM archives
			WHERE (bucket = $1 AND object_key = $2) OR task_id = $3::uuid
			ORDER BY (bucket = $1 AND object_key = $2) DESC, created_at LIMIT 1`,
			a.Bucket, a.ObjectKey, a.TaskID).Scan(&res.ArchiveID)
		switch {
		case err == nil:
			res.Outcome = ledger.AddKnown
			return errNothingWritten
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("look up archive: %w", err)
		}
		idx, err := insertArchives(ctx, tx, []ledger.NewArchive{*a}, func(_ int, archiveID string) ledger.OutboxPayload {
			res.ArchiveID = archiveID
			return tuples(archiveID, submittedBy)
		})
		if err != nil {
			return err
		}
		if len(idx) == 0 {
			// Registered by someone else between the look-up and the insert.
			res.Outcome = ledger.AddKnown
			return errNothingWritten
		}
		res.Outcome = ledger.AddRegistered
		return nil
	})
	if errors.Is(err, errNothingWritten) {
		return res, nil
	}
	if err != nil {
		return ledger.AddedCapture{}, err
	}
	return res, nil
}
