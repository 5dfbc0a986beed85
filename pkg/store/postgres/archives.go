package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Store runs the ledger's queries on one pool. Use it by pointer: it caches
// the list cursor key (see ListCursorKey).
type Store struct {
	Pool *pgxpool.Pool

	cursorKey cursorKeyCache
	// The embedded runner's begins and saves of the same moment, each
	// batch written in one statement (runner.go).
	writes batcher[runnerWrite]
}

// InsertArchive inserts the row and, only when it was inserted, the outbox
// row carrying tuples(archiveID), in one transaction. An archive already in
// the ledger at (bucket, object_key) is a no-op: its tuples were queued the
// first time.
func (s *Store) InsertArchive(ctx context.Context, a ledger.NewArchive, tuples func(archiveID string) ledger.OutboxPayload) (id string, inserted bool, err error) {
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		idx, err := insertArchives(ctx, tx, []ledger.NewArchive{a}, func(_ int, archiveID string) ledger.OutboxPayload {
			id = archiveID
			return tuples(archiveID)
		})
		inserted = len(idx) == 1
		return err
	})
	return id, inserted, err
}

// UnregisteredSubmissions lists submissions with a manifest key and no
// archive for their task, optionally only those submitted since. A task
// whose archive was deleted (a tombstone) is not unregistered: it is never
// registered again.
func (s *Store) UnregisteredSubmissions(ctx context.Context, since *time.Time) ([]ledger.Submission, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT s.task_id::text, s.manifest_key, s.org_id, s.submitted_by, s.correlation_id
		FROM capture_submissions s
		WHERE s.manifest_key IS NOT NULL
		  AND NOT EXISTS (SELECT 1 FROM archives a WHERE a.task_id = s.task_id)
		  AND NOT EXISTS (SELECT 1 FROM archive_tombstones t WHERE t.task_id = s.task_id)
		  AND ($1::timestamptz IS NULL OR s.submitted_at >= $1)
		ORDER BY s.submitted_at, s.task_id`, since)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Submission, error) {
		var sub ledger.Submission
		err := r.Scan(&sub.TaskID, &sub.ManifestKey, &sub.OrgID, &sub.SubmittedBy, &sub.CorrelationID)
		return sub, err
	})
}

// ArchiveLocation returns the bucket and key of archive id, or
// ledger.ErrNotFound.
func (s *Store) ArchiveLocation(ctx context.Context, id string) (bucket, key string, err error) {
	err = s.Pool.QueryRow(ctx, `SELECT bucket, object_key FROM archives WHERE id = $1`, id).Scan(&bucket, &key)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", ledger.ErrNotFound
	}
	return bucket, key, err
}

// ArchivesBefore returns up to limit archives strictly after cursor in
// newest-first order (all from the top when cursor is nil).
func (s *Store) ArchivesBefore(ctx context.Context, f ledger.ArchiveFilter, cursor *ledger.ArchiveCursor, limit int) ([]ledger.Archive, error) {
	args := []any{limit}
	where := ` WHERE true`
	if cursor != nil {
		args = append(args, cursor.CapturedAt, cursor.ID)
		where = ` WHERE (a.captured_at, a.id) < ($2, $3::uuid)`
	}
	where += archiveFilterSQL(f, "a", &args)
	rows, err := s.Pool.Query(ctx, `SELECT a.id::text, a.task_id::text, a.source_url, a.title, a.labels, a.wacz_complete, a.captured_at, a.object_key, a.bucket
		FROM archives a`+where+` ORDER BY a.captured_at DESC, a.id DESC LIMIT $1`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.Archive, error) {
		var a ledger.Archive
		err := r.Scan(&a.ID, &a.TaskID, &a.SourceURL, &a.Title, &a.Labels, &a.WaczComplete, &a.CapturedAt, &a.ObjectKey, &a.Bucket)
		return a, err
	})
}

// CrawlArchives returns the ids of up to limit archives admitted from the
// crawl's pages (a page's task id is its capture job's), oldest capture
// first; none for a crawl that does not exist.
func (s *Store) CrawlArchives(ctx context.Context, crawlID string, limit int) ([]string, error) {
	locs, err := s.CrawlArchiveLocations(ctx, crawlID, limit)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(locs))
	for i, l := range locs {
		ids[i] = l.ID
	}
	return ids, nil
}

// CrawlArchiveLocations is CrawlArchives with where each archive is: its
// bucket and object key, in the same query.
func (s *Store) CrawlArchiveLocations(ctx context.Context, crawlID string, limit int) ([]ledger.ArchiveLocation, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT a.id::text, a.bucket, a.object_key FROM archives a
		WHERE a.task_id IN (
			SELECT `+taskUUID("p.task_id")+`
			FROM crawl_pages p WHERE p.crawl_id = $1 AND p.task_id IS NOT NULL)
		ORDER BY a.captured_at, a.id
		LIMIT $2`, crawlID, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.ArchiveLocation, error) {
		var l ledger.ArchiveLocation
		err := r.Scan(&l.ID, &l.Bucket, &l.Key)
		return l, err
	})
}

// ArchiveObjectNames maps each of ids that is an archive to the last part
// of its object key (what a replay collection names its WACZ by).
func (s *Store) ArchiveObjectNames(ctx context.Context, ids []string) (map[string]string, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT id::text, regexp_replace(object_key, '^.*/', '') FROM archives
		WHERE id = ANY($1::uuid[])`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string]string, len(ids))
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[id] = name
	}
	return out, rows.Err()
}

// CrawlsOfJobs maps those of taskIDs that a crawl page captured to that
// crawl's id.
func (s *Store) CrawlsOfJobs(ctx context.Context, taskIDs []string) (map[string]string, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT DISTINCT ON (task_id) task_id, crawl_id::text FROM crawl_pages
		WHERE task_id = ANY($1::text[])
		ORDER BY task_id, created_at`, taskIDs)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var task, crawl string
		if err := rows.Scan(&task, &crawl); err != nil {
			return nil, err
		}
		out[task] = crawl
	}
	return out, rows.Err()
}
