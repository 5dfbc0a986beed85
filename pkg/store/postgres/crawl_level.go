package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

const levelCols = `depth, digest, results, pages_closed, pages_captured, pages_recovered, archives_admitted,
	pages_discovered, next_pages, stop_reason, refused, reported_at`

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func crawlLevel(ctx context.Context, q querier, id string, depth int) (*ledger.LevelRecord, error) {
	var l ledger.LevelRecord
	err := q.QueryRow(ctx, `SELECT `+levelCols+` FROM crawl_levels WHERE crawl_id = $1 AND depth = $2`, id, depth).
		Scan(&l.Depth, &l.Digest, &l.Results, &l.PagesClosed, &l.PagesCaptured, &l.PagesRecovered,
			&l.ArchivesAdmitted, &l.PagesDiscovered, &l.NextPages, &l.StopReason, &l.Refused, &l.ReportedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read crawl level: %w", err)
	}
	return &l, nil
}

// CrawlLevel returns the accepted report of depth, or nil when there is none.
func (s *Store) CrawlLevel(ctx context.Context, id string, depth int) (*ledger.LevelRecord, error) {
	return crawlLevel(ctx, s.Pool, id, depth)
}

// PagesAtDepth returns the crawl's pages at depth in id order.
func (s *Store) PagesAtDepth(ctx context.Context, id string, depth int) ([]ledger.PageRef, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, url, host FROM crawl_pages WHERE crawl_id = $1 AND depth = $2 ORDER BY id`, id, depth)
	if err != nil {
		return nil, fmt.Errorf("read crawl pages: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.PageRef])
}

// HostsLastFinished returns, for each of hosts that has a finished page in
// the crawl, when its last page finished.
func (s *Store) HostsLastFinished(ctx context.Context, id string, hosts []string) (map[string]time.Time, error) {
	return hostsLastFinished(ctx, s.Pool, id, hosts)
}

func hostsLastFinished(ctx context.Context, q querier, id string, hosts []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if len(hosts) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, `
		SELECT host, max(finished_at) FROM crawl_pages
		WHERE crawl_id = $1 AND host = ANY($2) AND finished_at IS NOT NULL
		GROUP BY host`, id, hosts)
	if err != nil {
		return nil, fmt.Errorf("read hosts' last finish: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		var t time.Time
		if err := rows.Scan(&h, &t); err != nil {
			return nil, err
		}
		out[h] = t
	}
	return out, rows.Err()
}

// ApplyLevel runs the level report of depth for crawl crawlID in one
// transaction: it locks the crawl's row (which serialises reports, /failed
// and stall closing of one crawl), reads the LevelState the report needs
// (urls are the report's normalised page URLs), asks decide for the plan
// and applies it. decide sees only the state; a nil plan writes nothing
// (an accepted report being replayed), and an error rolls back. The plan's
// page closes must all land: a pending page that is no longer pending
// under the lock is an error, never a silent partial write.
func (s *Store) ApplyLevel(ctx context.Context, crawlID string, depth int, urls []string, decide func(ledger.LevelState) (*ledger.LevelPlan, error)) (ledger.LevelApplied, error) {
	var applied ledger.LevelApplied
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		applied = ledger.LevelApplied{}
		t := &levelTx{tx: tx, crawlID: crawlID}
		st, err := t.state(ctx, depth, urls)
		if err != nil {
			return err
		}
		plan, err := decide(st)
		if err != nil || plan == nil {
			return err
		}
		applied, err = t.apply(ctx, depth, plan)
		return err
	})
	if err != nil {
		return ledger.LevelApplied{}, err
	}
	return applied, nil
}

// AdmitCaptured registers archives of depth's pages for crawl crawlID
// before the level's report, in one transaction: it locks the crawl's row
// FOR SHARE (so a level report, a stop or a close waits for it, and it for
// them), reads the crawl, whether depth's report was accepted and, while
// the crawl runs and it was not, which of urls are pending pages at depth
// (for a crawl closed since, those with the task the runner began there
// before the close: LevelState.Begun);
// decide plans from that, and only the plan's Submissions, Archives (with
// their outbox rows) and Tasks (the pages' capture jobs, so the archives
// are the crawl's at once: its list filter, counts and replay collection)
// are written. A nil plan writes nothing. The level's report admits the
// same archives again without a second row or outbox row (insertArchives
// skips an object already in the ledger).
func (s *Store) AdmitCaptured(ctx context.Context, crawlID string, depth int, urls []string, decide func(ledger.LevelState) (*ledger.LevelPlan, error)) (ledger.LevelApplied, error) {
	var applied ledger.LevelApplied
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		applied = ledger.LevelApplied{}
		t := &levelTx{tx: tx, crawlID: crawlID}
		var st ledger.LevelState
		err := tx.QueryRow(ctx, `SELECT `+crawlCols+` FROM crawls c WHERE c.id = $1 FOR SHARE`, crawlID).Scan(crawlTargets(&st.Crawl)...)
		if errors.Is(err, pgx.ErrNoRows) {
			return ledger.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("lock crawl: %w", err)
		}
		if st.Accepted, err = crawlLevel(ctx, tx, crawlID, depth); err != nil {
			return err
		}
		switch {
		case st.Accepted != nil:
		case st.Crawl.State == "running":
			if st.Pending, err = t.pending(ctx, depth, urls); err != nil {
				return err
			}
		case st.Crawl.FinishedAt != nil:
			if st.Pending, st.Begun, err = t.begunBefore(ctx, depth, urls); err != nil {
				return err
			}
		}
		plan, err := decide(st)
		if err != nil || plan == nil {
			return err
		}
		applied.Admitted, err = t.applyCaptured(ctx, depth, plan)
		return err
	})
	if err != nil {
		return ledger.LevelApplied{}, err
	}
	return applied, nil
}

// applyCaptured writes what registering captures before their level's
// report writes (AdmitCaptured, and a stop: StopCrawl): plan's
// Submissions, Archives with their outbox rows, and Tasks. It answers the
// indexes of the archives it admitted.
func (t *levelTx) applyCaptured(ctx context.Context, depth int, plan *ledger.LevelPlan) ([]int, error) {
	if err := t.insertSubmissions(ctx, plan.Submissions); err != nil {
		return nil, err
	}
	admitted, err := insertArchives(ctx, t.tx, plan.Archives, plan.Tuples)
	if err != nil {
		return nil, err
	}
	return admitted, t.nameTasks(ctx, depth, plan.Tasks)
}

// begunBefore reads which of urls are pending pages at depth whose
// capture the runner began before the crawl was closed, with that
// capture's task: those with a begin in crawl_runner_results, which a
// RunnerBegin statement writes only when it sees the crawl running, so
// before the close by the database's order. The begin's own time is the
// runner's clock and is not compared with the close's, which another
// process's clock may have written.
func (t *levelTx) begunBefore(ctx context.Context, depth int, urls []string) (map[string]int64, map[string]string, error) {
	pending, begun := map[string]int64{}, map[string]string{}
	if len(urls) == 0 {
		return pending, begun, nil
	}
	rows, err := t.tx.Query(ctx, `
		SELECT p.id, p.url, r.task_id FROM crawl_pages p JOIN unnest($3::text[]) AS x(url)
		  ON p.url_hash = digest(x.url, 'sha256') AND p.url = x.url
		JOIN crawl_runner_results r ON r.crawl_id = p.crawl_id AND r.url = p.url AND r.depth = p.depth
		WHERE p.crawl_id = $1 AND p.depth = $2 AND p.state = 'pending'
		  AND r.task_id IS NOT NULL`, t.crawlID, depth, urls)
	if err != nil {
		return nil, nil, fmt.Errorf("read the captures begun before the crawl closed: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var u, task string
		if err := rows.Scan(&id, &u, &task); err != nil {
			return nil, nil, err
		}
		pending[u], begun[u] = id, task
	}
	return pending, begun, rows.Err()
}

// levelTx is the transaction in which one level report is applied. Every
// method works on the crawl the transaction was opened for.
type levelTx struct {
	tx      pgx.Tx
	crawlID string
}

// state reads the crawl (locking it) and what the report of depth needs.
func (t *levelTx) state(ctx context.Context, depth int, urls []string) (ledger.LevelState, error) {
	var st ledger.LevelState
	var err error
	if st.Crawl, err = t.lock(ctx); err != nil {
		return st, err
	}
	if st.Accepted, err = crawlLevel(ctx, t.tx, t.crawlID, depth); err != nil || st.Accepted != nil {
		return st, err
	}
	if st.AtDepth, err = t.countAtDepth(ctx, depth); err != nil {
		return st, err
	}
	if st.Pending, err = t.pending(ctx, depth, urls); err != nil {
		return st, err
	}
	if depth < st.Crawl.MaxDepth {
		if st.Known, err = t.known(ctx); err != nil {
			return st, err
		}
		st.KnownCount = len(st.Known)
	} else if err = t.tx.QueryRow(ctx, `SELECT count(*) FROM crawl_pages WHERE crawl_id = $1`, t.crawlID).Scan(&st.KnownCount); err != nil {
		return st, fmt.Errorf("count crawl pages: %w", err)
	}
	return st, nil
}

// apply writes plan: pages closed, submissions, archives with their outbox
// rows, decisions, the next level, the totals and the level's record.
func (t *levelTx) apply(ctx context.Context, depth int, plan *ledger.LevelPlan) (ledger.LevelApplied, error) {
	var out ledger.LevelApplied
	closed, err := t.closePages(ctx, depth, plan.Closes)
	if err != nil {
		return out, err
	}
	if len(closed) != len(plan.Closes) {
		return out, fmt.Errorf("crawl %s depth %d: %d of %d pages were no longer pending under the level's lock", t.crawlID, depth, len(plan.Closes)-len(closed), len(plan.Closes))
	}
	if err := t.insertSubmissions(ctx, plan.Submissions); err != nil {
		return out, err
	}
	if out.Admitted, err = insertArchives(ctx, t.tx, plan.Archives, plan.Tuples); err != nil {
		return out, err
	}
	if err := t.replaceDecisions(ctx, depth, plan.Decisions); err != nil {
		return out, err
	}
	if len(plan.Next) > 0 {
		if out.Next, err = t.insertPages(ctx, depth+1, plan.Next); err != nil {
			return out, err
		}
	}
	totals := plan.Totals
	totals.ArchivesAdmitted, totals.NextPages = len(out.Admitted), len(out.Next)
	if len(out.Admitted) < len(plan.Archives) {
		// Some were admitted before the report (AdmitCaptured): the level
		// counts every archive of its pages in the ledger.
		if totals.ArchivesAdmitted, err = t.countAdmitted(ctx, plan.Archives); err != nil {
			return out, err
		}
	}
	if err := t.finishLevel(ctx, totals); err != nil {
		return out, err
	}
	if !totals.Done {
		hosts := make([]string, 0, len(out.Next))
		seen := map[string]bool{}
		for _, p := range out.Next {
			if !seen[p.Host] {
				seen[p.Host] = true
				hosts = append(hosts, p.Host)
			}
		}
		if out.LastFinished, err = hostsLastFinished(ctx, t.tx, t.crawlID, hosts); err != nil {
			return out, err
		}
	}
	return out, nil
}

// nameTasks records the capture job of pending pages at depth (matched by
// URL), as a level's close does, leaving them pending.
func (t *levelTx) nameTasks(ctx context.Context, depth int, tasks []ledger.PageTask) error {
	if len(tasks) == 0 {
		return nil
	}
	urls, ids := make([]string, len(tasks)), make([]string, len(tasks))
	subs, fins := make([]*time.Time, len(tasks)), make([]*time.Time, len(tasks))
	for i, p := range tasks {
		urls[i], ids[i], subs[i], fins[i] = p.URL, p.TaskID, p.SubmittedAt, p.FinishedAt
	}
	_, err := t.tx.Exec(ctx, `
		UPDATE crawl_pages p SET task_id = x.task_id,
		       submitted_at = coalesce(x.submitted_at, p.submitted_at), finished_at = coalesce(x.finished_at, p.finished_at)
		FROM unnest($3::text[], $4::text[], $5::timestamptz[], $6::timestamptz[]) AS x(url, task_id, submitted_at, finished_at)
		WHERE p.crawl_id = $1 AND p.depth = $2 AND p.state = 'pending'
		  AND p.url_hash = digest(x.url, 'sha256') AND p.url = x.url`, t.crawlID, depth, urls, ids, subs, fins)
	if err != nil {
		return fmt.Errorf("name the pages' capture jobs: %w", err)
	}
	return nil
}

// countAdmitted counts the archives of rows that are in the ledger as
// the same capture (bucket, object key and task).
func (t *levelTx) countAdmitted(ctx context.Context, rows []ledger.NewArchive) (int, error) {
	buckets, keys, tasks := make([]string, len(rows)), make([]string, len(rows)), make([]string, len(rows))
	for i, a := range rows {
		buckets[i], keys[i], tasks[i] = a.Bucket, a.ObjectKey, a.TaskID
	}
	var n int
	err := t.tx.QueryRow(ctx, `
		SELECT count(*) FROM archives a JOIN unnest($1::text[], $2::text[], $3::uuid[]) AS x(bucket, object_key, task_id)
		  ON a.bucket = x.bucket AND a.object_key = x.object_key AND a.task_id = x.task_id`, buckets, keys, tasks).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count admitted archives: %w", err)
	}
	return n, nil
}

// pending maps each of urls that is a pending page at depth to its id.
func (t *levelTx) pending(ctx context.Context, depth int, urls []string) (map[string]int64, error) {
	out := make(map[string]int64, len(urls))
	if len(urls) == 0 {
		return out, nil
	}
	rows, err := t.tx.Query(ctx, `
		SELECT p.id, p.url FROM crawl_pages p JOIN unnest($3::text[]) AS x(url)
		  ON p.url_hash = digest(x.url, 'sha256') AND p.url = x.url
		WHERE p.crawl_id = $1 AND p.depth = $2 AND p.state = 'pending'`, t.crawlID, depth, urls)
	if err != nil {
		return nil, fmt.Errorf("read pending crawl pages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var u string
		if err := rows.Scan(&id, &u); err != nil {
			return nil, err
		}
		out[u] = id
	}
	return out, rows.Err()
}

// lock reads the crawl and locks its row until the transaction ends, which
// serialises reports, /failed and stall closing of one crawl.
func (t *levelTx) lock(ctx context.Context) (ledger.Crawl, error) {
	var c ledger.Crawl
	err := t.tx.QueryRow(ctx, `SELECT `+crawlCols+` FROM crawls c WHERE c.id = $1 FOR UPDATE`, t.crawlID).Scan(crawlTargets(&c)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return ledger.Crawl{}, ledger.ErrNotFound
	}
	if err != nil {
		return ledger.Crawl{}, fmt.Errorf("lock crawl: %w", err)
	}
	return c, nil
}

// countAtDepth returns how many pages the crawl has at depth.
func (t *levelTx) countAtDepth(ctx context.Context, depth int) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND depth = $2`, t.crawlID, depth).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count crawl pages: %w", err)
	}
	return n, nil
}

// closePages closes the pending pages at depth that pages name (matched by
// URL through the (crawl_id, url_hash) index) and returns those it closed.
// Pages already closed, at another depth, or unknown are left alone.
func (t *levelTx) closePages(ctx context.Context, depth int, pages []ledger.PageClose) ([]ledger.ClosedPage, error) {
	if len(pages) == 0 {
		return nil, nil
	}
	n := len(pages)
	urls, states := make([]string, n), make([]string, n)
	skip, task, corr, final := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	sub, fin := make([]*time.Time, n), make([]*time.Time, n)
	for i, p := range pages {
		urls[i], states[i], skip[i], task[i], corr[i], final[i] = p.URL, p.State, p.SkipReason, p.TaskID, p.CorrelationID, p.FinalURL
		sub[i], fin[i] = p.SubmittedAt, p.FinishedAt
	}
	rows, err := t.tx.Query(ctx, `
		UPDATE crawl_pages p
		SET state = x.state, skip_reason = x.skip_reason, task_id = x.task_id, correlation_id = x.correlation_id,
		    submitted_at = x.submitted_at, finished_at = x.finished_at, final_url = x.final_url
		FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[], $10::text[])
		     AS x(url, state, skip_reason, task_id, correlation_id, submitted_at, finished_at, final_url)
		WHERE p.crawl_id = $1 AND p.url_hash = digest(x.url, 'sha256') AND p.url = x.url
		  AND p.depth = $2 AND p.state = 'pending'
		RETURNING p.id, p.url, p.state`,
		t.crawlID, depth, urls, states, skip, task, corr, sub, fin, final)
	if err != nil {
		return nil, fmt.Errorf("close crawl pages: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.ClosedPage])
}

// insertSubmissions records capture submissions. A task already recorded is
// left as it is, unless the new row is verified and the recorded one has
// another correlation (see ledger.NewSubmission.Verified).
func (t *levelTx) insertSubmissions(ctx context.Context, subs []ledger.NewSubmission) error {
	if len(subs) == 0 {
		return nil
	}
	n := len(subs)
	task, org := make([]string, n), make([]string, n)
	corr, by, key, merr := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n)
	at := make([]time.Time, n)
	verified := make([]bool, n)
	for i, s := range subs {
		task[i], org[i], corr[i], by[i], key[i], merr[i], at[i], verified[i] = s.TaskID, s.OrgID, s.CorrelationID, s.SubmittedBy, s.ManifestKey, s.ManifestError, s.SubmittedAt, s.Verified
	}
	// Unverified rows never replace anything; verified ones replace a row of
	// another correlation. Two statements keep each rule plain.
	for _, v := range []bool{false, true} {
		onConflict := `DO NOTHING`
		if v {
			onConflict = `DO UPDATE
			SET correlation_id = EXCLUDED.correlation_id, org_id = EXCLUDED.org_id, submitted_by = EXCLUDED.submitted_by,
			    manifest_key = EXCLUDED.manifest_key, manifest_error = EXCLUDED.manifest_error, submitted_at = EXCLUDED.submitted_at
			WHERE c.correlation_id IS DISTINCT FROM EXCLUDED.correlation_id`
		}
		_, err := t.tx.Exec(ctx, `
			INSERT INTO capture_submissions AS c (task_id, correlation_id, org_id, submitted_by, manifest_key, manifest_error, submitted_at)
			SELECT x.task_id, x.correlation_id, x.org_id, x.submitted_by, x.manifest_key, x.manifest_error, x.submitted_at
			FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[], $8::bool[])
			     AS x(task_id, correlation_id, org_id, submitted_by, manifest_key, manifest_error, submitted_at, verified)
			WHERE x.verified = $9
			ON CONFLICT (task_id) `+onConflict,
			task, corr, org, by, key, merr, at, verified, v)
		if err != nil {
			return fmt.Errorf("record capture submissions: %w", err)
		}
	}
	return nil
}

type archiveJSON struct {
	TaskID        string    `json:"task_id"`
	CorrelationID *string   `json:"correlation_id"`
	Bucket        string    `json:"bucket"`
	ObjectKey     string    `json:"object_key"`
	SourceURL     string    `json:"source_url"`
	Labels        []string  `json:"labels"`
	WaczComplete  *bool     `json:"wacz_complete"`
	Signed        *bool     `json:"signed"`
	CapturedAt    time.Time `json:"captured_at"`
}

// insertArchives is the one admission rule in SQL: each row not yet in the
// ledger at its (bucket, object_key) is inserted together with the outbox row
// carrying tuples(i, archiveID), in tx, and the grantees those tuples give
// the archive's job are recorded for the list (recordSources); a row already
// there queues nothing (its tuples were queued the first time). It returns the indexes of the rows
// inserted, ascending. Rows must have distinct (bucket, object_key).
func insertArchives(ctx context.Context, tx pgx.Tx, rows []ledger.NewArchive, tuples func(i int, archiveID string) ledger.OutboxPayload) ([]int, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	in := make([]archiveJSON, len(rows))
	at := make(map[[2]string]int, len(rows))
	for i, a := range rows {
		labels := a.Labels
		if labels == nil {
			labels = []string{}
		}
		in[i] = archiveJSON{a.TaskID, a.CorrelationID, a.Bucket, a.ObjectKey, a.SourceURL, labels, a.WaczComplete, a.Signed, a.CapturedAt}
		at[[2]string{a.Bucket, a.ObjectKey}] = i
	}
	data, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	res, err := tx.Query(ctx, `
		INSERT INTO archives (task_id, correlation_id, bucket, object_key, source_url, labels, wacz_complete, signed, captured_at)
		SELECT task_id, correlation_id, bucket, object_key, source_url, labels, wacz_complete, signed, captured_at
		FROM jsonb_to_recordset($1::jsonb) AS x(task_id uuid, correlation_id text, bucket text, object_key text,
		     source_url text, labels text[], wacz_complete boolean, signed boolean, captured_at timestamptz)
		ON CONFLICT (bucket, object_key) DO NOTHING
		RETURNING id::text, bucket, object_key`, string(data))
	if err != nil {
		return nil, fmt.Errorf("insert archives: %w", err)
	}
	type inserted struct{ ID, Bucket, Key string }
	ins, err := pgx.CollectRows(res, pgx.RowToStructByPos[inserted])
	if err != nil {
		return nil, fmt.Errorf("insert archives: %w", err)
	}
	if len(ins) == 0 {
		return nil, nil
	}
	idx := make([]int, len(ins))
	payloads := make([]string, len(ins))
	queued := make([]ledger.OutboxPayload, len(ins))
	for j, r := range ins {
		i := at[[2]string{r.Bucket, r.Key}]
		queued[j] = tuples(i, r.ID)
		p, err := json.Marshal(queued[j])
		if err != nil {
			return nil, err
		}
		idx[j], payloads[j] = i, string(p)
	}
	// Queue in the order the rows were given.
	order := make([]int, len(ins))
	for j := range order {
		order[j] = j
	}
	slices.SortFunc(order, func(a, b int) int { return idx[a] - idx[b] })
	sortedIdx, sortedPayloads := make([]int, len(ins)), make([]string, len(ins))
	for k, j := range order {
		sortedIdx[k], sortedPayloads[k] = idx[j], payloads[j]
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO fga_outbox (payload)
		SELECT p::jsonb FROM unnest($1::text[]) WITH ORDINALITY AS x(p, i) ORDER BY x.i`, sortedPayloads); err != nil {
		return nil, fmt.Errorf("queue tuples: %w", err)
	}
	fresh := make([]string, len(ins))
	for j, r := range ins {
		fresh[j] = r.ID
	}
	if err := recordSources(ctx, tx, queued, fresh); err != nil {
		return nil, err
	}
	return sortedIdx, nil
}

// replaceDecisions replaces the crawl's decision rows of depth with rows
// (their Depth is ignored).
func (t *levelTx) replaceDecisions(ctx context.Context, depth int, rows []ledger.DecisionRecord) error {
	if _, err := t.tx.Exec(ctx, `DELETE FROM crawl_decisions WHERE crawl_id = $1 AND depth = $2`, t.crawlID, depth); err != nil {
		return fmt.Errorf("replace crawl decisions: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	for i := range rows {
		if rows[i].Samples == nil {
			rows[i].Samples = []string{}
		}
	}
	data, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	_, err = t.tx.Exec(ctx, `
		INSERT INTO crawl_decisions (crawl_id, depth, rule, action, hostname, links, samples)
		SELECT $1, $2, rule, action, hostname, links, samples
		FROM jsonb_to_recordset($3::jsonb) AS x(rule int, action text, hostname text, links int, samples text[])`,
		t.crawlID, depth, string(data))
	if err != nil {
		return fmt.Errorf("replace crawl decisions: %w", err)
	}
	return nil
}

// known returns the url_hash (sha256 of the URL) of every page of the
// crawl, whatever its state.
func (t *levelTx) known(ctx context.Context) (map[[32]byte]bool, error) {
	rows, err := t.tx.Query(ctx, `SELECT url_hash FROM crawl_pages WHERE crawl_id = $1`, t.crawlID)
	if err != nil {
		return nil, fmt.Errorf("read crawl page hashes: %w", err)
	}
	defer rows.Close()
	out := map[[32]byte]bool{}
	var h []byte
	for rows.Next() {
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		if len(h) != 32 {
			return nil, fmt.Errorf("crawl %s: a url_hash of %d bytes", t.crawlID, len(h))
		}
		out[[32]byte(h)] = true
	}
	return out, rows.Err()
}

// insertPages inserts pages at depth (ON CONFLICT DO NOTHING) and returns the
// rows inserted, in id order: they are the next level.
func (t *levelTx) insertPages(ctx context.Context, depth int, pages []ledger.NewPage) ([]ledger.PageRef, error) {
	urls, hosts, from := make([]string, len(pages)), make([]string, len(pages)), make([]*int64, len(pages))
	for i, p := range pages {
		urls[i], hosts[i], from[i] = p.URL, p.Host, p.From
	}
	return insertPages(ctx, t.tx, t.crawlID, depth, urls, hosts, from)
}

// finishLevel adds the report's counts to the crawl, records its stop
// reason (the first one sticks), closes it as succeeded when done, bumps
// progressed_at, and records the report in crawl_levels.
func (t *levelTx) finishLevel(ctx context.Context, l ledger.LevelTotals) error {
	b := &pgx.Batch{}
	// A crawl that ends having captured nothing because pages failed ends
	// failed, with its commonest failure as the reason: "succeeded" with
	// nothing captured would hide what went wrong.
	b.Queue(`
		WITH failed AS (
			SELECT coalesce(skip_reason, 'no reason recorded') AS reason, count(*) AS n, sum(count(*)) OVER () AS total
			FROM crawl_pages WHERE crawl_id = $1 AND state = 'failed'
			GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1)
		UPDATE crawls c SET pages_captured = c.pages_captured + $2, pages_discovered = c.pages_discovered + $3,
		       stop_reason = CASE WHEN $5 AND c.pages_captured + $2 = 0 AND f.n IS NOT NULL THEN 'failed' ELSE COALESCE(c.stop_reason, $4) END,
		       state = CASE WHEN NOT $5 THEN c.state
		                    WHEN c.pages_captured + $2 = 0 AND f.n IS NOT NULL THEN 'failed'
		                    ELSE 'succeeded' END,
		       error = CASE WHEN $5 AND c.pages_captured + $2 = 0 AND f.n IS NOT NULL
		                    THEN 'no page was captured: ' || f.total || ' failed, most (' || f.n || ') with: ' || f.reason
		                    ELSE c.error END,
		       finished_at = CASE WHEN $5 THEN $6 ELSE c.finished_at END,
		       progressed_at = $6
		FROM (SELECT 1) one LEFT JOIN failed f ON true
		WHERE c.id = $1`, t.crawlID, l.PagesCaptured, l.PagesDiscovered, l.CrawlStopReason, l.Done, l.Now)
	refused := l.Refused
	if refused == nil {
		refused = []byte("[]")
	}
	b.Queue(`
		INSERT INTO crawl_levels (crawl_id, depth, digest, results, pages_closed, pages_captured, pages_recovered,
		                          archives_admitted, pages_discovered, next_pages, stop_reason, refused, reported_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13)`,
		t.crawlID, l.Depth, l.Digest, l.Results, l.PagesClosed, l.PagesCaptured, l.PagesRecovered,
		l.ArchivesAdmitted, l.PagesDiscovered, l.NextPages, l.StopReason, string(refused), l.Now)
	if err := t.tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("finish level: %w", err)
	}
	return nil
}
