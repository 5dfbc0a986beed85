package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The queries of the embedded crawl runner (pkg/crawl/runner) and of the
// politeness report. The runner keeps each page's result in
// crawl_runner_results as soon as the capture ends, so a level interrupted
// by a restart resumes with only the pages that have none; the level report
// still goes through pkg/crawl, which is the only writer of crawl_pages.
// The rows are the centre's (ledger.RunnerLevel, …): the runner's port is
// declared in them.

// RunnerOpenLevels returns the levels of running crawls that have pages and
// no accepted report, oldest crawl first.
func (s *Store) RunnerOpenLevels(ctx context.Context) ([]ledger.RunnerLevel, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT c.id::text, d.depth, c.max_depth, c.org_id, c.per_host_delay_ms, c.host_parallelism
		FROM crawls c
		CROSS JOIN LATERAL (SELECT max(depth) AS depth FROM crawl_pages p WHERE p.crawl_id = c.id) d
		WHERE c.state = 'running' AND d.depth IS NOT NULL
		  AND NOT EXISTS (SELECT 1 FROM crawl_levels l WHERE l.crawl_id = c.id AND l.depth = d.depth)
		ORDER BY c.started_at, c.id`)
	if err != nil {
		return nil, fmt.Errorf("find open crawl levels: %w", err)
	}
	levels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.RunnerLevel, error) {
		var l ledger.RunnerLevel
		err := r.Scan(&l.CrawlID, &l.Depth, &l.MaxDepth, &l.OrgID, &l.PerHostDelayMs, &l.HostParallelism)
		return l, err
	})
	if err != nil {
		return nil, fmt.Errorf("find open crawl levels: %w", err)
	}
	for i := range levels {
		if levels[i].Pages, err = s.runnerPages(ctx, levels[i].CrawlID, levels[i].Depth); err != nil {
			return nil, err
		}
	}
	return levels, nil
}

func (s *Store) runnerPages(ctx context.Context, crawlID string, depth int) ([]ledger.RunnerPage, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT p.url, p.host, f.last
		FROM crawl_pages p
		LEFT JOIN LATERAL (
			SELECT max(q.finished_at) AS last FROM crawl_pages q
			WHERE q.crawl_id = p.crawl_id AND q.host = p.host AND q.finished_at IS NOT NULL) f ON true
		WHERE p.crawl_id = $1 AND p.depth = $2
		ORDER BY p.id`, crawlID, depth)
	if err != nil {
		return nil, fmt.Errorf("read the level's pages: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.RunnerPage, error) {
		var p ledger.RunnerPage
		err := r.Scan(&p.URL, &p.Host, &p.LastFinishedAt)
		return p, err
	})
}

// RunnerLevelOpen says whether crawlID is running and has no accepted
// report at depth (a level handed to a runner may have been run by another
// process since).
func (s *Store) RunnerLevelOpen(ctx context.Context, crawlID string, depth int) (bool, error) {
	var open bool
	err := s.Pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM crawls c WHERE c.id = $1 AND c.state = 'running')
		   AND NOT EXISTS (SELECT 1 FROM crawl_levels l WHERE l.crawl_id = $1 AND l.depth = $2)`, crawlID, depth).Scan(&open)
	if err != nil {
		return false, fmt.Errorf("check the crawl level: %w", err)
	}
	return open, nil
}

// RunnerLock takes the runner's lock on a crawl: a PostgreSQL advisory
// lock held by one connection, so that two processes (serve and
// `crawl start --wait`, or two serve replicas) never run the same crawl
// and so never break its per-host pacing. ok is false when another
// session holds it. The lock dies with the connection: a killed process
// leaves nothing to clean up. unlock releases it.
func (s *Store) RunnerLock(ctx context.Context, crawlID string) (unlock func(), ok bool, err error) {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return nil, false, fmt.Errorf("lock crawl %s for the runner: %w", crawlID, err)
	}
	const key = `hashtextextended('ledgerctl crawl runner ' || $1::text, 0)`
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+key+`)`, crawlID).Scan(&ok); err != nil {
		conn.Release()
		return nil, false, fmt.Errorf("lock crawl %s for the runner: %w", crawlID, err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(`+key+`)`, crawlID); err != nil {
			// The session may still hold the lock: close it rather than
			// hand a locked connection back to the pool.
			_ = conn.Conn().Close(ctx)
		}
		conn.Release()
	}, true, nil
}

// RunnerResults returns what the runner kept of the pages of crawlID at
// depth.
func (s *Store) RunnerResults(ctx context.Context, crawlID string, depth int) ([]ledger.RunnerResult, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT url, host, task_id, submitted_at, finished_at, result, attempts
		FROM crawl_runner_results WHERE crawl_id = $1 AND depth = $2`, crawlID, depth)
	if err != nil {
		return nil, fmt.Errorf("read the runner's results: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.RunnerResult, error) {
		var x ledger.RunnerResult
		err := r.Scan(&x.URL, &x.Host, &x.TaskID, &x.SubmittedAt, &x.FinishedAt, &x.Result, &x.Attempts)
		return x, err
	})
}

// RunnerBegin records that a capture of url is about to start, with the
// task id the runner gave it ("" when the capture server names its own),
// unless the page already has a result. A process killed during the
// capture leaves this behind for the next one to look for. running is
// false (and nothing is recorded) once the crawl was closed. The begins and
// saves of the same moment (a crawl's hosts, other crawls) share one
// statement (batcher, runnerWrites).
func (s *Store) RunnerBegin(ctx context.Context, crawlID string, depth int, url, host, taskID string, submittedAt time.Time) (running bool, err error) {
	id, err := uuid.Parse(crawlID)
	if err != nil {
		return false, fmt.Errorf("record the capture of %s: crawl id %q is not a UUID", url, crawlID)
	}
	b := runnerBegin{crawl: id, url: url, depth: depth, host: host, submitted: submittedAt}
	if taskID != "" {
		b.task = &taskID
	}
	running, err = s.writes.do(ctx, runnerWrite{begin: &b}, s.runnerWrites)
	if err != nil {
		return false, fmt.Errorf("record the capture of %s: %w", url, err)
	}
	return running, nil
}

type runnerBegin struct {
	crawl     uuid.UUID
	url, host string
	depth     int
	task      *string
	submitted time.Time
}

func (b runnerBegin) key() string { return b.crawl.String() + " " + b.url }

// liveOf answers each of crawls with whether it is among live.
func liveOf(crawls, live []uuid.UUID) []bool {
	out := make([]bool, len(crawls))
	for i, c := range crawls {
		for _, l := range live {
			if c == l {
				out[i] = true
				break
			}
		}
	}
	return out
}

// progressStep is how stale a running crawl's progressed_at may be.
const progressStep = time.Second

// RunnerSave keeps a page's result and counts it as the crawl's progress
// (progressed_at = now, when it is more than progressStep older), in one
// statement, only while the crawl is running: running is false (and
// nothing is kept) once it was closed. The crawl's row is written at most
// once per progressStep, not once per page: with ten hosts at once, a write
// of that one row per page made every save wait for the others' (and the
// stall timeout, minutes, needs no finer clock). The saves and begins of
// the same moment share one statement (batcher, runnerWrites).
func (s *Store) RunnerSave(ctx context.Context, crawlID string, r ledger.RunnerPageResult, now time.Time) (running bool, err error) {
	id, err := uuid.Parse(crawlID)
	if err != nil {
		return false, fmt.Errorf("keep the result of %s: crawl id %q is not a UUID", r.URL, crawlID)
	}
	running, err = s.writes.do(ctx, runnerWrite{save: &runnerSave{crawl: id, r: r, now: now}}, s.runnerWrites)
	if err != nil {
		return false, fmt.Errorf("keep the result of %s: %w", r.URL, err)
	}
	return running, nil
}

type runnerSave struct {
	crawl uuid.UUID
	r     ledger.RunnerPageResult
	now   time.Time
}

func (x runnerSave) key() string { return x.crawl.String() + " " + x.r.URL }

// runnerWrite is one call of RunnerBegin (begin) or RunnerSave (save).
type runnerWrite struct {
	begin *runnerBegin
	save  *runnerSave
}

func (w runnerWrite) key() string {
	if w.begin != nil {
		return w.begin.key()
	}
	return w.save.key()
}

// runnerWrites writes a batch of begins and saves in one statement, each
// answered with whether its crawl runs (and so was recorded). A begin
// records a capture about to start unless its page has a result; a save
// keeps a result, and the latest save of a crawl counts as its progress.
// The crawls are locked FOR KEY SHARE: a close (FOR UPDATE) sees every
// begin and result kept before it, and none is kept after it.
func (s *Store) runnerWrites(ctx context.Context, ws []runnerWrite) ([]bool, error) {
	var (
		bCrawls, sCrawls             []uuid.UUID
		bURLs, bHosts, sURLs, sHosts []string
		bDepths, sDepths             []int32
		attempts, backoffs           []int32
		bTasks, sTasks, results      []*string
		bSubs                        []time.Time
		sSubs, fins                  []*time.Time
		now                          time.Time
	)
	for _, w := range ws {
		if b := w.begin; b != nil {
			bCrawls, bURLs, bHosts, bDepths = append(bCrawls, b.crawl), append(bURLs, b.url), append(bHosts, b.host), append(bDepths, int32(b.depth))
			bTasks, bSubs = append(bTasks, b.task), append(bSubs, b.submitted)
			continue
		}
		x := w.save
		r := x.r
		sCrawls, sURLs, sHosts, sDepths = append(sCrawls, x.crawl), append(sURLs, r.URL), append(sHosts, r.Host), append(sDepths, int32(r.Depth))
		attempts, backoffs = append(attempts, int32(r.Attempts)), append(backoffs, int32(r.BackoffMs))
		var task, result *string
		if r.TaskID != "" {
			task = &r.TaskID
		}
		if r.Result != nil {
			res := string(r.Result)
			result = &res
		}
		sTasks, results = append(sTasks, task), append(results, result)
		var sub, fin *time.Time
		if !r.SubmittedAt.IsZero() {
			sub = &r.SubmittedAt
		}
		if !r.FinishedAt.IsZero() {
			fin = &r.FinishedAt
		}
		sSubs, fins = append(sSubs, sub), append(fins, fin)
		if x.now.After(now) {
			now = x.now
		}
	}
	var live, kept []uuid.UUID
	err := s.Pool.QueryRow(ctx, `
		WITH b AS (
			SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::timestamptz[])
				AS b (crawl_id, url, depth, host, task_id, submitted_at)
		), x AS (
			SELECT * FROM unnest($7::uuid[], $8::text[], $9::int[], $10::text[], $11::text[], $12::timestamptz[],
				$13::timestamptz[], $14::text[], $15::int[], $16::int[])
				AS x (crawl_id, url, depth, host, task_id, submitted_at, finished_at, result, attempts, backoff_ms)
		), live AS (
			SELECT id, progressed_at FROM crawls
			WHERE id IN (SELECT crawl_id FROM b UNION SELECT crawl_id FROM x) AND state = 'running'
			FOR KEY SHARE
		), progressed AS (
			UPDATE crawls c SET progressed_at = $17
			FROM live WHERE c.id = live.id AND c.state = 'running' AND live.progressed_at < $17::timestamptz - $18::interval
			  AND live.id IN (SELECT crawl_id FROM x)
		), begun AS (
			INSERT INTO crawl_runner_results (crawl_id, url, depth, host, task_id, submitted_at)
			SELECT b.crawl_id, b.url, b.depth, b.host, b.task_id, b.submitted_at FROM b JOIN live ON live.id = b.crawl_id
			ON CONFLICT (crawl_id, url) DO UPDATE
			SET task_id = EXCLUDED.task_id, submitted_at = EXCLUDED.submitted_at, finished_at = NULL, updated_at = now()
			WHERE crawl_runner_results.result IS NULL
		), kept AS (
			INSERT INTO crawl_runner_results
				(crawl_id, url, depth, host, task_id, submitted_at, finished_at, result, attempts, backoff_ms)
			SELECT x.crawl_id, x.url, x.depth, x.host, x.task_id, x.submitted_at, x.finished_at, x.result::jsonb,
				x.attempts, x.backoff_ms
			FROM x JOIN live ON live.id = x.crawl_id
			ON CONFLICT (crawl_id, url) DO UPDATE
			SET depth = EXCLUDED.depth, host = EXCLUDED.host, task_id = EXCLUDED.task_id,
			    submitted_at = EXCLUDED.submitted_at, finished_at = EXCLUDED.finished_at, result = EXCLUDED.result,
			    attempts = EXCLUDED.attempts, backoff_ms = EXCLUDED.backoff_ms, updated_at = now()
			RETURNING crawl_id
		)
		SELECT (SELECT coalesce(array_agg(id), '{}') FROM live), (SELECT coalesce(array_agg(DISTINCT crawl_id), '{}') FROM kept)`,
		bCrawls, bURLs, bDepths, bHosts, bTasks, bSubs,
		sCrawls, sURLs, sDepths, sHosts, sTasks, sSubs, fins, results, attempts, backoffs, now, progressStep).Scan(&live, &kept)
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(ws))
	bLive, sKept := liveOf(bCrawls, live), liveOf(sCrawls, kept)
	for i, w := range ws {
		if w.begin != nil {
			out[i], bLive = bLive[0], bLive[1:]
		} else {
			out[i], sKept = sKept[0], sKept[1:]
		}
	}
	return out, nil
}

// RunnerSaveHost keeps (or updates) a host's pacing at a level.
func (s *Store) RunnerSaveHost(ctx context.Context, h ledger.RunnerHost) error {
	_, err := s.Pool.Exec(ctx, `
		INSERT INTO crawl_runner_hosts
			(crawl_id, depth, host, robots, robots_status, robots_error, crawl_delay_ms, delay_ms, delay_source, backoffs, backoff_ms)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (crawl_id, depth, host) DO UPDATE
		SET robots = EXCLUDED.robots, robots_status = EXCLUDED.robots_status, robots_error = EXCLUDED.robots_error,
		    crawl_delay_ms = EXCLUDED.crawl_delay_ms, delay_ms = EXCLUDED.delay_ms, delay_source = EXCLUDED.delay_source,
		    backoffs = EXCLUDED.backoffs, backoff_ms = EXCLUDED.backoff_ms`,
		h.CrawlID, h.Depth, h.Host, h.Robots, h.RobotsStatus, h.RobotsError, h.CrawlDelayMs, h.DelayMs, h.DelaySource,
		h.Backoffs, h.BackoffMs)
	if err != nil {
		return fmt.Errorf("record the pacing of %s: %w", h.Host, err)
	}
	return nil
}

// Politeness reads, per host of a crawl, the gaps between one capture's
// finish and the next one's start (ordered by submission, the
// lag(finished_at) question of docs/crawling.md), with the pages of a level still running
// taken from the runner's results.
func (s *Store) Politeness(ctx context.Context, crawlID string) ([]ledger.PolitenessHost, error) {
	rows, err := s.Pool.Query(ctx, `
		WITH p AS (
			SELECT cp.host, cp.depth, cp.state, cp.skip_reason,
			       coalesce(cp.submitted_at, r.submitted_at) AS submitted_at,
			       coalesce(cp.finished_at, r.finished_at) AS finished_at,
			       coalesce(r.attempts, 0) AS attempts
			FROM crawl_pages cp
			LEFT JOIN crawl_runner_results r ON r.crawl_id = cp.crawl_id AND r.url = cp.url
			WHERE cp.crawl_id = $1
		), g AS (
			SELECT host, depth, submitted_at,
			       submitted_at - max(finished_at) OVER (PARTITION BY host ORDER BY submitted_at
			           ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gap
			FROM p WHERE submitted_at IS NOT NULL AND finished_at IS NOT NULL
		), d AS (
			SELECT g.host, extract(epoch FROM g.gap) * 1000 AS gap_ms,
			       coalesce(h.delay_ms, c.per_host_delay_ms) AS delay_ms
			FROM g
			JOIN crawls c ON c.id = $1
			LEFT JOIN crawl_runner_hosts h ON h.crawl_id = $1 AND h.depth = g.depth AND h.host = g.host
			WHERE g.gap IS NOT NULL
		), gaps AS (
			SELECT host, count(*) AS gaps, min(gap_ms) AS min_gap,
			       percentile_cont(0.5) WITHIN GROUP (ORDER BY gap_ms) AS median_gap,
			       count(*) FILTER (WHERE gap_ms < 0) AS overlaps,
			       count(*) FILTER (WHERE gap_ms < delay_ms) AS short_gaps
			FROM d GROUP BY host
		), pages AS (
			SELECT host,
			       count(*) FILTER (WHERE submitted_at IS NOT NULL) AS captures,
			       count(*) FILTER (WHERE state = 'captured') AS captured,
			       count(*) FILTER (WHERE skip_reason = 'robots') AS robots_skipped,
			       coalesce(sum(greatest(attempts - 1, 0)), 0) AS retries
			FROM p GROUP BY host
		), last AS (
			SELECT DISTINCT ON (host) host, depth, robots, robots_status, robots_error, crawl_delay_ms, delay_ms, delay_source
			FROM crawl_runner_hosts WHERE crawl_id = $1 ORDER BY host, depth DESC
		), backoff AS (
			SELECT host, sum(backoffs) AS backoffs, max(backoff_ms) AS backoff_ms
			FROM crawl_runner_hosts WHERE crawl_id = $1 GROUP BY host
		)
		SELECT pages.host, pages.captures, pages.captured, pages.robots_skipped, pages.retries,
		       coalesce(gaps.gaps, 0), gaps.min_gap, gaps.median_gap,
		       coalesce(gaps.overlaps, 0), coalesce(gaps.short_gaps, 0),
		       last.depth, last.robots, last.robots_status, last.robots_error, last.crawl_delay_ms, last.delay_ms, last.delay_source,
		       coalesce(backoff.backoffs, 0), coalesce(backoff.backoff_ms, 0)
		FROM pages
		LEFT JOIN gaps USING (host)
		LEFT JOIN last USING (host)
		LEFT JOIN backoff USING (host)
		ORDER BY pages.host`, crawlID)
	if err != nil {
		return nil, fmt.Errorf("read the crawl's pacing: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.PolitenessHost, error) {
		var h ledger.PolitenessHost
		var captures, captured, robots, retries, gaps, overlaps, short, backoffs, backoffMs int64
		err := r.Scan(&h.Host, &captures, &captured, &robots, &retries, &gaps, &h.MinGapMs, &h.MedianGapMs, &overlaps, &short,
			&h.Depth, &h.Robots, &h.RobotsStatus, &h.RobotsError, &h.CrawlDelayMs, &h.DelayMs, &h.DelaySource, &backoffs, &backoffMs)
		h.Captures, h.Captured, h.RobotsSkipped, h.Retries = int(captures), int(captured), int(robots), int(retries)
		h.Gaps, h.Overlaps, h.ShortGaps, h.Backoffs, h.BackoffMs = int(gaps), int(overlaps), int(short), int(backoffs), int(backoffMs)
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("read the crawl's pacing: %w", err)
	}
	return out, nil
}

// RunnerProgress reads, per host, the progress of the whole crawl: the
// host's pages at every level by state (a page whose result the runner kept
// counts as that result), the deepest level it has pages at, and the
// runner's pacing of it at the deepest level it was paced.
func (s *Store) RunnerProgress(ctx context.Context, crawlID string) ([]ledger.HostProgress, error) {
	rows, err := s.Pool.Query(ctx, `
		WITH p AS (`+keptPages+`),
		h AS (
			SELECT DISTINCT ON (host) host, robots, delay_source, delay_ms, backoffs, backoff_ms
			FROM crawl_runner_hosts WHERE crawl_id = $1
			ORDER BY host, depth DESC
		)
		SELECT p.host, max(p.depth),
		       count(*) FILTER (WHERE st = 'captured'), count(*) FILTER (WHERE st = 'failed'),
		       count(*) FILTER (WHERE st = 'skipped'), count(*) FILTER (WHERE st = 'pending'),
		       h.robots, h.delay_source, h.delay_ms, h.backoffs, h.backoff_ms
		FROM p
		LEFT JOIN h ON h.host = p.host
		GROUP BY p.host, h.robots, h.delay_source, h.delay_ms, h.backoffs, h.backoff_ms
		ORDER BY p.host`, crawlID)
	if err != nil {
		return nil, fmt.Errorf("read the crawl's progress: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.HostProgress, error) {
		var h ledger.HostProgress
		var c, f, sk, p int64
		err := r.Scan(&h.Host, &h.Depth, &c, &f, &sk, &p, &h.Robots, &h.DelaySource, &h.DelayMs, &h.Backoffs, &h.BackoffMs)
		h.Captured, h.Failed, h.Skipped, h.Pending = int(c), int(f), int(sk), int(p)
		return h, err
	})
}

// keptPages is a crawl's pages ($1) with each one's state as kept so far:
// its level's close, or while its level runs the result the runner kept
// for it (st), and its skip or failure reason the same way (reason) — what
// the progress by host, by level, the pages' rows and the politeness
// timeline all count. A pending page without a kept result that names its
// capture job is captured: its archive was registered, the capture having
// been in flight when the crawl was stopped or failed (its result could
// not be kept then).
const keptPages = `
	SELECT cp.*,
	       CASE WHEN cp.state <> 'pending' THEN cp.state
	            ELSE coalesce(r.result->>'status', CASE WHEN cp.task_id IS NOT NULL THEN 'captured' END, 'pending') END AS st,
	       coalesce(cp.skip_reason, CASE WHEN cp.state = 'pending' THEN nullif(r.result->>'skipReason', '') END) AS reason,
	       coalesce(cp.submitted_at, r.submitted_at) AS kept_submitted_at,
	       coalesce(cp.finished_at, r.finished_at) AS kept_finished_at
	FROM crawl_pages cp
	LEFT JOIN crawl_runner_results r ON r.crawl_id = cp.crawl_id AND r.url = cp.url
	WHERE cp.crawl_id = $1`

// CrawlLevels reads every level of a crawl (its pages by state, a running
// level's by the results the runner kept) and its failures grouped by
// reason, commonest first (at most five reasons).
func (s *Store) CrawlLevels(ctx context.Context, crawlID string) ([]ledger.LevelProgress, []ledger.FailureCount, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT depth, count(*) FILTER (WHERE st = 'captured'), count(*) FILTER (WHERE st = 'failed'),
		       count(*) FILTER (WHERE st = 'skipped'), count(*) FILTER (WHERE st = 'pending')
		FROM (`+keptPages+`) p GROUP BY depth ORDER BY depth`, crawlID)
	if err != nil {
		return nil, nil, fmt.Errorf("read the crawl's levels: %w", err)
	}
	levels, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.LevelProgress, error) {
		var l ledger.LevelProgress
		var c, f, sk, p int64
		err := r.Scan(&l.Depth, &c, &f, &sk, &p)
		l.Captured, l.Failed, l.Skipped, l.Pending = int(c), int(f), int(sk), int(p)
		return l, err
	})
	if err != nil {
		return nil, nil, err
	}
	rows, err = s.Pool.Query(ctx, `
		SELECT coalesce(reason, 'no reason recorded'), count(*) FROM (`+keptPages+`) p
		WHERE st = 'failed' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5`, crawlID)
	if err != nil {
		return nil, nil, fmt.Errorf("read the crawl's failures: %w", err)
	}
	failures, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ledger.FailureCount, error) {
		var f ledger.FailureCount
		var n int64
		err := r.Scan(&f.Reason, &n)
		f.Pages = int(n)
		return f, err
	})
	return levels, failures, err
}
