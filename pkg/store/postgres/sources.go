package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// jobSource is one grantee of a capture_job, as a tuple queued for it says.
type jobSource struct {
	TaskID    string `json:"task_id"`
	Kind      string `json:"kind"`
	Principal string `json:"principal"`
}

// jobSources reads the grantees of capture_job tuples out of payloads: the
// organization of "organization:<o> parent capture_job:<task>" and the user
// of "user:<u> owner capture_job:<task>". Other tuples grant nothing on a
// job and are ignored.
func jobSources(payloads []ledger.OutboxPayload) []jobSource {
	var out []jobSource
	for _, p := range payloads {
		for _, t := range p.Writes {
			task, kind, principal, ok := ledger.JobGrant(t)
			if !ok || uuid.Validate(task) != nil {
				continue
			}
			out = append(out, jobSource{task, kind, principal})
		}
	}
	return out
}

// recordSources records, in tx, the job grantees the payloads queue and
// gives every archive of those jobs every grantee its job has (the list's
// candidates; migrations/000008_list_sources.up.sql). The jobs are locked
// first, in order, so that two admissions of one job at once cannot each
// miss the other's archive. fresh are the archives tx inserted: they wait
// to be indexed already, and nobody else sees them yet.
func recordSources(ctx context.Context, tx pgx.Tx, payloads []ledger.OutboxPayload, fresh []string) error {
	src := jobSources(payloads)
	if len(src) == 0 {
		return nil
	}
	tasks := make([]string, 0, len(src))
	for _, s := range src {
		tasks = append(tasks, strings.ToLower(s.TaskID))
	}
	slices.Sort(tasks)
	tasks = slices.Compact(tasks)
	data, err := json.Marshal(src)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `
		SELECT pg_advisory_xact_lock(hashtextextended('job_sources:' || t, 0))
		FROM unnest($1::text[]) AS t ORDER BY t`, tasks); err != nil {
		return fmt.Errorf("record list sources: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO job_sources (task_id, kind, principal)
		SELECT DISTINCT task_id, kind, principal
		FROM jsonb_to_recordset($1::jsonb) AS x(task_id uuid, kind text, principal text)
		ON CONFLICT DO NOTHING`, string(data)); err != nil {
		return fmt.Errorf("record list sources: %w", err)
	}
	// An archive that gains a grantee is indexed again: its pages in the
	// search index carry the grantees it had when indexed (see
	// Store.SearchScope). The update is unconditional so that it takes the
	// row's lock even while the indexer is at work on the archive (whose
	// MarkIndexed then waits for this transaction, and whose re-read of
	// the grantees sees this one's). An archive of this transaction is
	// left alone: no indexer can be at work on it, and writing its row
	// again would leave a dead version of it in the table and each index.
	if _, err := tx.Exec(ctx, `
		WITH gained AS (
			INSERT INTO archive_sources (archive_id, captured_at, kind, principal)
			SELECT a.id, a.captured_at, j.kind, j.principal
			FROM job_sources j JOIN archives a ON a.task_id = j.task_id
			WHERE j.task_id = ANY($1::uuid[])
			ON CONFLICT DO NOTHING
			RETURNING archive_id)
		UPDATE archives SET indexed_at = NULL
		WHERE id IN (SELECT archive_id FROM gained) AND id <> ALL(coalesce($2::uuid[], '{}'))`, tasks, fresh); err != nil {
		return fmt.Errorf("record list sources: %w", err)
	}
	return nil
}

// shareSlack widens "not yet expired" for candidates: a share that ends
// while the page is read is still asked about (OpenFGA decides).
const shareSlack = time.Minute

// CandidatesBefore returns up to limit archives strictly after cursor in
// newest-first order (from the top when cursor is nil) that the ledger
// recorded a grantee of for v: its organizations' and its own archives, and
// those shared with it or one of its organizations and not expired at now.
// Each row carries those reasons. A superset of what v may view, if every
// tuple granting can_view went through the ledger; OpenFGA decides.
func (s *Store) CandidatesBefore(ctx context.Context, v ledger.Viewer, f ledger.ArchiveFilter, cursor *ledger.ArchiveCursor, limit int, now time.Time) ([]ledger.Candidate, error) {
	at, id := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), "ffffffff-ffff-ffff-ffff-ffffffffffff"
	if cursor != nil {
		at, id = cursor.CapturedAt, cursor.ID
	}
	orgs := v.Orgs
	if orgs == nil {
		orgs = []string{}
	}
	args := []any{orgs, v.Subject, at, id, limit, now.Add(-shareSlack)}
	// Without a filter the grantees' ranges are read alone; with one, each
	// row is joined to its archive to test it.
	sources := `SELECT s.archive_id, s.captured_at FROM archive_sources s
				WHERE s.kind = g.kind AND s.principal = g.principal AND (s.captured_at, s.archive_id) < ($3, $4::uuid)`
	if !f.IsZero() {
		sources = `SELECT s.archive_id, s.captured_at FROM archive_sources s JOIN archives a ON a.id = s.archive_id
				WHERE s.kind = g.kind AND s.principal = g.principal AND (s.captured_at, s.archive_id) < ($3, $4::uuid)` +
			archiveFilterSQL(f, "a", &args)
	}
	shareFilter := archiveFilterSQL(f, "a", &args)
	// Each grantee and the shares are one index range each, newest first,
	// at most limit rows; the union is merged, grouped by archive and cut to
	// limit.
	rows, err := s.Pool.Query(ctx, `
		WITH c AS (
			SELECT x.archive_id, x.captured_at, g.kind, CASE g.kind WHEN 'organization' THEN g.principal END AS org,
			       NULL::timestamptz AS until, NULL::text AS share_id
			FROM ledger_viewer_grantees($1::text[], $2) g, LATERAL (
				`+sources+`
				ORDER BY s.captured_at DESC, s.archive_id DESC LIMIT $5) x
			UNION ALL
			(SELECT a.id, a.captured_at, 'share', CASE sh.grantee_type WHEN 'organization' THEN sh.grantee END, sh.expires_at, sh.id::text
			 FROM ledger_active_shares($1::text[], $2, $6) sh JOIN archives a ON a.id = sh.archive_id
			 WHERE (a.captured_at, a.id) < ($3, $4::uuid)`+shareFilter+`
			 ORDER BY a.captured_at DESC, a.id DESC LIMIT $5)
		), top AS (
			SELECT archive_id, captured_at FROM c GROUP BY archive_id, captured_at
			ORDER BY captured_at DESC, archive_id DESC LIMIT $5
		)
		SELECT a.id::text, a.task_id::text, a.source_url, a.title, a.labels, a.wacz_complete, a.captured_at, a.object_key, a.bucket,
		       (SELECT jsonb_agg(jsonb_build_object('kind', c.kind, 'organization', c.org, 'until', c.until, 'shareId', c.share_id)
		               ORDER BY c.kind, c.org, c.share_id)
		        FROM c WHERE c.archive_id = top.archive_id)
		FROM top JOIN archives a ON a.id = top.archive_id
		ORDER BY top.captured_at DESC, top.archive_id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("list candidates: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Candidate, error) {
		var c ledger.Candidate
		var why []byte
		err := r.Scan(&c.ID, &c.TaskID, &c.SourceURL, &c.Title, &c.Labels, &c.WaczComplete, &c.CapturedAt, &c.ObjectKey, &c.Bucket, &why)
		if err == nil {
			err = json.Unmarshal(why, &c.Reasons)
		}
		return c, err
	})
}

// archiveFilterSQL is f as conditions on the archives row alias a, each
// starting with " AND ", its values appended to args as parameters.
func archiveFilterSQL(f ledger.ArchiveFilter, a string, args *[]any) string {
	var b strings.Builder
	add := func(cond string, v any) {
		*args = append(*args, v)
		b.WriteString(" AND " + strings.ReplaceAll(cond, "$?", fmt.Sprintf("$%d", len(*args))))
	}
	if !f.From.IsZero() {
		add(a+".captured_at >= $?", f.From)
	}
	if !f.To.IsZero() {
		add(a+".captured_at < $?", f.To)
	}
	if f.Host != "" {
		add("ledger_url_host("+a+".source_url) = $?", f.Host)
	}
	if f.CrawlID != "" {
		add("EXISTS (SELECT 1 FROM crawl_pages p WHERE p.crawl_id = $?::uuid AND p.task_id = "+a+".task_id::text)", f.CrawlID)
	}
	if f.Text != "" {
		add("(strpos(lower("+a+".source_url), lower($?::text)) > 0 OR strpos(lower("+a+".title), lower($?::text)) > 0)", f.Text)
	}
	return b.String()
}

// MatchingArchives is which of ids pass f (search's filters, asked by id
// before OpenFGA). Ids that are not UUIDs never pass.
func (s *Store) MatchingArchives(ctx context.Context, f ledger.ArchiveFilter, ids []string) (map[string]bool, error) {
	valid := archiveIDs(ids)
	args := []any{valid}
	return s.idSet(ctx, "filter archives", valid, `SELECT a.id::text FROM archives a WHERE a.id = ANY($1::uuid[])`+archiveFilterSQL(f, "a", &args), args...)
}

// archiveIDs keeps the ids that are UUIDs: no other id names an archive.
func archiveIDs(ids []string) []string {
	valid := make([]string, 0, len(ids))
	for _, id := range ids {
		if uuid.Validate(id) == nil {
			valid = append(valid, id)
		}
	}
	return valid
}

// idSet runs query, which answers ids, and returns them as a set; with no
// valid id it asks nothing. what names the lookup in errors.
func (s *Store) idSet(ctx context.Context, what string, valid []string, query string, args ...any) (map[string]bool, error) {
	out := make(map[string]bool, len(valid))
	if len(valid) == 0 {
		return out, nil
	}
	rows, err := s.Pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	for _, id := range got {
		out[id] = true
	}
	return out, nil
}

// RecordedFor is which of ids the ledger recorded a grantee of for v (the
// list's candidates, asked by id: search narrows its hits with it before
// OpenFGA decides). Ids that are not UUIDs are never recorded.
func (s *Store) RecordedFor(ctx context.Context, v ledger.Viewer, ids []string, now time.Time) (map[string]bool, error) {
	orgs := v.Orgs
	if orgs == nil {
		orgs = []string{}
	}
	valid := archiveIDs(ids)
	return s.idSet(ctx, "recorded grantees", valid, `
		SELECT s.archive_id::text FROM archive_sources s JOIN ledger_viewer_grantees($2::text[], $3) g USING (kind, principal)
		WHERE s.archive_id = ANY($1::uuid[])
		UNION
		SELECT archive_id::text FROM ledger_active_shares($2::text[], $3, $4)
		WHERE archive_id = ANY($1::uuid[])`,
		valid, orgs, v.Subject, now.Add(-shareSlack))
}

// ArchiveGrantees is, for each of ids, the grantees the ledger recorded for
// the archive (archive_sources) as search keys, sorted: "org:<o>" for an
// organization, "user:<u>" for an owner (search.GranteeKey). Archives with
// none are left out; ids that are not UUIDs are ignored.
func (s *Store) ArchiveGrantees(ctx context.Context, ids []string) (map[string][]string, error) {
	valid := archiveIDs(ids)
	out := make(map[string][]string, len(valid))
	if len(valid) == 0 {
		return out, nil
	}
	rows, err := s.Pool.Query(ctx, `
		SELECT archive_id::text, array_agg(CASE kind WHEN 'organization' THEN 'org:' ELSE 'user:' END || principal)
		FROM (SELECT archive_id, kind, principal FROM archive_sources WHERE archive_id = ANY($1::uuid[])) s
		GROUP BY archive_id`, valid)
	if err != nil {
		return nil, fmt.Errorf("recorded grantees: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var keys []string
		if err := rows.Scan(&id, &keys); err != nil {
			return nil, fmt.Errorf("recorded grantees: %w", err)
		}
		slices.Sort(keys)
		out[id] = keys
	}
	return out, rows.Err()
}

// MarkUnindexed sets the archives' indexed_at back to NULL.
func (s *Store) MarkUnindexed(ctx context.Context, ids []string) error {
	_, err := s.Pool.Exec(ctx, `UPDATE archives SET indexed_at = NULL WHERE id = ANY($1::uuid[])`, ids)
	return err
}

// SearchScope is the archive ids a search for v names beside its grantee
// keys: those shared with v or one of its organizations and not expired at
// now (as RecordedFor counts them), and those recorded for v (organization
// or owner) that wait to be indexed, whose pages may lack v's key. ok is
// false when more than max archives wait to be indexed in all (a rebuild),
// or when the ids are more than max: the search then narrows after the
// index. Both bounds are read with limits, so the statement costs at most
// about max rows whatever the ledger's size.
func (s *Store) SearchScope(ctx context.Context, v ledger.Viewer, now time.Time, max int) ([]string, bool, error) {
	orgs := v.Orgs
	if orgs == nil {
		orgs = []string{}
	}
	var pending int
	var ids []string
	err := s.Pool.QueryRow(ctx, `
		WITH p AS (SELECT id FROM archives WHERE indexed_at IS NULL LIMIT $4 + 1),
		ids AS (
			SELECT s.archive_id FROM archive_sources s JOIN p ON p.id = s.archive_id
			JOIN ledger_viewer_grantees($1::text[], $2) g USING (kind, principal)
			UNION
			SELECT archive_id FROM ledger_active_shares($1::text[], $2, $3)
		)
		SELECT (SELECT count(*) FROM p), ARRAY(SELECT archive_id::text FROM ids ORDER BY 1 LIMIT $4 + 1)`,
		orgs, v.Subject, now.Add(-shareSlack), max).Scan(&pending, &ids)
	if err != nil {
		return nil, false, fmt.Errorf("search scope: %w", err)
	}
	if pending > max || len(ids) > max {
		return nil, false, nil
	}
	return ids, true, nil
}
