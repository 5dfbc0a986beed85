package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// URLTTL is how long a presigned URL lives. A signed URL cannot be revoked,
// so it is short and the check right before signing is fully consistent.
const URLTTL = 300 * time.Second

// Permissions answers who may view which archive. OpenFGA is the only
// authority; the caller's organizations come only from the verified identity.
type Permissions interface {
	// CanView is one fully consistent check.
	CanView(ctx context.Context, subject string, orgs []string, archiveID string) (bool, error)
	// CanViewMany answers for every id, in order.
	CanViewMany(ctx context.Context, subject string, orgs []string, archiveIDs []string) ([]bool, error)
}

// Catalog reads ledger rows.
type Catalog interface {
	ArchiveLocation(ctx context.Context, id string) (bucket, key string, err error)
	ArchivesBefore(ctx context.Context, cursor *postgres.ArchiveCursor, limit int) ([]ledger.Archive, error)
}

// Presigner signs GET URLs.
type Presigner interface {
	PresignGet(ctx context.Context, bucket, key string, ttl time.Duration) (string, error)
}

// checkChunk is how many archives one BatchCheck call of the list asks
// about (OpenFGA splits it further into batches of its own limit).
const checkChunk = 100

// Access hands out URLs and lists archives to the people allowed to see them.
type Access struct {
	Perms   Permissions
	Catalog Catalog
	Signer  Presigner
	Log     *slog.Logger
	// PageSize is how many visible rows a page holds (default 50).
	PageSize int
	// ScanLimit bounds the rows examined for one page (default 5000); a
	// page that hits it is returned short with Truncated set.
	ScanLimit int
}

// SignedURL is a presigned GET for one archive.
type SignedURL struct {
	URL       string `json:"url"`
	ExpiresIn int    `json:"expiresIn"`
}

// URL checks can_view with full consistency, then signs a GET of the
// archive's object. Refusal and absence are both ledger.ErrNotFound.
func (a *Access) URL(ctx context.Context, subject string, orgs []string, id string) (SignedURL, error) {
	ok, err := a.Perms.CanView(ctx, subject, orgs, id)
	if err != nil {
		return SignedURL{}, fmt.Errorf("check can_view: %w", err)
	}
	if !ok {
		a.logger().Info("Denied", "archiveId", id)
		return SignedURL{}, ledger.ErrNotFound
	}
	bucket, key, err := a.Catalog.ArchiveLocation(ctx, id)
	if errors.Is(err, ledger.ErrNotFound) {
		a.logger().Warn("Check allowed an archive that is not in the ledger", "archiveId", id)
		return SignedURL{}, ledger.ErrNotFound
	}
	if err != nil {
		return SignedURL{}, err
	}
	u, err := a.Signer.PresignGet(ctx, bucket, key, URLTTL)
	if err != nil {
		return SignedURL{}, err
	}
	a.logger().Info("Signed URL issued", "archiveId", id)
	return SignedURL{URL: u, ExpiresIn: int(URLTTL / time.Second)}, nil
}

// Cursor is a position in the newest-first list: the (capturedAt, id) of the
// last row a page examined.
type Cursor = postgres.ArchiveCursor

// Page is one page of visible archives.
type Page struct {
	Archives []ledger.Archive `json:"archives"`
	// Next continues after this page; nil when the list is exhausted.
	Next *Cursor `json:"-"`
	// Truncated says the scan bound was hit before the page filled.
	Truncated bool `json:"truncated"`
	// Scanned is how many rows were examined (for benchmarks and logs).
	Scanned int `json:"-"`
}

// List returns up to PageSize archives the caller may view, newest first,
// after cursor. Rows are read in batches whose size adapts to how many of
// the previous rows were visible, each batch checked in one BatchCheck, until
// the page is full, the ledger is exhausted, or ScanLimit rows were examined.
func (a *Access) List(ctx context.Context, subject string, orgs []string, cursor *Cursor) (Page, error) {
	size, limit := a.PageSize, a.ScanLimit
	if size <= 0 {
		size = 50
	}
	if limit <= 0 {
		limit = 5000
	}
	page := Page{Archives: []ledger.Archive{}}
	pos := cursor
	visible := 0
	for {
		need := size - len(page.Archives)
		batch := need
		if page.Scanned > 0 {
			// Expect the visibility seen so far; never below 1/64 so one
			// batch stays bounded, and a quarter extra to avoid a short tail.
			ratio := max(float64(visible)/float64(page.Scanned), 1.0/64)
			batch = int(float64(need)/ratio*1.25) + 1
		}
		batch = min(max(batch, need), 1000, limit-page.Scanned)
		rows, err := a.Catalog.ArchivesBefore(ctx, pos, batch)
		if err != nil {
			return Page{}, err
		}
		if len(rows) == 0 {
			return page, nil // exhausted: Next stays nil
		}
		// Check the batch in chunks, in order, and stop once the page is
		// full: a batch sized from a small sample can be far larger than
		// what the page still needs.
		for start := 0; start < len(rows); start += checkChunk {
			chunk := rows[start:min(start+checkChunk, len(rows))]
			ids := make([]string, len(chunk))
			for i, r := range chunk {
				ids[i] = r.ID
			}
			allowed, err := a.Perms.CanViewMany(ctx, subject, orgs, ids)
			if err != nil {
				return Page{}, fmt.Errorf("batch check can_view: %w", err)
			}
			for i, r := range chunk {
				page.Scanned++
				pos = &Cursor{CapturedAt: r.CapturedAt, ID: r.ID}
				if !allowed[i] {
					continue
				}
				visible++
				page.Archives = append(page.Archives, r)
				if len(page.Archives) == size {
					page.Next = pos
					return page, nil
				}
			}
		}
		if len(rows) < batch {
			return page, nil // the ledger ended inside this batch
		}
		if page.Scanned >= limit {
			page.Truncated, page.Next = true, pos
			return page, nil
		}
	}
}

func (a *Access) logger() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}
