package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The crawl queries of pkg/crawl. The decisions (rules, budget, stop
// reasons, idempotence) live in the use-case; this file only reads and
// writes rows, in the transactions the use-case asks for.

// InsertCrawl inserts a running crawl and its depth-0 pages in one
// transaction and returns the crawl id and the pages inserted (duplicate
// seeds collapse). With c.MaxRunning > 0, a crawl of an organization that
// already runs that many is an *ledger.ActiveCrawlError naming its oldest
// running crawl: the count is taken under a transaction-scoped advisory lock
// of the organization, so two starts at once cannot both pass it.
func (s *Store) InsertCrawl(ctx context.Context, c ledger.NewCrawl) (string, []ledger.PageRef, error) {
	var id string
	var pages []ledger.PageRef
	var active *ledger.ActiveCrawlError
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if c.MaxRunning > 0 {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('ledgerctl crawls of ' || $1::text, 0))`, c.OrgID); err != nil {
				return err
			}
			var running int
			var oldest *string
			var started *time.Time
			err := tx.QueryRow(ctx, `
				SELECT count(*)::int,
				       (array_agg(id::text ORDER BY started_at, id))[1],
				       min(started_at)
				FROM crawls WHERE state = 'running' AND org_id = $1`, c.OrgID).Scan(&running, &oldest, &started)
			if err != nil {
				return err
			}
			if running >= c.MaxRunning {
				active = &ledger.ActiveCrawlError{Running: running, Limit: c.MaxRunning}
				if oldest != nil && started != nil {
					active.CrawlID, active.StartedAt = *oldest, *started
				}
				return active
			}
		}
		err := tx.QueryRow(ctx, `
			INSERT INTO crawls (seeds, rules, max_depth, max_pages, per_host_delay_ms, host_parallelism,
			                    org_id, requested_by, state, started_at, progressed_at, pages_discovered)
			VALUES ($1, $2::jsonb, $3, $4, $5, $6, $7, $8, 'running', $9, $9, $10)
			RETURNING id::text`,
			c.Seeds, string(c.Rules), c.MaxDepth, c.MaxPages, c.PerHostDelayMs, c.HostParallelism,
			c.OrgID, c.RequestedBy, c.Now, len(c.Seeds)).Scan(&id)
		if err != nil {
			return err
		}
		pages, err = insertPages(ctx, tx, id, 0, c.Seeds, c.Hosts, nil)
		if err != nil {
			return err
		}
		if len(pages) != len(c.Seeds) {
			_, err = tx.Exec(ctx, `UPDATE crawls SET pages_discovered = $2 WHERE id = $1`, id, len(pages))
		}
		return err
	})
	if active != nil && errors.Is(err, active) {
		return "", nil, active
	}
	if err != nil {
		return "", nil, fmt.Errorf("insert crawl: %w", err)
	}
	return id, pages, nil
}

// insertPages inserts pages at depth with ON CONFLICT DO NOTHING and returns
// the rows inserted, in id order. from may be nil (no discovered_from).
func insertPages(ctx context.Context, tx pgx.Tx, crawlID string, depth int, urls, hosts []string, from []*int64) ([]ledger.PageRef, error) {
	if len(urls) == 0 {
		return nil, nil
	}
	if from == nil {
		from = make([]*int64, len(urls))
	}
	rows, err := tx.Query(ctx, `
		INSERT INTO crawl_pages (crawl_id, url, depth, host, discovered_from)
		SELECT $1, x.u, $2, x.h, x.f
		FROM unnest($3::text[], $4::text[], $5::int8[]) WITH ORDINALITY AS x(u, h, f, i)
		ORDER BY x.i
		ON CONFLICT (crawl_id, url_hash) DO NOTHING
		RETURNING id, url, host`, crawlID, depth, urls, hosts, from)
	if err != nil {
		return nil, fmt.Errorf("insert crawl pages: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.PageRef])
	if err != nil {
		return nil, fmt.Errorf("insert crawl pages: %w", err)
	}
	slices.SortFunc(out, func(a, b ledger.PageRef) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

const crawlCols = `c.id::text, c.seeds, c.rules, c.max_depth, c.max_pages, c.per_host_delay_ms, c.host_parallelism,
	c.org_id, c.requested_by, c.state, c.stop_reason, c.started_at, c.finished_at, c.progressed_at,
	c.pages_discovered, c.pages_captured, c.error, c.last_job_id, c.last_job_depth`

func crawlTargets(c *ledger.Crawl) []any {
	return []any{&c.ID, &c.Seeds, &c.Rules, &c.MaxDepth, &c.MaxPages, &c.PerHostDelayMs, &c.HostParallelism,
		&c.OrgID, &c.RequestedBy, &c.State, &c.StopReason, &c.StartedAt, &c.FinishedAt, &c.ProgressedAt,
		&c.PagesDiscovered, &c.PagesCaptured, &c.Error, &c.LastJobID, &c.LastJobDepth}
}

// ledger.Crawl reads one crawl, or ledger.ErrNotFound. id must be a UUID.
func (s *Store) Crawl(ctx context.Context, id string) (ledger.Crawl, error) {
	var c ledger.Crawl
	err := s.Pool.QueryRow(ctx, `SELECT `+crawlCols+` FROM crawls c WHERE c.id = $1`, id).Scan(crawlTargets(&c)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Crawl{}, ledger.ErrNotFound
	}
	if err != nil {
		return ledger.Crawl{}, fmt.Errorf("read crawl: %w", err)
	}
	return c, nil
}

// CrawlFailures returns the crawl's last limit failed pages, newest first.
func (s *Store) CrawlFailures(ctx context.Context, id string, limit int) ([]ledger.CrawlFailure, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT url, depth, skip_reason FROM crawl_pages
		WHERE crawl_id = $1 AND state = 'failed' ORDER BY id DESC LIMIT $2`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("read crawl failures: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.CrawlFailure])
}

func scopeWhere(sc ledger.CrawlScope, args *[]any, alias string) string {
	*args = append(*args, sc.Orgs, sc.Subject)
	return fmt.Sprintf("(%[1]s.org_id = ANY($%[2]d::text[]) OR %[1]s.requested_by = $%[3]d)", alias, len(*args)-1, len(*args))
}

// ListCrawls returns up to limit crawls of scope strictly after cursor in
// newest-first order (from the top when cursor is nil), only those in state
// when state is not empty.
func (s *Store) ListCrawls(ctx context.Context, scope ledger.CrawlScope, state string, cursor *ledger.CrawlCursor, limit int) ([]ledger.CrawlRow, error) {
	args := []any{limit}
	where := []string{scopeWhere(scope, &args, "c")}
	if state != "" {
		args = append(args, state)
		where = append(where, fmt.Sprintf("c.state = $%d", len(args)))
	}
	if cursor != nil {
		args = append(args, cursor.StartedAt, cursor.ID)
		where = append(where, fmt.Sprintf("(c.started_at, c.id) < ($%d, $%d::uuid)", len(args)-1, len(args)))
	}
	q := `SELECT ` + crawlCols + `,
		(SELECT count(DISTINCT a.id) FROM crawl_pages p JOIN archives a ON a.task_id = p.task_id::uuid
		 WHERE p.crawl_id = c.id AND p.task_id IS NOT NULL),
		(SELECT count(*) FROM crawl_pages p WHERE p.crawl_id = c.id AND p.state = 'failed'),
		(SELECT count(*) FROM crawl_pages p WHERE p.crawl_id = c.id AND p.state = 'skipped')
		FROM crawls c`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY c.started_at DESC, c.id DESC LIMIT $1`
	rows, err := s.Pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list crawls: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.CrawlRow, error) {
		var c ledger.CrawlRow
		err := r.Scan(append(crawlTargets(&c.Crawl), &c.WaczCount, &c.PagesFailed, &c.PagesSkipped)...)
		return c, err
	})
}

// FailCrawl closes a running crawl as failed with reason, registering what
// its runner kept (closeKeeping); false when no running crawl has that id.
func (s *Store) FailCrawl(ctx context.Context, id, reason string, now time.Time, keep ledger.KeepCaptured) (closed bool, registered int, err error) {
	return s.closeKeeping(ctx, id, keep, `
		UPDATE crawls SET state = 'failed', stop_reason = 'failed', finished_at = $3, progressed_at = $3, error = $2
		WHERE id = $1 AND state = 'running'`, id, reason, now)
}

// CloseStalledCrawls closes as failed, with reason, every running crawl whose
// last progress is older than before, each registering what its runner
// kept (closeKeeping), and returns their ids.
func (s *Store) CloseStalledCrawls(ctx context.Context, before time.Time, reason string, now time.Time, keep ledger.KeepCaptured) ([]string, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id::text FROM crawls WHERE state = 'running' AND progressed_at < $1 ORDER BY id`, before)
	if err != nil {
		return nil, fmt.Errorf("find stalled crawls: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("find stalled crawls: %w", err)
	}
	var closed []string
	for _, id := range ids {
		ok, _, err := s.closeKeeping(ctx, id, keep, `
			UPDATE crawls SET state = 'failed', stop_reason = 'failed', finished_at = $3, error = $2
			WHERE id = $1 AND state = 'running' AND progressed_at < $4`, id, reason, now, before)
		if err != nil {
			return closed, fmt.Errorf("close stalled crawl %s: %w", id, err)
		}
		if ok {
			closed = append(closed, id)
		}
	}
	return closed, nil
}

// RecordCrawlJob records the runner's job id of the level at depth, unless a
// deeper level's job is already recorded (the depth never goes backwards).
func (s *Store) RecordCrawlJob(ctx context.Context, id, jobID string, depth int) error {
	_, err := s.Pool.Exec(ctx, `
		UPDATE crawls SET last_job_id = $2, last_job_depth = $3
		WHERE id = $1 AND (last_job_depth IS NULL OR last_job_depth <= $3)`, id, jobID, depth)
	if err != nil {
		return fmt.Errorf("record crawl job: %w", err)
	}
	return nil
}
