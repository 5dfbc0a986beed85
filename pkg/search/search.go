// Package search owns full-text search over archived pages: the indexer that
// reads each archive's pages/pages.jsonl out of its WACZ in S3 (ranged
// reads, never the whole file) into an index, the two index backends (Bleve
// on disk, OpenSearch) behind one interface, and the search itself, which
// asks the index for candidates and keeps only those of archives OpenFGA
// says the caller may view.
//
// The index knows nothing about who may see a page (seed 002: 索引は誰に見せ
// てよいかを知りません): copying organizations or permissions into it would
// make it a second authority on a question OpenFGA answers, and the two would
// drift apart silently. Its only state in the ledger is archives.indexed_at,
// so `UPDATE archives SET indexed_at = NULL` rebuilds it.
package search

import (
	"context"
	"fmt"
	"time"
)

// Document is one page of one archive as the index holds it: the page as
// pages.jsonl says (title and text exactly as written) and the archive's
// ledger row. Nothing about who may see it.
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
	// Candidates returns up to size matches of q strictly after `after`
	// (from the best when nil), in result order, and how many documents
	// match q in all.
	Candidates(ctx context.Context, q Query, after *Position, size int) ([]Position, int, error)
	// Documents loads the documents with these ids; ids not in the index
	// are left out.
	Documents(ctx context.Context, ids []string) (map[string]Document, error)
	// Name says which backend this is and where, for messages.
	Name() string
	Close() error
}
