// Package search owns full-text search over archived pages: the indexer that
// reads each archive's pages/pages.jsonl out of its WACZ in S3 (ranged
// reads, never the whole file) into an index, the two index backends (Bleve
// on disk, OpenSearch) behind one interface, and the search itself, which
// asks the index for candidates and keeps only those of archives OpenFGA
// says the caller may view.
//
// OpenFGA stays the only authority on who may see a page. The index carries
// one narrowing fact with each page: the grantees the ledger recorded for
// its archive when it was indexed (its organizations and owner, the list's
// candidate sources), so that a search asks the index only for pages of
// archives recorded for the caller and the work of a search does not grow
// with what others' archives contain. Every hit is still confirmed with
// can_view. An archive whose recorded grantees changed after it was
// indexed is marked for re-indexing (indexed_at NULL), and until then the
// search finds it by id. The index's only state in the ledger is
// archives.indexed_at, so `UPDATE archives SET indexed_at = NULL` rebuilds
// it.
package search

import (
	"context"
	"fmt"
	"time"
)

// Document is one page of one archive as the index holds it: the page as
// pages.jsonl says (title and text exactly as written) and the archive's
// ledger row, and the archive's recorded grantees.
type Document struct {
	ArchiveID string `json:"archiveId"`
	// Page is the page's place among the archive's pages (0 for the first
	// page line of pages.jsonl); with ArchiveID it names the document.
	Page          int    `json:"page"`
	URL           string `json:"url"`
	Title         string `json:"title"`
	Text          string `json:"text"`
	TextTruncated bool   `json:"textTruncated"`
	// TextWithheld is why the capturer kept title and text out of the
	// archive (url-policy, content-type, no-archive, deny, unattributed), as
	// given; nil when it did not. Kept so an empty capture and a withheld
	// one do not look the same.
	TextWithheld *string   `json:"textWithheld"`
	ObjectKey    string    `json:"objectKey"`
	SourceURL    string    `json:"sourceUrl"`
	Labels       []string  `json:"labels"`
	CapturedAt   time.Time `json:"capturedAt"`
	// Grantees are the grantee keys (GranteeKey) the ledger recorded for
	// the archive when it was indexed: its organizations and its owner.
	// Shares are not here; a search finds shared archives by id.
	Grantees []string `json:"grantees,omitempty"`
}

// GranteeKey is how a recorded grantee is written in the index:
// "org:<organization>" or "user:<subject>".
func GranteeKey(kind, principal string) string {
	if kind == "organization" {
		return "org:" + principal
	}
	return "user:" + principal
}

// CallerKeys are the grantee keys a caller holds: each of its organizations
// and itself.
func CallerKeys(subject string, orgs []string) []string {
	keys := make([]string, 0, len(orgs)+1)
	for _, o := range orgs {
		keys = append(keys, GranteeKey("organization", o))
	}
	return append(keys, GranteeKey("owner", subject))
}

// Filter narrows candidates to the pages the caller may possibly see: those
// whose Grantees hold one of Grantees, and those of the archives Archives
// (the caller's active shares, and archives recorded for the caller that
// are waiting to be indexed again). A nil *Filter does not narrow. It never
// changes a page's score, so positions compare across filters.
type Filter struct {
	Grantees []string
	Archives []string
}

// ID is the document's id in the index.
func (d Document) ID() string { return DocID(d.ArchiveID, d.Page) }

// DocID is the id of page page of archive archiveID: the archive id, a
// slash and the page number in 8 digits, so ids sort by archive, then page.
func DocID(archiveID string, page int) string { return fmt.Sprintf("%s/%08d", archiveID, page) }

// Position is a place in a result list, which is ordered by score (best
// first), then by document id.
type Position struct {
	Score     float64
	ArchiveID string
	Page      int
}

// DocID is the id of the document at the position.
func (p Position) DocID() string { return DocID(p.ArchiveID, p.Page) }

// Backend is a full-text index of Documents. Both implementations (Bleve,
// OpenSearch) pass the same conformance suite.
type Backend interface {
	// Put replaces the documents of each archive of archives (archive id →
	// all its documents; an empty list removes them), in one write, visible
	// to searches when it returns: a search sees each archive's old pages
	// or its new ones, never none of them.
	Put(ctx context.Context, archives map[string][]Document) error
	// Candidates returns up to size matches of q that pass f (all matches
	// when f is nil) strictly after `after` (from the best when nil), in
	// result order, and how many documents match q and f in all. A match
	// the filter leaves out costs no work beyond the index's own.
	Candidates(ctx context.Context, q Query, f *Filter, after *Position, size int) ([]Position, int, error)
	// Among says which of archives hold a page whose url is exactly url,
	// that matches q and passes f (all pages when f is nil): the question
	// the collapse of one URL's captures asks about the later captures of
	// a hit (see Searcher).
	Among(ctx context.Context, q Query, f *Filter, url string, archives []string) (map[string]bool, error)
	// Filters says whether Candidates applies a Filter (false: it ignores
	// it, and a search narrows after the index).
	Filters() bool
	// Documents loads the documents with these ids; ids not in the index
	// are left out.
	Documents(ctx context.Context, ids []string) (map[string]Document, error)
	// Name says which backend this is and where, for messages.
	Name() string
	Close() error
}

// CallerKeysFilter is a filter of the caller's grantee keys alone.
func CallerKeysFilter(subject string, orgs []string) Filter {
	return Filter{Grantees: CallerKeys(subject, orgs)}
}
