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
// were admitted as, and where each is (oldest capture first, at most
// limit).
type CrawlArchives interface {
	CrawlArchiveLocations(ctx context.Context, crawlID string, limit int) ([]ledger.ArchiveLocation, error)
}

// MaxExport is how many archives one export of a crawl holds at most: as
// many as a crawl has pages at most (crawl.MaxPagesLimit), each page
// naming one capture, so an export holds every archive of its crawl.
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
	all, err := cat.CrawlArchiveLocations(ctx, crawlID, MaxExport)
	if err != nil {
		return wacz.MergeSummary{}, err
	}
	var visible []ledger.ArchiveLocation
	if len(all) > 0 {
		ids := make([]string, len(all))
		for i, l := range all {
			ids[i] = l.ID
		}
		ok, err := a.Perms.CanViewMany(ctx, subject, orgs, ids)
		if err != nil {
			return wacz.MergeSummary{}, fmt.Errorf("check can_view: %w", err)
		}
		for i, l := range all {
			if ok[i] {
				visible = append(visible, l)
			}
		}
	}
	if len(visible) == 0 {
		a.logger().Info("Denied", "crawlId", crawlID)
		return wacz.MergeSummary{}, ledger.ErrNotFound
	}
	// Each archive is opened as the merge reaches it, and let go once read:
	// nothing of a crawl's thousands of objects is held at once.
	parts := make([]wacz.Part, 0, len(visible))
	for _, l := range visible {
		parts = append(parts, wacz.Part{Name: l.ID, Open: func() (io.ReaderAt, int64, error) {
			obj, err := a.Ranges.OpenObject(ctx, l.Bucket, l.Key)
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
