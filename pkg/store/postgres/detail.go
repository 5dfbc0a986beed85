package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// ArchiveDetail returns archive id, its organization (the capture's
// submission's, else the one recorded as its grantee) and the reasons the
// ledger recorded for v to see it — the organizations of v among its
// grantees, v as its owner, shares to v or v's organizations active at
// now — or ledger.ErrNotFound. One query, whoever asks: the reasons are
// read for an absent id too.
func (s *Store) ArchiveDetail(ctx context.Context, v ledger.Viewer, id string, now time.Time) (ledger.Candidate, string, error) {
	orgs := v.Orgs
	if orgs == nil {
		orgs = []string{}
	}
	var c ledger.Candidate
	var org *string
	var why []byte
	err := s.Pool.QueryRow(ctx, `
		WITH c AS (
			SELECT 'organization' AS kind, principal AS org, NULL::timestamptz AS until, NULL::text AS share_id
			FROM archive_sources WHERE archive_id = $1 AND kind = 'organization' AND principal = ANY($2::text[])
			UNION ALL
			SELECT 'owner', NULL, NULL, NULL
			FROM archive_sources WHERE archive_id = $1 AND kind = 'owner' AND principal = $3
			UNION ALL
			SELECT 'share', CASE sh.grantee_type WHEN 'organization' THEN sh.grantee END, sh.expires_at, sh.id::text
			FROM shares sh
			WHERE sh.archive_id = $1 AND sh.revoked_at IS NULL AND sh.expires_at > $4
			  AND ((sh.grantee_type = 'user' AND sh.grantee = $3) OR (sh.grantee_type = 'organization' AND sh.grantee = ANY($2::text[])))
		)
		SELECT a.id::text, a.task_id::text, a.source_url, a.title, a.labels, a.wacz_complete, a.captured_at, a.object_key, a.bucket,
		       COALESCE((SELECT org_id FROM capture_submissions WHERE task_id = a.task_id),
		                (SELECT min(principal) FROM archive_sources WHERE archive_id = a.id AND kind = 'organization')),
		       COALESCE((SELECT jsonb_agg(jsonb_build_object('kind', c.kind, 'organization', c.org, 'until', c.until, 'shareId', c.share_id)
		                 ORDER BY c.kind, c.org, c.share_id) FROM c), '[]'::jsonb)
		FROM archives a WHERE a.id = $1`,
		id, orgs, v.Subject, now.Add(-shareSlack)).Scan(&c.ID, &c.TaskID, &c.SourceURL, &c.Title, &c.Labels, &c.WaczComplete, &c.CapturedAt, &c.ObjectKey, &c.Bucket, &org, &why)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Candidate{}, "", ledger.ErrNotFound
	}
	if err != nil {
		return ledger.Candidate{}, "", fmt.Errorf("read archive: %w", err)
	}
	if err := json.Unmarshal(why, &c.Reasons); err != nil {
		return ledger.Candidate{}, "", fmt.Errorf("read archive reasons: %w", err)
	}
	if org == nil {
		return c, "", nil
	}
	return c, *org, nil
}
