package archive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// CrawlArchives is a Catalog that knows which archives a crawl's pages
// were admitted as (oldest capture first, at most limit).
type CrawlArchives interface {
	CrawlArchives(ctx context.Context, crawlID string, limit int) ([]string, error)
}

// MaxExport is how many archives one export of a crawl holds at most.
const MaxExport = 10000

// ExportCrawl writes to w one WACZ of the archives of crawlID that the
// caller may view (the crawl's replay collection's archives, at most
// MaxExport, oldest capture first), merged by wacz.Merge; progress, when
// set, is called as each archive is about to be read. A crawl that does not
// exist and one of which the caller may view nothing are the same
// ledger.ErrNotFound, with the same queries asked, and nothing is written.
// An archive whose WACZ cannot be merged stops the export with an error
// naming it (wacz.ErrMergeInput).
func (a *Access) ExportCrawl(ctx context.Context, subject string, orgs []string, crawlID string, w io.Writer, progress func(done, total int)) (wacz.MergeSummary, error) {
	cat, ok := a.Catalog.(CrawlArchives)
	if !ok || a.Ranges == nil {
		return wacz.MergeSummary{}, errors.New("this ledger cannot read a crawl's archives")
	}
	ids, err := cat.CrawlArchives(ctx, crawlID, MaxExport)
	if err != nil {
		return wacz.MergeSummary{}, err
	}
	var visible []string
	if len(ids) > 0 {
		ok, err := a.Perms.CanViewMany(ctx, subject, orgs, ids)
		if err != nil {
			return wacz.MergeSummary{}, fmt.Errorf("check can_view: %w", err)
		}
		for i, id := range ids {
			if ok[i] {
				visible = append(visible, id)
			}
		}
	}
	if len(visible) == 0 {
		a.logger().Info("Denied", "crawlId", crawlID)
		return wacz.MergeSummary{}, ledger.ErrNotFound
	}
	// Each archive is found and opened as the merge reaches it, and let go
	// once read: nothing of a crawl's thousands of objects is held at once.
	parts := make([]wacz.Part, 0, len(visible))
	for _, id := range visible {
		// Where the archive is, asked when the merge reaches it.
		parts = append(parts, wacz.Part{Name: id, Open: func() (io.ReaderAt, int64, error) {
			bucket, key, err := a.Catalog.ArchiveLocation(ctx, id)
			if err != nil {
				return nil, 0, err // Merge names the archive
			}
			obj, err := a.Ranges.OpenObject(ctx, bucket, key)
			if err != nil {
				return nil, 0, err
			}
			return obj, obj.Size(), nil
		}})
	}
	sum, err := wacz.Merge(w, a.now().UTC(), "crawl "+crawlID, "ledgerctl", parts, progress)
	if err == nil {
		a.logger().Info("Crawl exported", "crawlId", crawlID, "archives", sum.Parts, "bytes", sum.Bytes)
	}
	return sum, err
}

func (a *Access) now() time.Time {
	if a.Now != nil {
		return a.Now()
	}
	return time.Now()
}
