package postgres

import (
	"cmp"
	"context"
	"encoding/json"
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

// NewCrawl is a crawl to insert with its depth-0 pages.
type NewCrawl struct {
	// Seeds are normalised and distinct; Hosts[i] is the host (with port)
	// of Seeds[i].
	Seeds, Hosts []string
	// Rules is the pinned rule list, as JSON.
	Rules                                               []byte
	MaxDepth, MaxPages, PerHostDelayMs, HostParallelism int
	OrgID, RequestedBy                                  string
	Now                                                 time.Time
}

// PageRef is a crawl page as a level's frontier needs it.
type PageRef struct {
	ID   int64
	URL  string
	Host string
}

// ActiveCrawlError is a crawl refused because another one is running
// (crawls_single_active_idx). CrawlID and StartedAt are those of the running
// crawl; they are empty when it could not be read (it may have finished in
// the meantime).
type ActiveCrawlError struct {
	CrawlID   string
	StartedAt time.Time
}

func (e *ActiveCrawlError) Error() string {
	if e.CrawlID == "" {
		return "a crawl is already in progress"
	}
	return "a crawl is already in progress: " + e.CrawlID
}

// InsertCrawl inserts a running crawl and its depth-0 pages in one
// transaction and returns the crawl id and the pages inserted (duplicate
// seeds collapse). A second running crawl is an *ActiveCrawlError; only a
// violation of crawls_single_active_idx is translated.
func (s *Store) InsertCrawl(ctx context.Context, c NewCrawl) (string, []PageRef, error) {
	var id string
	var pages []PageRef
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
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
	if IsUniqueViolation(err, "crawls_single_active_idx") {
		active := &ActiveCrawlError{}
		rerr := s.Pool.QueryRow(ctx, `SELECT id::text, started_at FROM crawls WHERE state = 'running' LIMIT 1`).
			Scan(&active.CrawlID, &active.StartedAt)
		if rerr != nil && !errors.Is(rerr, pgx.ErrNoRows) {
			return "", nil, fmt.Errorf("%w (and reading the running crawl failed: %v)", active, rerr)
		}
		return "", nil, active
	}
	if err != nil {
		return "", nil, fmt.Errorf("insert crawl: %w", err)
	}
	return id, pages, nil
}

// insertPages inserts pages at depth with ON CONFLICT DO NOTHING and returns
// the rows inserted, in id order. from may be nil (no discovered_from).
func insertPages(ctx context.Context, tx pgx.Tx, crawlID string, depth int, urls, hosts []string, from []*int64) ([]PageRef, error) {
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
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[PageRef])
	if err != nil {
		return nil, fmt.Errorf("insert crawl pages: %w", err)
	}
	slices.SortFunc(out, func(a, b PageRef) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Crawl is one crawls row.
type Crawl struct {
	ID              string
	Seeds           []string
	Rules           []byte // JSON
	MaxDepth        int
	MaxPages        int
	PerHostDelayMs  int
	HostParallelism int
	OrgID           string
	RequestedBy     string
	State           string
	StopReason      *string
	StartedAt       time.Time
	FinishedAt      *time.Time
	ProgressedAt    time.Time
	PagesDiscovered int
	PagesCaptured   int
	Error           *string
	LastJobID       *string
	LastJobDepth    *int
}

const crawlCols = `c.id::text, c.seeds, c.rules, c.max_depth, c.max_pages, c.per_host_delay_ms, c.host_parallelism,
	c.org_id, c.requested_by, c.state, c.stop_reason, c.started_at, c.finished_at, c.progressed_at,
	c.pages_discovered, c.pages_captured, c.error, c.last_job_id, c.last_job_depth`

func (c *Crawl) scanTargets() []any {
	return []any{&c.ID, &c.Seeds, &c.Rules, &c.MaxDepth, &c.MaxPages, &c.PerHostDelayMs, &c.HostParallelism,
		&c.OrgID, &c.RequestedBy, &c.State, &c.StopReason, &c.StartedAt, &c.FinishedAt, &c.ProgressedAt,
		&c.PagesDiscovered, &c.PagesCaptured, &c.Error, &c.LastJobID, &c.LastJobDepth}
}

// Crawl reads one crawl, or ledger.ErrNotFound. id must be a UUID.
func (s *Store) Crawl(ctx context.Context, id string) (Crawl, error) {
	var c Crawl
	err := s.Pool.QueryRow(ctx, `SELECT `+crawlCols+` FROM crawls c WHERE c.id = $1`, id).Scan(c.scanTargets()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return Crawl{}, ledger.ErrNotFound
	}
	if err != nil {
		return Crawl{}, fmt.Errorf("read crawl: %w", err)
	}
	return c, nil
}

// CrawlFailure is a crawl page that failed; Reason is its skip_reason.
type CrawlFailure struct {
	URL    string
	Depth  int
	Reason *string
}

// CrawlFailures returns the crawl's last limit failed pages, newest first.
func (s *Store) CrawlFailures(ctx context.Context, id string, limit int) ([]CrawlFailure, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT url, depth, skip_reason FROM crawl_pages
		WHERE crawl_id = $1 AND state = 'failed' ORDER BY id DESC LIMIT $2`, id, limit)
	if err != nil {
		return nil, fmt.Errorf("read crawl failures: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[CrawlFailure])
}

// CrawlCursor is a (started_at, id) position in the newest-first crawl list.
type CrawlCursor struct {
	StartedAt time.Time
	ID        string
}

// CrawlRow is a crawl as the list shows it: the row and the number of
// distinct archives its pages produced.
type CrawlRow struct {
	Crawl
	WaczCount int
}

// CrawlScope is the part of the crawls a caller may see: those of Orgs
// and those Subject requested.
type CrawlScope struct {
	Orgs    []string
	Subject string
}

func (sc CrawlScope) where(args *[]any, alias string) string {
	*args = append(*args, sc.Orgs, sc.Subject)
	return fmt.Sprintf("(%[1]s.org_id = ANY($%[2]d::text[]) OR %[1]s.requested_by = $%[3]d)", alias, len(*args)-1, len(*args))
}

// ListCrawls returns up to limit crawls of scope strictly after cursor in
// newest-first order (from the top when cursor is nil), only those in state
// when state is not empty.
func (s *Store) ListCrawls(ctx context.Context, scope CrawlScope, state string, cursor *CrawlCursor, limit int) ([]CrawlRow, error) {
	args := []any{limit}
	where := []string{scope.where(&args, "c")}
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
		 WHERE p.crawl_id = c.id AND p.task_id IS NOT NULL)
		FROM crawls c`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY c.started_at DESC, c.id DESC LIMIT $1`
	rows, err := s.Pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list crawls: %w", err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (CrawlRow, error) {
		var c CrawlRow
		err := r.Scan(append(c.scanTargets(), &c.WaczCount)...)
		return c, err
	})
}

// FailCrawl closes a running crawl as failed with reason; false when no
// running crawl has that id.
func (s *Store) FailCrawl(ctx context.Context, id, reason string, now time.Time) (bool, error) {
	tag, err := s.Pool.Exec(ctx, `
		UPDATE crawls SET state = 'failed', stop_reason = 'failed', finished_at = $3, progressed_at = $3, error = $2
		WHERE id = $1 AND state = 'running'`, id, reason, now)
	if err != nil {
		return false, fmt.Errorf("fail crawl: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// CloseStalledCrawls closes as failed, with reason, every running crawl whose
// last progress is older than before, and returns their ids.
func (s *Store) CloseStalledCrawls(ctx context.Context, before time.Time, reason string, now time.Time) ([]string, error) {
	rows, err := s.Pool.Query(ctx, `
		UPDATE crawls SET state = 'failed', stop_reason = 'failed', finished_at = $3, error = $2
		WHERE state = 'running' AND progressed_at < $1
		RETURNING id::text`, before, reason, now)
	if err != nil {
		return nil, fmt.Errorf("close stalled crawls: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
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

// DecisionRecord is one crawl_decisions row.
type DecisionRecord struct {
	Depth    int      `json:"depth"`
	Rule     int      `json:"rule"`
	Action   string   `json:"action"`
	Hostname string   `json:"hostname"`
	Links    int      `json:"links"`
	Samples  []string `json:"samples"`
}

// CrawlDecisions returns the crawl's decision rows by depth, rule, action
// and hostname.
func (s *Store) CrawlDecisions(ctx context.Context, id string) ([]DecisionRecord, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT depth, rule, action, hostname, links, samples FROM crawl_decisions
		WHERE crawl_id = $1 ORDER BY depth, rule, action, hostname`, id)
	if err != nil {
		return nil, fmt.Errorf("read crawl decisions: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[DecisionRecord])
}

// RobotsRecord is, for one hostname (port stripped), the pages of a crawl
// not captured because of robots.txt, with up to a few samples in the order
// they were found.
type RobotsRecord struct {
	Hostname string
	Pages    int
	Samples  []string
}

// CrawlRobots derives the robots decisions of a crawl from its pages skipped
// with reason "robots".
func (s *Store) CrawlRobots(ctx context.Context, id string, samples int) ([]RobotsRecord, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT hostname, count(*)::int, (array_agg(url ORDER BY id))[1:$2]
		FROM (SELECT id, url, regexp_replace(host, ':[0-9]+$', '') AS hostname
		      FROM crawl_pages WHERE crawl_id = $1 AND state = 'skipped' AND skip_reason = 'robots') p
		GROUP BY hostname ORDER BY hostname`, id, samples)
	if err != nil {
		return nil, fmt.Errorf("read robots decisions: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[RobotsRecord])
}

// DomainDecision is a decision row of some crawl for a hostname under a
// domain, with the crawl's start, seeds and the pattern of the rule (nil
// for rule 0, no rule matched).
type DomainDecision struct {
	CrawlID   string
	StartedAt time.Time
	Seeds     []string
	Depth     int
	Rule      int
	Action    string
	Pattern   *string
	Hostname  string
	Links     int
}

// DecisionsByDomain returns up to limit decision rows with action for
// hostnames equal to domain or under it at a label boundary, of crawls
// started at or after since, newest crawl first. The lookup uses the index
// on reverse(hostname).
func (s *Store) DecisionsByDomain(ctx context.Context, scope CrawlScope, domain string, since time.Time, action string, limit int) ([]DomainDecision, error) {
	rev := []rune(domain)
	slices.Reverse(rev)
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(string(rev)) + "%"
	args := []any{like, domain, action, since, limit}
	inScope := scope.where(&args, "c")
	rows, err := s.Pool.Query(ctx, `
		SELECT c.id::text, c.started_at, c.seeds, d.depth, d.rule, d.action,
		       CASE WHEN d.rule > 0 THEN (SELECT e.value FROM jsonb_each_text(c.rules -> (d.rule - 1)) e LIMIT 1) END,
		       d.hostname, d.links
		FROM crawl_decisions d JOIN crawls c ON c.id = d.crawl_id
		WHERE reverse(d.hostname) LIKE $1
		  AND (d.hostname = $2 OR right(d.hostname, length($2) + 1) = '.' || $2)
		  AND d.action = $3 AND c.started_at >= $4 AND `+inScope+`
		ORDER BY c.started_at DESC, c.id DESC, d.depth, d.rule, d.hostname
		LIMIT $5`, args...)
	if err != nil {
		return nil, fmt.Errorf("read decisions by domain: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[DomainDecision])
}

// LevelRecord is a crawl_levels row: a level report the crawl accepted.
type LevelRecord struct {
	Depth            int
	Digest           []byte
	Results          int
	PagesClosed      int
	PagesCaptured    int
	PagesRecovered   int
	ArchivesAdmitted int
	PagesDiscovered  int
	NextPages        int
	StopReason       *string
	// Refused is the JSON array of the results the report was refused for
	// (the crawl package owns its shape); nil is stored as [].
	Refused    []byte
	ReportedAt time.Time
}

const levelCols = `depth, digest, results, pages_closed, pages_captured, pages_recovered, archives_admitted,
	pages_discovered, next_pages, stop_reason, refused, reported_at`

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func crawlLevel(ctx context.Context, q querier, id string, depth int) (*LevelRecord, error) {
	var l LevelRecord
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
func (s *Store) CrawlLevel(ctx context.Context, id string, depth int) (*LevelRecord, error) {
	return crawlLevel(ctx, s.Pool, id, depth)
}

// PagesAtDepth returns the crawl's pages at depth in id order.
func (s *Store) PagesAtDepth(ctx context.Context, id string, depth int) ([]PageRef, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, url, host FROM crawl_pages WHERE crawl_id = $1 AND depth = $2 ORDER BY id`, id, depth)
	if err != nil {
		return nil, fmt.Errorf("read crawl pages: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[PageRef])
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

// InLevelTx runs fn in one transaction (committed when fn returns nil).
func (s *Store) InLevelTx(ctx context.Context, crawlID string, fn func(tx *LevelTx) error) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		return fn(&LevelTx{tx: tx, crawlID: crawlID})
	})
}

// LevelTx is the transaction in which one level report is applied. Every
// method works on the crawl the transaction was opened for.
type LevelTx struct {
	tx      pgx.Tx
	crawlID string
}

// Lock reads the crawl and locks its row until the transaction ends, which
// serialises reports, /failed and stall closing of one crawl.
func (t *LevelTx) Lock(ctx context.Context) (Crawl, error) {
	var c Crawl
	err := t.tx.QueryRow(ctx, `SELECT `+crawlCols+` FROM crawls c WHERE c.id = $1 FOR UPDATE`, t.crawlID).Scan(c.scanTargets()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return Crawl{}, ledger.ErrNotFound
	}
	if err != nil {
		return Crawl{}, fmt.Errorf("lock crawl: %w", err)
	}
	return c, nil
}

// Level returns the accepted report of depth, or nil.
func (t *LevelTx) Level(ctx context.Context, depth int) (*LevelRecord, error) {
	return crawlLevel(ctx, t.tx, t.crawlID, depth)
}

// CountAtDepth returns how many pages the crawl has at depth.
func (t *LevelTx) CountAtDepth(ctx context.Context, depth int) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, `SELECT count(*) FROM crawl_pages WHERE crawl_id = $1 AND depth = $2`, t.crawlID, depth).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count crawl pages: %w", err)
	}
	return n, nil
}

// PageClose is how a level report closes one page.
type PageClose struct {
	URL           string // normalised
	State         string // captured | failed | skipped
	SkipReason    *string
	TaskID        *string
	CorrelationID *string
	SubmittedAt   *time.Time
	FinishedAt    *time.Time
	FinalURL      *string
}

// ClosedPage is a page a report closed.
type ClosedPage struct {
	ID    int64
	URL   string
	State string
}

// ClosePages closes the pending pages at depth that pages name (matched by
// URL through the (crawl_id, url_hash) index) and returns those it closed.
// Pages already closed, at another depth, or unknown are left alone.
func (t *LevelTx) ClosePages(ctx context.Context, depth int, pages []PageClose) ([]ClosedPage, error) {
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
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ClosedPage])
}

// NewSubmission is a capture_submissions row.
type NewSubmission struct {
	TaskID        string
	CorrelationID *string
	OrgID         string
	SubmittedBy   *string
	ManifestKey   *string
	ManifestError *string
	SubmittedAt   time.Time
	// Verified says the manifest was read and bound to the reporting crawl
	// (task, correlation, URL). A verified row replaces a row of the same
	// task recorded under another correlation: that one was a claim nobody
	// could check when it was made (its manifest was not there yet).
	Verified bool
}

// InsertSubmissions records capture submissions. A task already recorded is
// left as it is, unless the new row is verified and the recorded one has
// another correlation (see NewSubmission.Verified).
func (t *LevelTx) InsertSubmissions(ctx context.Context, subs []NewSubmission) error {
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

// InsertArchives admits archives in bulk inside the level's transaction
// (see insertArchives).
func (t *LevelTx) InsertArchives(ctx context.Context, rows []NewArchive, tuples func(i int, archiveID string) ledger.OutboxPayload) ([]int, error) {
	return insertArchives(ctx, t.tx, rows, tuples)
}

// insertArchives is the one admission rule in SQL: each row not yet in the
// ledger at its (bucket, object_key) is inserted together with the outbox row
// carrying tuples(i, archiveID), in tx; a row already there queues nothing
// (its tuples were queued the first time). It returns the indexes of the rows
// inserted, ascending. Rows must have distinct (bucket, object_key).
func insertArchives(ctx context.Context, tx pgx.Tx, rows []NewArchive, tuples func(i int, archiveID string) ledger.OutboxPayload) ([]int, error) {
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
	for j, r := range ins {
		i := at[[2]string{r.Bucket, r.Key}]
		p, err := json.Marshal(tuples(i, r.ID))
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
	return sortedIdx, nil
}

// ReplaceDecisions replaces the crawl's decision rows of depth with rows
// (their Depth is ignored).
func (t *LevelTx) ReplaceDecisions(ctx context.Context, depth int, rows []DecisionRecord) error {
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

// PageHashes returns the url_hash (sha256 of the URL) of every page of the
// crawl, whatever its state; their number is the crawl's known pages.
func (t *LevelTx) PageHashes(ctx context.Context) ([][]byte, error) {
	rows, err := t.tx.Query(ctx, `SELECT url_hash FROM crawl_pages WHERE crawl_id = $1`, t.crawlID)
	if err != nil {
		return nil, fmt.Errorf("read crawl page hashes: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[[]byte])
}

// NewPage is a page a level discovered.
type NewPage struct {
	URL  string
	Host string
	From *int64 // discovered_from: the page the link was read on
}

// InsertPages inserts pages at depth (ON CONFLICT DO NOTHING) and returns the
// rows inserted, in id order: they are the next level.
func (t *LevelTx) InsertPages(ctx context.Context, depth int, pages []NewPage) ([]PageRef, error) {
	urls, hosts, from := make([]string, len(pages)), make([]string, len(pages)), make([]*int64, len(pages))
	for i, p := range pages {
		urls[i], hosts[i], from[i] = p.URL, p.Host, p.From
	}
	return insertPages(ctx, t.tx, t.crawlID, depth, urls, hosts, from)
}

// LevelTotals is what an accepted report adds to its crawl.
type LevelTotals struct {
	LevelRecord
	// CrawlStopReason is coalesced into crawls.stop_reason (the first
	// reason sticks); nil leaves it.
	CrawlStopReason *string
	// Done closes the crawl as succeeded.
	Done bool
	Now  time.Time
}

// FinishLevel adds the report's counts to the crawl, records its stop
// reason (the first one sticks), closes it as succeeded when done, bumps
// progressed_at, and records the report in crawl_levels.
func (t *LevelTx) FinishLevel(ctx context.Context, l LevelTotals) error {
	b := &pgx.Batch{}
	b.Queue(`
		UPDATE crawls SET pages_captured = pages_captured + $2, pages_discovered = pages_discovered + $3,
		       stop_reason = COALESCE(stop_reason, $4),
		       state = CASE WHEN $5 THEN 'succeeded' ELSE state END,
		       finished_at = CASE WHEN $5 THEN $6 ELSE finished_at END,
		       progressed_at = $6
		WHERE id = $1`, t.crawlID, l.PagesCaptured, l.PagesDiscovered, l.CrawlStopReason, l.Done, l.Now)
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

// HostsLastFinished is Store.HostsLastFinished inside the transaction.
func (t *LevelTx) HostsLastFinished(ctx context.Context, hosts []string) (map[string]time.Time, error) {
	return hostsLastFinished(ctx, t.tx, t.crawlID, hosts)
}

// Target is one capture_targets row.
type Target struct {
	ID        int64     `json:"id"`
	OrgID     string    `json:"orgId"`
	URL       string    `json:"url"`
	Labels    []string  `json:"labels"`
	Enabled   bool      `json:"enabled"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

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

// TargetUpsert is one target AddTargets wrote: Inserted when it is new,
// Reenabled when it existed disabled.
type TargetUpsert struct {
	Target
	Inserted  bool
	Reenabled bool
}

// UpsertTargets adds org's targets at urls (normalised, distinct) with
// labels. A URL org already has is enabled again and gains the labels it
// lacks; its existing labels are kept.
func (s *Store) UpsertTargets(ctx context.Context, org string, urls, labels []string) ([]TargetUpsert, error) {
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
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (TargetUpsert, error) {
		var u TargetUpsert
		err := r.Scan(&u.ID, &u.OrgID, &u.URL, &u.Labels, &u.Enabled, &u.CreatedAt, &u.UpdatedAt, &u.Inserted, &u.Reenabled)
		return u, err
	})
}

// ListTargets returns org's targets in id order.
func (s *Store) ListTargets(ctx context.Context, org string) ([]Target, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+targetCols+` FROM capture_targets WHERE org_id = $1 ORDER BY id`, org)
	if err != nil {
		return nil, fmt.Errorf("list capture targets: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[Target])
}

// SetTargetEnabled enables or disables org's target id, or returns
// ledger.ErrNotFound.
func (s *Store) SetTargetEnabled(ctx context.Context, org string, id int64, enabled bool) (Target, error) {
	rows, err := s.Pool.Query(ctx, `
		UPDATE capture_targets SET enabled = $3, updated_at = CASE WHEN enabled = $3 THEN updated_at ELSE now() END
		WHERE org_id = $1 AND id = $2 RETURNING `+targetCols, org, id, enabled)
	if err != nil {
		return Target{}, fmt.Errorf("update capture target: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByPos[Target])
	if errors.Is(err, pgx.ErrNoRows) {
		return Target{}, ledger.ErrNotFound
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
