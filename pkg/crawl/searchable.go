package crawl

import (
	"context"
	"time"
)

// CrawlSearch is how far a crawl's archives are searchable (GET
// /api/crawls/:id, `crawl status`): Archives its pages produced, Indexed
// of them in the search index now. Once the crawl has ended and every
// archive is indexed, SearchableAt is when the last one was (its
// indexed_at; after a rebuild of the index, the rebuild's time) and
// SearchableAfterMs how long after the crawl's end that was (0 when
// everything was searchable by then): the crawl's end-to-searchable time.
type CrawlSearch struct {
	Archives          int        `json:"archives"`
	Indexed           int        `json:"indexed"`
	SearchableAt      *time.Time `json:"searchableAt"`
	SearchableAfterMs *int64     `json:"searchableAfterMs"`
}

// SearchableReader is the ledger's count of a crawl's archives indexed
// (an optional part of Store: without it the view has no search member).
type SearchableReader interface {
	// CrawlSearchable returns how many archives the crawl's pages produced,
	// how many are indexed, and the latest indexed_at among them.
	CrawlSearchable(ctx context.Context, crawlID string) (archives, indexed int, last *time.Time, err error)
}

// searchable fills v.Search when the store can say.
func (s *Service) searchable(ctx context.Context, v *CrawlView) error {
	r, ok := s.Store.(SearchableReader)
	if !ok {
		return nil
	}
	n, indexed, last, err := r.CrawlSearchable(ctx, v.CrawlID)
	if err != nil {
		return err
	}
	cs := &CrawlSearch{Archives: n, Indexed: indexed}
	if v.FinishedAt != nil && n > 0 && indexed == n && last != nil {
		at := last.UTC()
		after := max(at.Sub(*v.FinishedAt).Milliseconds(), 0)
		cs.SearchableAt, cs.SearchableAfterMs = &at, &after
	}
	v.Search = cs
	return nil
}
