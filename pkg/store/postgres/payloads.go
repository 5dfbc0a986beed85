package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// maxPayloadBatch bounds the digests one capture asks about or adds (a page
// with more subresources than this is not a page a crawl meets; the rest
// are simply stored in full).
const maxPayloadBatch = 10_000

// StoredPayloads returns those of digests that a capture of crawl crawlID
// already stored in full (crawl_payloads), by digest. A crawl id that is
// not a UUID is an error naming it.
func (s *Store) StoredPayloads(ctx context.Context, crawlID string, digests []string) (map[string]ledger.StoredPayload, error) {
	id, err := uuid.Parse(crawlID)
	if err != nil {
		return nil, fmt.Errorf("crawl id %q is not a UUID", crawlID)
	}
	if len(digests) > maxPayloadBatch {
		digests = digests[:maxPayloadBatch]
	}
	rows, err := s.Pool.Query(ctx, `
		SELECT digest, url, captured_at, container FROM crawl_payloads
		WHERE crawl_id = $1 AND digest = ANY($2::text[])`, id, digests)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]ledger.StoredPayload{}
	for rows.Next() {
		var p ledger.StoredPayload
		if err := rows.Scan(&p.Digest, &p.URL, &p.Date, &p.Container); err != nil {
			return nil, err
		}
		p.Date = p.Date.UTC()
		out[p.Digest] = p
	}
	return out, rows.Err()
}

// RememberPayloads adds the payloads one WACZ of crawl crawlID stored in
// full; a digest the crawl already has keeps its first record. A crawl
// that no longer exists adds nothing (and is not an error).
func (s *Store) RememberPayloads(ctx context.Context, crawlID string, stored []ledger.StoredPayload) error {
	id, err := uuid.Parse(crawlID)
	if err != nil {
		return fmt.Errorf("crawl id %q is not a UUID", crawlID)
	}
	if len(stored) > maxPayloadBatch {
		stored = stored[:maxPayloadBatch]
	}
	if len(stored) == 0 {
		return nil
	}
	digests := make([]string, len(stored))
	urls := make([]string, len(stored))
	dates := make([]time.Time, len(stored))
	containers := make([]string, len(stored))
	for i, p := range stored {
		digests[i], urls[i], dates[i], containers[i] = p.Digest, p.URL, p.Date.UTC(), p.Container
	}
	_, err = s.Pool.Exec(ctx, `
		INSERT INTO crawl_payloads (crawl_id, digest, url, captured_at, container)
		SELECT c.id, p.digest, p.url, p.captured_at, p.container
		FROM crawls c, unnest($2::text[], $3::text[], $4::timestamptz[], $5::text[]) AS p (digest, url, captured_at, container)
		WHERE c.id = $1
		ON CONFLICT (crawl_id, digest) DO NOTHING`, id, digests, urls, dates, containers)
	return err
}
