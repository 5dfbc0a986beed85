package archive_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// countingRanges opens archives from the bucket and counts the GETs their
// readers make.
type countingRanges struct {
	c       *blob.Client
	mu      sync.Mutex
	readers []*blob.ReaderAt
}

func (r *countingRanges) OpenObject(ctx context.Context, bucket, key string) (archive.Object, error) {
	o, err := r.c.OpenReaderAt(ctx, bucket, key)
	if err == nil {
		r.mu.Lock()
		r.readers = append(r.readers, o)
		r.mu.Unlock()
	}
	return o, err
}

// gets is how many GETs, and how many opens (one HEAD each), were made.
func (r *countingRanges) gets() (gets, opens int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, o := range r.readers {
		gets += o.Requests()
	}
	return gets, len(r.readers)
}

// exportFixture is a crawl of acme whose n pages each became an archive
// whose object in the bucket is a one-page WACZ, and an Access that reads
// them through ranges.
func exportFixture(t testing.TB, n int) (*apptest.Env, *archive.Access, *countingRanges, string) {
	t.Helper()
	ctx := context.Background()
	env := apptest.New(t)
	seeded := apptest.SeedArchives(t, env, n, func(int) string { return "acme" })
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	crawlID := uuid.NewString()
	if _, err := conn.Exec(ctx, `INSERT INTO crawls (id, seeds, max_depth, max_pages, per_host_delay_ms, host_parallelism, org_id, requested_by, state, stop_reason, finished_at)
		VALUES ($1, $2, 1, 100000, 0, 1, 'acme', 'carol', 'succeeded', 'completed', now())`, crawlID, []string{"https://e.com/"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range seeded {
		var task, key, source string
		if err := conn.QueryRow(ctx, `SELECT task_id::text, object_key, source_url FROM archives WHERE id = $1`, s.ID).Scan(&task, &key, &source); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO crawl_pages (crawl_id, url, depth, host, state, task_id, submitted_at, finished_at)
			VALUES ($1, $2, 0, 'e.com', 'captured', $3, now(), now())`, crawlID, source, task); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		body := fmt.Sprintf("<!doctype html><title>%s</title><p>The page at %s, with some words to make it a page.</p>", source, source)
		if _, err := wacz.Write(&buf, wacz.Capture{Created: s.At, Software: "ledgerctl test",
			Exchanges: []wacz.Exchange{{URL: source, Date: s.At, Status: 200, Header: map[string][]string{"Content-Type": {"text/html"}}, Body: []byte(body)}},
			Pages:     []wacz.Page{{URL: source, Date: s.At, Title: source, Text: body}},
		}); err != nil {
			t.Fatal(err)
		}
		if err := env.Blob.Put(ctx, env.Bucket, key, "application/wacz+zip", buf.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	perms := app.Permissions{Client: env.FGA}
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ranges := &countingRanges{c: env.Blob}
	return env, &archive.Access{Perms: perms, Catalog: st, Signer: env.Blob, Ranges: ranges}, ranges, crawlID
}

// TestExportCrawlReadsASmallArchiveInOneGet: an export reads each archive
// once (its pages, WARC and index); a crawl's archive of a few kilobytes is
// read whole by one GET, not by the ZIP reader's reads of its directory
// and entries, one GET or more each. The file holds every archive.
func TestExportCrawlReadsASmallArchiveInOneGet(t *testing.T) {
	t.Parallel()
	const n = 12
	_, access, ranges, crawlID := exportFixture(t, n)
	var out bytes.Buffer
	sum, err := access.ExportCrawl(context.Background(), "alice", []string{"acme"}, crawlID, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Parts != n || sum.Pages != n {
		t.Errorf("exported %d archives, %d pages; want %d each", sum.Parts, sum.Pages, n)
	}
	if problems, err := wacz.Check(bytes.NewReader(out.Bytes()), int64(out.Len())); err != nil || len(problems) > 0 {
		t.Fatalf("the export: %v %v", problems, err)
	}
	if gets, opens := ranges.gets(); opens != n || gets != n {
		t.Errorf("%d opens and %d GETs for %d archives, want %d of each (one whole read of each)", opens, gets, n, n)
	}
}

// BenchmarkExportCrawlVsGets measures ExportCrawl of a crawl of 300
// one-page archives from the bucket (written to io.Discard) next to its
// limit in the same iteration: GETting every archive's object once, whole,
// one after the other, which any export of them must at least do.
func BenchmarkExportCrawlVsGets(b *testing.B) {
	const n = 300
	env, access, _, crawlID := exportFixture(b, n)
	ctx := context.Background()
	keys, err := env.Blob.List(ctx, env.Bucket, "org/acme/")
	if err != nil || len(keys) != n {
		b.Fatalf("%d objects, %v", len(keys), err)
	}
	var exportTime, getTime time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := access.ExportCrawl(ctx, "alice", []string{"acme"}, crawlID, io.Discard, nil); err != nil {
			b.Fatal(err)
		}
		exportTime += time.Since(start)
		start = time.Now()
		for _, k := range keys {
			if _, err := env.Blob.Get(ctx, env.Bucket, k); err != nil {
				b.Fatal(err)
			}
		}
		getTime += time.Since(start)
	}
	b.ReportMetric(exportTime.Seconds()*1000/float64(b.N), "export-ms/op")
	b.ReportMetric(getTime.Seconds()*1000/float64(b.N), "gets-ms/op")
	b.ReportMetric(exportTime.Seconds()/getTime.Seconds(), "export/gets")
}

// TestExportHoldsEveryArchiveOfACrawl: an export holds at most MaxExport
// archives, one per page that names its capture; a crawl has at most
// crawl.MaxPagesLimit pages, so no export of a crawl leaves an archive out.
func TestExportHoldsEveryArchiveOfACrawl(t *testing.T) {
	if archive.MaxExport < crawl.MaxPagesLimit {
		t.Errorf("an export holds at most %d archives, a crawl may have %d pages", archive.MaxExport, crawl.MaxPagesLimit)
	}
}
