package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The decision records of crawls: per level, per domain, and robots.

// CrawlDecisions returns the crawl's decision rows by depth, rule, action
// and hostname.
func (s *Store) CrawlDecisions(ctx context.Context, id string) ([]ledger.DecisionRecord, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT depth, rule, action, hostname, links, samples FROM crawl_decisions
		WHERE crawl_id = $1 ORDER BY depth, rule, action, hostname`, id)
	if err != nil {
		return nil, fmt.Errorf("read crawl decisions: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.DecisionRecord])
}

// CrawlRobots derives the robots decisions of a crawl from its pages skipped
// with reason "robots".
func (s *Store) CrawlRobots(ctx context.Context, id string, samples int) ([]ledger.RobotsRecord, error) {
	rows, err := s.Pool.Query(ctx, `
		SELECT hostname, count(*)::int, (array_agg(url ORDER BY id))[1:$2]
		FROM (SELECT id, url, regexp_replace(host, ':[0-9]+$', '') AS hostname
		      FROM crawl_pages WHERE crawl_id = $1 AND state = 'skipped' AND skip_reason = 'robots') p
		GROUP BY hostname ORDER BY hostname`, id, samples)
	if err != nil {
		return nil, fmt.Errorf("read robots decisions: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.RobotsRecord])
}

// DecisionsByDomain returns up to limit decision rows with action for
// hostnames equal to domain or under it at a label boundary, of crawls
// started at or after since, newest crawl first. The lookup uses the index
// on reverse(hostname).
func (s *Store) DecisionsByDomain(ctx context.Context, scope ledger.CrawlScope, domain string, since time.Time, action string, limit int) ([]ledger.DomainDecision, error) {
	rev := []rune(domain)
	slices.Reverse(rev)
	like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(string(rev)) + "%"
	args := []any{like, domain, action, since, limit}
	inScope := scopeWhere(scope, &args, "c")
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
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ledger.DomainDecision])
}
