package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The full-text index's queries (pkg/search). Its only state is
// archives.indexed_at; search_index_failures says why an archive could not
// be indexed and when to retry it.

const indexCols = `SELECT a.id::text, a.task_id::text, a.source_url, a.labels, a.wacz_complete, a.captured_at, a.object_key, a.bucket FROM archives a`

func scanArchive(r pgx.CollectableRow) (ledger.Archive, error) {
	var a ledger.Archive
	err := r.Scan(&a.ID, &a.TaskID, &a.SourceURL, &a.Labels, &a.WaczComplete, &a.CapturedAt, &a.ObjectKey, &a.Bucket)
	return a, err
}

// UnindexedArchives returns up to limit archives with indexed_at NULL and
// id after afterID ("" for the first), in id order, leaving out those whose
// last failure is not due for a retry yet.
func (s *Store) UnindexedArchives(ctx context.Context, afterID string, limit int) ([]ledger.Archive, error) {
	if afterID == "" {
		afterID = "00000000-0000-0000-0000-000000000000"
	}
	rows, err := s.Pool.Query(ctx, indexCols+`
		WHERE a.indexed_at IS NULL AND a.id > $1::uuid
		  AND NOT EXISTS (SELECT 1 FROM search_index_failures f WHERE f.archive_id = a.id AND f.retry_at > now())
		ORDER BY a.id LIMIT $2`, afterID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanArchive)
}

// UnindexedArchivesByID returns those of ids with indexed_at NULL, whatever
// their retry time, in id order.
func (s *Store) UnindexedArchivesByID(ctx context.Context, ids []string) ([]ledger.Archive, error) {
	rows, err := s.Pool.Query(ctx, indexCols+` WHERE a.indexed_at IS NULL AND a.id = ANY($1::uuid[]) ORDER BY a.id`, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanArchive)
}

// CrawlArchiveIDs returns the archives a crawl produced: those whose task
// is one of the crawl's pages (the join goes through task_id, a recorded
// relationship).
func (s *Store) CrawlArchiveIDs(ctx context.Context, crawlID string) ([]string, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT DISTINCT a.id::text FROM archives a
		JOIN crawl_pages p ON p.task_id = a.task_id::text
		WHERE p.crawl_id = $1::uuid ORDER BY 1`, crawlID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// MarkIndexed sets the archives' indexed_at and forgets their failures,
// in one statement.
func (s *Store) MarkIndexed(ctx context.Context, ids []string) error {
	_, err := s.Pool.Exec(ctx, `
		WITH forgotten AS (DELETE FROM search_index_failures WHERE archive_id = ANY($1::uuid[]))
		UPDATE archives SET indexed_at = now() WHERE id = ANY($1::uuid[])`, ids)
	return err
}

// CapturesOf is, for each of urls, up to limit archives whose source URL
// it is and that pass f, newest first.
func (s *Store) CapturesOf(ctx context.Context, urls []string, f ledger.ArchiveFilter, limit int) (map[string][]ledger.ArchiveRef, error) {
	args := []any{urls, limit}
	rows, err := s.Pool.Query(ctx, `
		SELECT u.url, x.id::text, x.captured_at
		FROM (SELECT DISTINCT url FROM unnest($1::text[]) AS url) u, LATERAL (
			SELECT a.id, a.captured_at FROM archives a WHERE a.source_url = u.url`+archiveFilterSQL(f, "a", &args)+`
			ORDER BY a.captured_at DESC, a.id DESC LIMIT $2) x`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]ledger.ArchiveRef{}
	for rows.Next() {
		var u string
		var r ledger.ArchiveRef
		if err := rows.Scan(&u, &r.ID, &r.CapturedAt); err != nil {
			return nil, err
		}
		out[u] = append(out[u], r)
	}
	return out, rows.Err()
}

// LaterCaptures is, for each of ids, up to limit archives with the same
// source URL captured after it — (captured_at, id) greater, the order
// "newest" follows — that pass f, the nearest first. An id that is not an
// archive has none.
func (s *Store) LaterCaptures(ctx context.Context, ids []string, f ledger.ArchiveFilter, limit int) (map[string][]ledger.ArchiveRef, error) {
	valid := archiveIDs(ids)
	out := map[string][]ledger.ArchiveRef{}
	if len(valid) == 0 {
		return out, nil
	}
	args := []any{valid, limit}
	rows, err := s.Pool.Query(ctx, `
		SELECT c.id::text, x.id::text, x.captured_at
		FROM archives c, LATERAL (
			SELECT a.id, a.captured_at FROM archives a
			WHERE a.source_url = c.source_url AND (a.captured_at, a.id) > (c.captured_at, c.id)`+archiveFilterSQL(f, "a", &args)+`
			ORDER BY a.captured_at, a.id LIMIT $2) x
		WHERE c.id = ANY($1::uuid[])
		ORDER BY c.id, x.captured_at, x.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var from string
		var r ledger.ArchiveRef
		if err := rows.Scan(&from, &r.ID, &r.CapturedAt); err != nil {
			return nil, err
		}
		out[from] = append(out[from], r)
	}
	return out, rows.Err()
}

// SetTitles sets the archives' titles (archive id → title), for the list.
func (s *Store) SetTitles(ctx context.Context, titles map[string]string) error {
	ids := make([]string, 0, len(titles))
	ts := make([]string, 0, len(titles))
	for id, t := range titles {
		ids, ts = append(ids, id), append(ts, t)
	}
	_, err := s.Pool.Exec(ctx, `
		UPDATE archives a SET title = t.title
		FROM unnest($1::uuid[], $2::text[]) AS t(id, title)
		WHERE a.id = t.id AND a.title IS DISTINCT FROM t.title`, ids, ts)
	return err
}

// RecordIndexFailure keeps why the archive could not be indexed and when
// to retry: retryBase after the first failure, doubled with each further
// one, at most retryMax.
func (s *Store) RecordIndexFailure(ctx context.Context, id, reason string, retryBase, retryMax time.Duration) error {
	_, err := s.Pool.Exec(ctx, `
		INSERT INTO search_index_failures AS f (archive_id, reason, attempts, failed_at, retry_at)
		SELECT $1::uuid, $2, 1, now(), now() + $3::interval
		WHERE EXISTS (SELECT 1 FROM archives WHERE id = $1::uuid)
		ON CONFLICT (archive_id) DO UPDATE SET
			reason = excluded.reason, attempts = f.attempts + 1, failed_at = now(),
			retry_at = now() + least($3::interval * power(2, least(f.attempts, 30)), $4::interval)`,
		id, reason, retryBase, retryMax)
	return err
}

// ClearIndexed is the rebuild, one statement (docs/search.md): every
// archive's indexed_at back to NULL, and every failure due for a retry
// now, in one statement. It returns how many archives were indexed.
func (s *Store) ClearIndexed(ctx context.Context) (int64, error) {
	tag, err := s.Pool.Exec(ctx, `
		WITH due AS (UPDATE search_index_failures SET retry_at = now())
		UPDATE archives SET indexed_at = NULL WHERE indexed_at IS NOT NULL`)
	return tag.RowsAffected(), err
}

// IndexFailure is one archive that could not be indexed.
type IndexFailure struct {
	ArchiveID string
	ObjectKey string
	Reason    string
	Attempts  int
	FailedAt  time.Time
	RetryAt   time.Time
}

// IndexCounts is the state of the index over the ledger.
type IndexCounts struct {
	Archives, Indexed, Pending, Failed int
}

// IndexStatus counts the archives indexed, pending (never tried, or to be
// retried) and failed (the last try failed), with up to limit failures,
// most recent first.
func (s *Store) IndexStatus(ctx context.Context, limit int) (IndexCounts, []IndexFailure, error) {
	var c IndexCounts
	err := s.Pool.QueryRow(ctx, `
		SELECT count(*),
		       count(*) FILTER (WHERE a.indexed_at IS NOT NULL),
		       count(*) FILTER (WHERE a.indexed_at IS NULL AND f.archive_id IS NULL),
		       count(*) FILTER (WHERE a.indexed_at IS NULL AND f.archive_id IS NOT NULL)
		FROM archives a LEFT JOIN search_index_failures f ON f.archive_id = a.id`).
		Scan(&c.Archives, &c.Indexed, &c.Pending, &c.Failed)
	if err != nil {
		return c, nil, err
	}
	rows, err := s.Pool.Query(ctx, `
		SELECT f.archive_id::text, a.object_key, f.reason, f.attempts, f.failed_at, f.retry_at
		FROM search_index_failures f JOIN archives a ON a.id = f.archive_id
		WHERE a.indexed_at IS NULL
		ORDER BY f.failed_at DESC, f.archive_id LIMIT $1`, limit)
	if err != nil {
		return c, nil, err
	}
	failures, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (IndexFailure, error) {
		var f IndexFailure
		err := r.Scan(&f.ArchiveID, &f.ObjectKey, &f.Reason, &f.Attempts, &f.FailedAt, &f.RetryAt)
		return f, err
	})
	return c, failures, err
}

// CrawlSearchable counts the archives a crawl's pages produced and those
// indexed, with the latest indexed_at among them (crawl.SearchableReader).
func (s *Store) CrawlSearchable(ctx context.Context, crawlID string) (archives, indexed int, last *time.Time, err error) {
	err = s.Pool.QueryRow(ctx, `
		SELECT count(*), count(*) FILTER (WHERE a.indexed_at IS NOT NULL), max(a.indexed_at)
		FROM archives a
		WHERE a.task_id::text IN (SELECT p.task_id FROM crawl_pages p WHERE p.crawl_id = $1::uuid AND p.task_id IS NOT NULL)`,
		crawlID).Scan(&archives, &indexed, &last)
	return archives, indexed, last, err
}
