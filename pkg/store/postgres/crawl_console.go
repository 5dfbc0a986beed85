package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// StopCrawl ends a running crawl as stopped by a person: succeeded, with
// the stop reason 'stopped', registering what its runner kept
// (closeKeeping). It reports false when no running crawl has that id (it
// had already ended, or was stopped before).
func (s *Store) StopCrawl(ctx context.Context, id string, now time.Time, keep ledger.KeepCaptured) (stopped bool, registered int, err error) {
	return s.closeKeeping(ctx, id, keep, `
		UPDATE crawls SET state = 'succeeded', stop_reason = 'stopped', finished_at = $2, progressed_at = $2
		WHERE id = $1 AND state = 'running'`, id, now)
}

// closeKeeping closes the running crawl id with end (an UPDATE of the
// crawl whose $1 is id, args its parameters) in one transaction under the
// crawl's row locked FOR UPDATE, and, when end closed it, registers what
// the runner kept before: the results kept for the crawl's pending pages
// whose status is captured and whose capture is not in the ledger yet go,
// by depth, to keep, and the plan keep returns for a depth (nil: nothing)
// is written as AdmitCaptured writes one (submissions, archives with their
// outbox rows, the pages' capture jobs). A result is kept only while its
// crawl runs, under the crawl's row locked FOR KEY SHARE (runnerWrites), so
// every result kept before the close is seen here and none is kept after
// it (a nil keep registers nothing). It answers whether end closed the
// crawl and how many archives it registered.
//
// keep reads the bucket (each capture's manifest; a capture in flight is
// looked for there), so it is first asked before the transaction
// (planKept), and the crawl's row is locked only while the plans are
// written: a slow or unreachable bucket holds no lock that the crawl's
// other writers wait for. Under the lock the kept captures are read again;
// a depth's plan made before is written when nothing it was made of has
// changed since, and keep is asked, under the lock, only for what was
// kept in between (keptAtDepth.without); a depth where something it was
// made of has gone (registered early in between, or its result replaced)
// is planned again whole, under the lock, as it was before.
func (s *Store) closeKeeping(ctx context.Context, id string, keep ledger.KeepCaptured, end string, args ...any) (closed bool, registered int, err error) {
	planned := s.planKept(ctx, id, keep)
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		closed, registered = false, 0
		t := &levelTx{tx: tx, crawlID: id}
		cr, err := t.lock(ctx)
		if errors.Is(err, ledger.ErrNotFound) {
			return nil
		}
		if err != nil || cr.State != "running" {
			return err
		}
		tag, err := tx.Exec(ctx, end, args...)
		if err != nil {
			return fmt.Errorf("close crawl: %w", err)
		}
		if closed = tag.RowsAffected() == 1; !closed || keep == nil {
			return nil
		}
		kept, err := t.keptCaptures(ctx)
		if err != nil {
			return err
		}
		for _, k := range kept {
			var plans []*ledger.LevelPlan
			if pre, ok := planned[k.depth]; ok && k.holds(pre.entries) {
				plans = append(plans, pre.plan)
				k = k.without(pre.entries)
			}
			if !k.empty() {
				plan, err := keep(cr, k.depth, k.results, k.begun)
				if err != nil {
					return err
				}
				plans = append(plans, plan)
			}
			for _, plan := range plans {
				if plan == nil {
					continue
				}
				admitted, err := t.applyCaptured(ctx, k.depth, plan)
				if err != nil {
					return err
				}
				registered += len(admitted)
			}
		}
		return nil
	})
	if err != nil {
		return false, 0, err
	}
	return closed, registered, nil
}

// keptPlan is the plan keep made of one depth's kept captures before the
// transaction that closes the crawl, and the captures it was made of
// (keptAtDepth.keys).
type keptPlan struct {
	entries map[string]bool
	plan    *ledger.LevelPlan
}

// planKept asks keep, outside any transaction that locks the crawl, for
// the plan of each depth's kept captures (keptCaptures), read in a
// read-only transaction with the crawl's row as it is then. It answers
// nothing for a crawl that does not run, and leaves out a depth whose plan
// failed, as it does everything when the read fails: closeKeeping then
// plans them under the lock.
func (s *Store) planKept(ctx context.Context, id string, keep ledger.KeepCaptured) map[int]keptPlan {
	if keep == nil {
		return nil
	}
	var cr ledger.Crawl
	var kept []keptAtDepth
	err := pgx.BeginTxFunc(ctx, s.Pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT `+crawlCols+` FROM crawls c WHERE c.id = $1`, id).Scan(crawlTargets(&cr)...)
		if err != nil || cr.State != "running" {
			return err
		}
		kept, err = (&levelTx{tx: tx, crawlID: id}).keptCaptures(ctx)
		return err
	})
	if err != nil || len(kept) == 0 {
		return nil
	}
	out := make(map[int]keptPlan, len(kept))
	for _, k := range kept {
		plan, err := keep(cr, k.depth, k.results, k.begun)
		if err != nil {
			continue
		}
		out[k.depth] = keptPlan{entries: k.keys(), plan: plan}
	}
	return out
}

// taskUUID is the SQL of the text task id col as a uuid, NULL when it is
// not one (a capture server may name its own tasks): what compares it with
// archives.task_id.
func taskUUID(col string) string {
	return `CASE WHEN ` + col + ` ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN ` + col + `::uuid END`
}

// keptAtDepth is the results the runner kept for one depth's pages, and
// the captures it began there and kept no result of.
type keptAtDepth struct {
	depth   int
	results [][]byte
	begun   []ledger.BegunCapture
}

// resultKey and begunKey tell a kept result, or a begun capture, from
// another: the result as kept, or the begin's page, task and time.
func resultKey(result []byte) string { return "r\x00" + string(result) }

func begunKey(b ledger.BegunCapture) string {
	return "b\x00" + b.URL + "\x00" + b.TaskID + "\x00" + b.SubmittedAt.Format(time.RFC3339Nano)
}

// keys are the captures k holds, by key.
func (k keptAtDepth) keys() map[string]bool {
	out := make(map[string]bool, len(k.results)+len(k.begun))
	for _, r := range k.results {
		out[resultKey(r)] = true
	}
	for _, b := range k.begun {
		out[begunKey(b)] = true
	}
	return out
}

// holds says whether k holds every capture of keys.
func (k keptAtDepth) holds(keys map[string]bool) bool {
	now := k.keys()
	for key := range keys {
		if !now[key] {
			return false
		}
	}
	return true
}

// without is k less the captures of keys.
func (k keptAtDepth) without(keys map[string]bool) keptAtDepth {
	out := keptAtDepth{depth: k.depth}
	for _, r := range k.results {
		if !keys[resultKey(r)] {
			out.results = append(out.results, r)
		}
	}
	for _, b := range k.begun {
		if !keys[begunKey(b)] {
			out.begun = append(out.begun, b)
		}
	}
	return out
}

func (k keptAtDepth) empty() bool { return len(k.results) == 0 && len(k.begun) == 0 }

// keptCaptures reads, by depth, the results the runner kept for the
// crawl's pending pages whose status is captured, and the captures it
// began for pending pages and kept no result of, whose capture (the task)
// has no archive in the ledger: what the level's admission would still
// register, and what a runner that died may have left in the bucket.
func (t *levelTx) keptCaptures(ctx context.Context) ([]keptAtDepth, error) {
	rows, err := t.tx.Query(ctx, `
		SELECT r.depth, r.result::text, r.url, r.task_id, r.submitted_at
		FROM crawl_runner_results r
		JOIN crawl_pages p ON p.crawl_id = r.crawl_id AND p.url_hash = digest(r.url, 'sha256') AND p.url = r.url
		                  AND p.depth = r.depth
		WHERE r.crawl_id = $1 AND p.state = 'pending'
		  AND (r.result->>'status' = 'captured'
		       OR (r.result IS NULL AND r.task_id IS NOT NULL AND r.submitted_at IS NOT NULL))
		  AND NOT EXISTS (SELECT 1 FROM archives a
		                  WHERE a.task_id = `+taskUUID("r.task_id")+`)
		ORDER BY r.depth, p.id`, t.crawlID)
	if err != nil {
		return nil, fmt.Errorf("read the runner's kept captures: %w", err)
	}
	defer rows.Close()
	var out []keptAtDepth
	for rows.Next() {
		var depth int
		var result, task *string
		var url string
		var submitted *time.Time
		if err := rows.Scan(&depth, &result, &url, &task, &submitted); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].depth != depth {
			out = append(out, keptAtDepth{depth: depth})
		}
		k := &out[len(out)-1]
		if result != nil {
			k.results = append(k.results, []byte(*result))
		} else {
			k.begun = append(k.begun, ledger.BegunCapture{URL: url, TaskID: *task, SubmittedAt: submitted.UTC()})
		}
	}
	return out, rows.Err()
}

// crawlPageRows is the select of the pages table's rows (a page in the
// state keptPages gives it, with its archive), over the crawl $1, narrowed
// by where.
func crawlPageRows(where string) string {
	return `
		SELECT cp.id, cp.url, cp.depth, cp.host, cp.st, cp.reason,
		       (SELECT a.id::text FROM archives a
		        WHERE a.task_id = ` + taskUUID("cp.task_id") + `
		        ORDER BY a.id LIMIT 1),
		       cp.kept_submitted_at, cp.kept_finished_at, cp.final_url
		FROM (` + keptPages + `) cp
		WHERE ` + where
}

// collectPageRows scans crawlPageRows' rows.
func collectPageRows(rows pgx.Rows, err error) ([]ledger.CrawlPageRow, error) {
	if err != nil {
		return nil, fmt.Errorf("read the crawl's pages: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.CrawlPageRow, error) {
		var p ledger.CrawlPageRow
		err := r.Scan(&p.ID, &p.URL, &p.Depth, &p.Host, &p.State, &p.Reason, &p.ArchiveID, &p.SubmittedAt, &p.FinishedAt, &p.FinalURL)
		return p, err
	})
}

// CrawlPageRows reads up to limit pages of a crawl after the page id
// after, in the order they were added (seeds first, then level by level);
// with state, only the pages in that state (as keptPages gives it).
func (s *Store) CrawlPageRows(ctx context.Context, crawlID string, after int64, limit int, state string) ([]ledger.CrawlPageRow, error) {
	return collectPageRows(s.Pool.Query(ctx, crawlPageRows(`cp.id > $2 AND ($4 = '' OR cp.st = $4) ORDER BY cp.id LIMIT $3`), crawlID, after, limit, state))
}

// CrawlPagesOf reads the pages of a crawl whose URL is url (at most one)
// and those whose capture ended at url after redirects, in the order they
// were added.
func (s *Store) CrawlPagesOf(ctx context.Context, crawlID, url string) ([]ledger.CrawlPageRow, error) {
	return collectPageRows(s.Pool.Query(ctx, crawlPageRows(`(cp.url_hash = digest($2::text, 'sha256') AND cp.url = $2) OR cp.final_url = $2 ORDER BY cp.id`), crawlID, url))
}

// PolitenessTimeline reads every capture of a crawl with both times
// recorded, each page in the state keptPages gives it (the runner's kept
// results for a level not reported yet), ordered by host and start: the
// evidence Politeness summarises.
func (s *Store) PolitenessTimeline(ctx context.Context, crawlID string) ([]ledger.TimelineCapture, error) {
	rows, err := s.Pool.Query(ctx, `
		WITH p AS (`+keptPages+`)
		SELECT p.host, p.depth, p.url, p.st, p.kept_submitted_at, p.kept_finished_at,
		       coalesce(h.delay_ms, c.per_host_delay_ms)
		FROM p
		JOIN crawls c ON c.id = $1
		LEFT JOIN crawl_runner_hosts h ON h.crawl_id = $1 AND h.depth = p.depth AND h.host = p.host
		WHERE p.kept_submitted_at IS NOT NULL AND p.kept_finished_at IS NOT NULL
		ORDER BY p.host, p.kept_submitted_at, p.url`, crawlID)
	if err != nil {
		return nil, fmt.Errorf("read the crawl's capture times: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.TimelineCapture, error) {
		var c ledger.TimelineCapture
		err := r.Scan(&c.Host, &c.Depth, &c.URL, &c.State, &c.SubmittedAt, &c.FinishedAt, &c.DelayMs)
		return c, err
	})
}
