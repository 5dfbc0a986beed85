package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

const targetCols = `id, org_id, url, labels, enabled, created_at, updated_at`

// EnabledTargetURLs returns the URLs of org's enabled targets in id order,
// at most limit of them (all when limit <= 0).
func (s *Store) EnabledTargetURLs(ctx context.Context, org string, limit int) ([]string, error) {
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.Pool.Query(ctx, `SELECT url FROM capture_targets WHERE enabled AND org_id = $1 ORDER BY id LIMIT $2`, org, lim)
	if err != nil {
		return nil, fmt.Errorf("read capture targets: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// UpsertTargets adds org's targets at urls (normalised, distinct) with
// labels. A URL org already has is enabled again and gains the labels it
// lacks; its existing labels are kept.
func (s *Store) UpsertTargets(ctx context.Context, org string, urls, labels []string) ([]ledger.TargetUpsert, error) {
	if labels == nil {
		labels = []string{}
	}
	rows, err := s.Pool.Query(ctx, `
		WITH input AS (SELECT u, i FROM unnest($2::text[]) WITH ORDINALITY AS x(u, i)),
		prev AS (SELECT t.url, t.enabled FROM capture_targets t JOIN input ON t.org_id = $1 AND t.url_hash = digest(input.u, 'sha256')),
		up AS (
			INSERT INTO capture_targets AS t (org_id, url, labels)
			SELECT $1, u, $3::text[] FROM input ORDER BY i
			ON CONFLICT (org_id, url_hash) DO UPDATE
			SET enabled = true,
			    labels = t.labels || ARRAY(SELECT l FROM unnest(EXCLUDED.labels) l WHERE NOT l = ANY (t.labels)),
			    updated_at = CASE WHEN t.enabled AND EXCLUDED.labels <@ t.labels THEN t.updated_at ELSE now() END
			RETURNING t.id, t.org_id, t.url, t.labels, t.enabled, t.created_at, t.updated_at
		)
		SELECT up.*, prev.enabled IS NULL, coalesce(NOT prev.enabled, false)
		FROM up LEFT JOIN prev ON prev.url = up.url ORDER BY up.id`, org, urls, labels)
	if err != nil {
		return nil, fmt.Errorf("add capture targets: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.TargetUpsert, error) {
		var u ledger.TargetUpsert
		err := r.Scan(&u.ID, &u.OrgID, &u.URL, &u.Labels, &u.Enabled, &u.CreatedAt, &u.UpdatedAt, &u.Inserted, &u.Reenabled)
		return u, err
	})
}

// ListTargets returns org's targets in id order.
func (s *Store) ListTargets(ctx context.Context, org string) ([]ledger.Target, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+targetCols+` FROM capture_targets WHERE org_id = $1 ORDER BY id`, org)
	if err != nil {
		return nil, fmt.Errorf("list capture targets: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.Target])
}

// SetTargetEnabled enables or disables org's target id, or returns
// ledger.ErrNotFound.
func (s *Store) SetTargetEnabled(ctx context.Context, org string, id int64, enabled bool) (ledger.Target, error) {
	rows, err := s.Pool.Query(ctx, `
		UPDATE capture_targets SET enabled = $3, updated_at = CASE WHEN enabled = $3 THEN updated_at ELSE now() END
		WHERE org_id = $1 AND id = $2 RETURNING `+targetCols, org, id, enabled)
	if err != nil {
		return ledger.Target{}, fmt.Errorf("update capture target: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[ledger.Target])
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Target{}, ledger.ErrNotFound
	}
	return t, err
}

// DeleteTarget removes org's target id, or returns ledger.ErrNotFound.
func (s *Store) DeleteTarget(ctx context.Context, org string, id int64) error {
	tag, err := s.Pool.Exec(ctx, `DELETE FROM capture_targets WHERE org_id = $1 AND id = $2`, org, id)
	if err != nil {
		return fmt.Errorf("remove capture target: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return ledger.ErrNotFound
	}
	return nil
}
