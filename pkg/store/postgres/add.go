package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// AddOutcome is what AddCapture did with one capture.
type AddOutcome int

const (
	// AddRegistered: the submission (when new), the archives row and its
	// outbox row were written.
	AddRegistered AddOutcome = iota
	// AddKnown: the archive's object, or an archive of the same task, is
	// already in the ledger; nothing was written.
	AddKnown
	// AddNoArchive: the capture has no archive; only the submission was
	// recorded (nothing when it already was).
	AddNoArchive
	// AddOtherOrganization: the task is recorded for another organization;
	// nothing was written.
	AddOtherOrganization
	// AddOtherCorrelation: the task is recorded for this organization with
	// a correlation the manifest does not carry; nothing was written.
	AddOtherCorrelation
)

// AddedCapture is the result of AddCapture.
type AddedCapture struct {
	Outcome AddOutcome
	// ArchiveID is the archive registered (AddRegistered) or found
	// (AddKnown).
	ArchiveID string
	// Recorded is the submission already recorded for the task, nil when
	// there was none. For AddOtherOrganization and AddOtherCorrelation it
	// says whose task it is.
	Recorded *RecordedSubmission
}

// RecordedSubmission is what capture_submissions already says of a task.
type RecordedSubmission struct {
	OrgID         string
	SubmittedBy   *string
	CorrelationID *string
}

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
// writes nothing either, not even the submission.
func (s *Store) AddCapture(ctx context.Context, sub NewSubmission, a *NewArchive, tuples func(archiveID string, submittedBy *string) ledger.OutboxPayload) (AddedCapture, error) {
	var res AddedCapture
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		res = AddedCapture{}
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
			var rec RecordedSubmission
			if err := tx.QueryRow(ctx, `SELECT org_id, submitted_by, correlation_id FROM capture_submissions WHERE task_id = $1 FOR SHARE`,
				sub.TaskID).Scan(&rec.OrgID, &rec.SubmittedBy, &rec.CorrelationID); err != nil {
				return fmt.Errorf("read capture submission: %w", err)
			}
			res.Recorded = &rec
			if rec.OrgID != sub.OrgID {
				res.Outcome = AddOtherOrganization
				return errNothingWritten
			}
			if rec.CorrelationID != nil && *rec.CorrelationID != "" &&
				(sub.CorrelationID == nil || !strings.EqualFold(*rec.CorrelationID, *sub.CorrelationID)) {
				res.Outcome = AddOtherCorrelation
				return errNothingWritten
			}
			submittedBy = rec.SubmittedBy
		}
		if a == nil {
			res.Outcome = AddNoArchive
			return nil
		}
		err = tx.QueryRow(ctx, `
			SELECT id::text FROM archives
			WHERE (bucket = $1 AND object_key = $2) OR task_id = $3::uuid
			ORDER BY (bucket = $1 AND object_key = $2) DESC, created_at LIMIT 1`,
			a.Bucket, a.ObjectKey, a.TaskID).Scan(&res.ArchiveID)
		switch {
		case err == nil:
			res.Outcome = AddKnown
			return errNothingWritten
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("look up archive: %w", err)
		}
		idx, err := insertArchives(ctx, tx, []NewArchive{*a}, func(_ int, archiveID string) ledger.OutboxPayload {
			res.ArchiveID = archiveID
			return tuples(archiveID, submittedBy)
		})
		if err != nil {
			return err
		}
		if len(idx) == 0 {
			// Registered by someone else between the look-up and the insert.
			res.Outcome = AddKnown
			return errNothingWritten
		}
		res.Outcome = AddRegistered
		return nil
	})
	if errors.Is(err, errNothingWritten) {
		return res, nil
	}
	if err != nil {
		return AddedCapture{}, err
	}
	return res, nil
}
