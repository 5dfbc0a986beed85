package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// shareCols are the columns scanShare reads, in order.
const shareCols = `id::text, archive_id::text, grantee_type, grantee, granted_by, granted_at, duration_s,
	expires_at, revoked_at, revoked_by, revoke_reason, replaced_by::text`

func scanShare(r pgx.CollectableRow) (ledger.ShareRow, error) {
	var s ledger.ShareRow
	var typ string
	var secs int64
	err := r.Scan(&s.ID, &s.ArchiveID, &typ, &s.Grantee.ID, &s.GrantedBy, &s.GrantedAt, &secs,
		&s.ExpiresAt, &s.RevokedAt, &s.RevokedBy, &s.RevokeReason, &s.ReplacedBy)
	s.Grantee.Type = ledger.GranteeType(typ)
	s.Duration = time.Duration(secs) * time.Second
	return s, err
}

// queue inserts one outbox row carrying p (nothing when p is empty).
func queue(ctx context.Context, tx pgx.Tx, p ledger.OutboxPayload) error {
	if len(p.Writes) == 0 && len(p.Deletes) == 0 {
		return nil
	}
	data, err := json.Marshal(p)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO fga_outbox (payload) VALUES ($1::jsonb)`, string(data)); err != nil {
		return fmt.Errorf("queue tuples: %w", err)
	}
	return nil
}

// lockArchive takes the archive row's lock for the rest of tx, so shares and
// the deletion of one archive happen one at a time; ledger.ErrNotFound when
// the archive is not (or no longer) in the ledger.
func lockArchive(ctx context.Context, tx pgx.Tx, id string) error {
	var one int
	err := tx.QueryRow(ctx, `SELECT 1 FROM archives WHERE id = $1 FOR UPDATE`, id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.ErrNotFound
	}
	return err
}

// GrantShare records s and queues its tuple, in one transaction with the
// archive's row locked (ledger.ErrNotFound when the archive is absent). A
// share to the same grantee whose tuple is still in OpenFGA (active, or
// expired but never removed) ends as replaced by the new one, and the delete
// of that tuple (del) is queued before the write of the new one (write):
// OpenFGA holds one tuple per grantee and archive, and refuses to write it
// again with another condition. The outbox delivers rows in order, and a row
// that deletes on its own.
func (s *Store) GrantShare(ctx context.Context, sh ledger.NewShare, write, del ledger.OutboxPayload) (ledger.ShareRow, []ledger.ShareRow, error) {
	var row ledger.ShareRow
	var replaced []ledger.ShareRow
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := lockArchive(ctx, tx, sh.ArchiveID); err != nil {
			return err
		}
		id := uuid.NewString()
		rows, err := tx.Query(ctx, `
			UPDATE shares SET revoked_at = $4, revoked_by = $5, revoke_reason = 'replaced', replaced_by = $6
			WHERE archive_id = $1 AND grantee_type = $2 AND grantee = $3 AND revoked_at IS NULL
			RETURNING `+shareCols,
			sh.ArchiveID, string(sh.Grantee.Type), sh.Grantee.ID, sh.GrantedAt, sh.GrantedBy, id)
		if err != nil {
			return fmt.Errorf("replace share: %w", err)
		}
		if replaced, err = pgx.CollectRows(rows, scanShare); err != nil {
			return fmt.Errorf("replace share: %w", err)
		}
		if len(replaced) > 0 {
			if err := queue(ctx, tx, del); err != nil {
				return err
			}
		}
		rows, err = tx.Query(ctx, `
			INSERT INTO shares (id, archive_id, grantee_type, grantee, granted_by, granted_at, duration_s, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6::timestamptz, $7::bigint, $6::timestamptz + make_interval(secs => $7::bigint))
			RETURNING `+shareCols,
			id, sh.ArchiveID, string(sh.Grantee.Type), sh.Grantee.ID, sh.GrantedBy, sh.GrantedAt, int64(sh.Duration/time.Second))
		if err != nil {
			return fmt.Errorf("record share: %w", err)
		}
		if row, err = pgx.CollectExactlyOneRow(rows, scanShare); err != nil {
			return fmt.Errorf("record share: %w", err)
		}
		return queue(ctx, tx, write)
	})
	if err != nil {
		return ledger.ShareRow{}, nil, err
	}
	return row, replaced, nil
}

// RevokeShare ends share id as revoked by by at at, and queues the delete
// of its tuple (del(row)), in one transaction. A share already ended
// (revoked, replaced, its archive deleted) is left as it is: changed is
// false. ledger.ErrNotFound when there is no such share.
func (s *Store) RevokeShare(ctx context.Context, id, by string, at time.Time, del func(ledger.ShareRow) ledger.OutboxPayload) (row ledger.ShareRow, changed bool, err error) {
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+shareCols+` FROM shares WHERE id = $1 FOR UPDATE`, id)
		if err != nil {
			return err
		}
		row, err = pgx.CollectExactlyOneRow(rows, scanShare)
		if errors.Is(err, pgx.ErrNoRows) {
			return ledger.ErrNotFound
		}
		if err != nil || row.RevokedAt != nil {
			return err
		}
		rows, err = tx.Query(ctx, `
			UPDATE shares SET revoked_at = $2, revoked_by = $3, revoke_reason = 'revoked'
			WHERE id = $1 RETURNING `+shareCols, id, at, by)
		if err != nil {
			return fmt.Errorf("revoke share: %w", err)
		}
		if row, err = pgx.CollectExactlyOneRow(rows, scanShare); err != nil {
			return fmt.Errorf("revoke share: %w", err)
		}
		changed = true
		return queue(ctx, tx, del(row))
	})
	return row, changed, err
}

// Share returns share id, or ledger.ErrNotFound.
func (s *Store) Share(ctx context.Context, id string) (ledger.ShareRow, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+shareCols+` FROM shares WHERE id = $1`, id)
	if err != nil {
		return ledger.ShareRow{}, err
	}
	row, err := pgx.CollectExactlyOneRow(rows, scanShare)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.ShareRow{}, ledger.ErrNotFound
	}
	return row, err
}

// Shares returns every share of an archive, newest first.
func (s *Store) Shares(ctx context.Context, archiveID string) ([]ledger.ShareRow, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+shareCols+` FROM shares WHERE archive_id = $1 ORDER BY granted_at DESC, id DESC`, archiveID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanShare)
}

// SharesBefore returns up to limit shares of any archive strictly after
// cursor, newest first (from the newest when cursor is nil).
func (s *Store) SharesBefore(ctx context.Context, cursor *ledger.ShareCursor, limit int) ([]ledger.ShareRow, error) {
	var rows pgx.Rows
	var err error
	if cursor == nil {
		rows, err = s.Pool.Query(ctx, `SELECT `+shareCols+` FROM shares ORDER BY granted_at DESC, id DESC LIMIT $1`, limit)
	} else {
		rows, err = s.Pool.Query(ctx, `SELECT `+shareCols+` FROM shares WHERE (granted_at, id) < ($1, $2::uuid)
			ORDER BY granted_at DESC, id DESC LIMIT $3`, cursor.GrantedAt, cursor.ID, limit)
	}
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanShare)
}

// ShareOrganizations is every organization the ledger recorded as an
// archive's (a capture job's parent): the organizations whose archives can
// have shares an admin of theirs may list.
func (s *Store) ShareOrganizations(ctx context.Context) ([]string, error) {
	rows, err := s.Pool.Query(ctx, `SELECT DISTINCT principal FROM job_sources WHERE kind = 'organization' ORDER BY principal`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// SharesWithin is SharesBefore restricted to the shares of archives the
// ledger recorded for one of orgs or as owned by owner: newest grant first,
// after cursor when it is not nil. The shares of other organizations'
// archives are not returned, so they cannot fill a page.
func (s *Store) SharesWithin(ctx context.Context, orgs []string, owner string, cursor *ledger.ShareCursor, limit int) ([]ledger.ShareRow, error) {
	if orgs == nil {
		orgs = []string{}
	}
	var at any
	var id any
	if cursor != nil {
		at, id = cursor.GrantedAt, cursor.ID
	}
	rows, err := s.Pool.Query(ctx, `SELECT `+shareCols+` FROM shares sh
		WHERE EXISTS (SELECT 1 FROM archive_sources a WHERE a.archive_id = sh.archive_id
			AND ((a.kind = 'organization' AND a.principal = ANY($1::text[])) OR (a.kind = 'owner' AND a.principal = $2)))
		  AND ($3::timestamptz IS NULL OR (sh.granted_at, sh.id) < ($3::timestamptz, $4::uuid))
		ORDER BY sh.granted_at DESC, sh.id DESC LIMIT $5`, orgs, owner, at, id, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanShare)
}

// ArchiveExists reports whether archive id is in the ledger.
func (s *Store) ArchiveExists(ctx context.Context, id string) (bool, error) {
	var ok bool
	err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM archives WHERE id = $1)`, id).Scan(&ok)
	return ok, err
}
