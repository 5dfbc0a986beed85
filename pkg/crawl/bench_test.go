package crawl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
)

// The level-report benchmark: one report of 1,000 pages with 50 links each
// (10 rules), admitted end to end (1,000 manifests and 1,000 links files
// read from S3, 1,000 archives, submissions, decisions, a 9,000-page next
// level), next to its physical limit: the same next-level rows written with
// one bulk insert (COPY) in the same run.

const (
	benchPages = 1000
	benchLinks = 50
)

var benchRules = []rules.Rule{
	{Action: rules.Skip, Pattern: "ads.example.com"},
	{Action: rules.Skip, Pattern: "tracker.example.net"},
	{Action: rules.Skip, Pattern: "https://www.example.com/search"},
	{Action: rules.Skip, Pattern: "https://www.example.com/login"},
	{Action: rules.Capture, Pattern: "https://www.example.com/files/"},
	{Action: rules.Follow, Pattern: "same-origin"},
	{Action: rules.Capture, Pattern: "cdn.example.org"},
	{Action: rules.Follow, Pattern: "blog.example.com"},
	{Action: rules.Follow, Pattern: "same-site"},
	{Action: rules.Capture, Pattern: "any"},
}

var benchHosts = []string{"www.example.com", "docs.example.com", "shop.example.com", "news.example.com"}

// levelFixture is a crawl's seeds and the level-0 report of them, with the
// links files already in the bucket; the manifests are written by fresh,
// since they carry the crawl id as their correlationId.
type levelFixture struct {
	seeds     []string
	report    crawl.LevelReport
	manifests []benchObject
}

type benchObject struct {
	key string
	v   map[string]any
}

// putAll writes objs into the bucket, 16 at a time.
func putAll(b *testing.B, e *env, objs []benchObject) {
	b.Helper()
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(objs) {
					return
				}
				data, _ := json.Marshal(objs[i].v)
				if err := e.blob.Put(e.ctx, e.bucket, objs[i].key, "application/json", data); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
}

func newLevelFixture(b *testing.B, e *env) *levelFixture {
	b.Helper()
	fx := &levelFixture{}
	var objs []benchObject
	ts := e.clock.Now().Add(-time.Minute)
	for i := 0; i < benchPages; i++ {
		host := benchHosts[i%len(benchHosts)]
		page := fmt.Sprintf("https://%s/p/%d", host, i)
		fx.seeds = append(fx.seeds, page)
		var ls []link
		for k := 0; k < 10; k++ {
			ls = append(ls, link{Href: fmt.Sprintf("https://%s/nav/%d", host, k)})
		}
		for k := 0; k < 30; k++ {
			ls = append(ls, link{Href: fmt.Sprintf("https://%s/p/%d/%d", host, i, k)})
		}
		ls = append(ls,
			link{Href: fmt.Sprintf("https://ads.example.com/%d/a", i)},
			link{Href: fmt.Sprintf("https://x.ads.example.com/%d/b", i)},
			link{Href: fmt.Sprintf("https://tracker.example.net/t?p=%d", i)},
			link{Href: fmt.Sprintf("https://www.example.com/search?q=%d", i)},
			link{Href: fmt.Sprintf("https://www.example.com/files/%d.pdf", i)},
			link{Href: fmt.Sprintf("https://cdn.example.org/%d.js", i)},
			link{Href: fmt.Sprintf("https://ext%d.example.net/%d", i%20, i)},
			link{Href: fmt.Sprintf("https://ext%d.example.net/%d#frag", i%20, i)},
			link{Href: fmt.Sprintf("https://x%d.blog.example.com/%d", i%10, i)},
			nofollow(fmt.Sprintf("https://%s/private/%d", host, i)),
		)
		task := uuid.NewString()
		stem := "bench/" + task
		fx.manifests = append(fx.manifests, benchObject{stem + ".result.json", map[string]any{
			"taskId": task, "url": page, "labels": []string{}, "status": "success",
			"timestamp": ts.Format(time.RFC3339Nano), "captureProcessingTimeMs": 900,
			"artifacts":    map[string]any{"wacz": e.loc(stem + ".wacz"), "links": e.loc(stem + ".links.json")},
			"completeness": map[string]any{"complete": true, "bodylessUrls": []string{}, "truncatedUrls": []string{}},
		}})
		objs = append(objs,
			benchObject{stem + ".links.json", map[string]any{
				"taskId": task, "url": page, "finalUrl": page, "labels": []string{},
				"capturedAt": ts.Format(time.RFC3339Nano), "links": ls,
			}},
		)
		fx.report.Results = append(fx.report.Results, crawl.PageReport{
			URL: page, FinalURL: page, Status: crawl.StatusCaptured, TaskID: task,
			ManifestLocation: e.loc(stem + ".result.json"), LinksLocation: e.loc(stem + ".links.json"),
			SubmittedAt: ts.Add(-time.Second), FinishedAt: ts,
		})
	}
	putAll(b, e, objs)
	return fx
}

// fresh clears the previous round and starts the crawl anew (not timed).
func (fx *levelFixture) fresh(b *testing.B, e *env) string {
	b.Helper()
	if _, err := e.pool.Exec(e.ctx, `DELETE FROM crawls; TRUNCATE archives, fga_outbox, capture_submissions CASCADE`); err != nil {
		b.Fatal(err)
	}
	id := e.start(crawl.StartRequest{Seeds: fx.seeds, Rules: benchRules, MaxDepth: ptr(2), MaxPages: ptr(crawl.MaxPagesLimit), PerHostDelayMs: ptr(0)})
	for _, m := range fx.manifests {
		m.v["correlationId"] = id
	}
	putAll(b, e, fx.manifests)
	return id
}

func benchEnv(b *testing.B) (*env, *levelFixture) {
	e := newEnv(b)
	e.svc.Log = nil
	e.svc.Dispatcher = nil
	return e, newLevelFixture(b, e)
}

// reportNsPerOp is BenchmarkReportLevel's last result, for the ratio.
var reportNsPerOp float64

func BenchmarkReportLevel(b *testing.B) {
	e, fx := benchEnv(b)
	b.Run(fmt.Sprintf("%dx%d", benchPages, benchLinks), func(b *testing.B) {
		var elapsed time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			id := fx.fresh(b, e)
			b.StartTimer()
			t0 := time.Now()
			res, err := e.svc.ReportLevel(e.ctx, alice, id, fx.report)
			elapsed += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if len(res.Next) != crawl.MaxPagesLimit-benchPages {
				b.Fatalf("next level has %d pages", len(res.Next))
			}
			if n := e.count(`SELECT count(*) FROM archives`); n != benchPages {
				b.Fatalf("%d archives admitted", n)
			}
			b.StartTimer()
		}
		reportNsPerOp = float64(elapsed.Nanoseconds()) / float64(b.N)
	})
}

// BenchmarkReportLevelLimit is ReportLevel's physical limit, measured in
// the same run: the same next-level rows written with one COPY (ns/op).
// It also reports the other floor of a report, the bare reads of the same
// 2,000 objects at the same concurrency ("reads-ms"), and the ratios of
// BenchmarkReportLevel's result to the COPY and to reads+COPY.
func BenchmarkReportLevelLimit(b *testing.B) {
	e, fx := benchEnv(b)
	// One report gives the next level's rows.
	id := fx.fresh(b, e)
	if _, err := e.svc.ReportLevel(e.ctx, alice, id, fx.report); err != nil {
		b.Fatal(err)
	}
	type row struct {
		url, host string
		from      int // index of the seed the link was found on
	}
	var rows []row
	q, err := e.pool.Query(e.ctx, `
		SELECT p.url, p.host, s.depth0 FROM crawl_pages p
		JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS depth0 FROM crawl_pages WHERE crawl_id = $1 AND depth = 0) s ON s.id = p.discovered_from
		WHERE p.crawl_id = $1 AND p.depth = 1 ORDER BY p.id`, id)
	if err != nil {
		b.Fatal(err)
	}
	for q.Next() {
		var r row
		if err := q.Scan(&r.url, &r.host, &r.from); err != nil {
			b.Fatal(err)
		}
		rows = append(rows, r)
	}
	if q.Err() != nil || len(rows) != crawl.MaxPagesLimit-benchPages {
		b.Fatalf("%d next-level rows: %v", len(rows), q.Err())
	}
	var keys []string
	for _, p := range fx.report.Results {
		keys = append(keys, p.ManifestLocation[len("s3://"+e.bucket+"/"):], p.LinksLocation[len("s3://"+e.bucket+"/"):])
	}
	conc := e.svc.FetchConcurrency
	if conc == 0 {
		conc = 16
	}

	b.Run(fmt.Sprintf("%dx%d", benchPages, benchLinks), func(b *testing.B) {
		var copyTime, readTime time.Duration
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			id := fx.fresh(b, e)
			seedIDs, err := pgxCollectIDs(e.ctx, e, id)
			if err != nil {
				b.Fatal(err)
			}
			src := make([][]any, len(rows))
			for j, r := range rows {
				src[j] = []any{id, r.url, 1, r.host, seedIDs[r.from]}
			}
			t0 := time.Now()
			if err := readAll(e, keys, conc); err != nil {
				b.Fatal(err)
			}
			readTime += time.Since(t0)
			b.StartTimer()
			t0 = time.Now()
			n, err := e.pool.CopyFrom(e.ctx, pgx.Identifier{"crawl_pages"},
				[]string{"crawl_id", "url", "depth", "host", "discovered_from"}, pgx.CopyFromRows(src))
			copyTime += time.Since(t0)
			if err != nil || int(n) != len(rows) {
				b.Fatalf("copy: %d rows, %v", n, err)
			}
		}
		limit := float64(copyTime.Nanoseconds()) / float64(b.N)
		reads := float64(readTime.Nanoseconds()) / float64(b.N)
		b.ReportMetric(reads/1e6, "reads-ms")
		if reportNsPerOp > 0 {
			b.ReportMetric(reportNsPerOp/1e6, "report-ms")
			b.ReportMetric(reportNsPerOp/limit, "report/copy")
			b.ReportMetric(reportNsPerOp/(limit+reads), "report/(reads+copy)")
			fmt.Printf("ReportLevel %.0f ms; COPY of the same %d next-level rows %.0f ms (ratio %.2f); "+
				"bare reads of the %d objects %.0f ms, reads+COPY %.0f ms (ratio %.2f)\n",
				reportNsPerOp/1e6, len(rows), limit/1e6, reportNsPerOp/limit,
				len(keys), reads/1e6, (reads+limit)/1e6, reportNsPerOp/(limit+reads))
		}
	})
}

// readAll reads every key with conc reads in flight, as ReportLevel does.
func readAll(e *env, keys []string, conc int) error {
	var wg sync.WaitGroup
	var next atomic.Int64
	errs := make(chan error, conc)
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				j := int(next.Add(1)) - 1
				if j >= len(keys) {
					return
				}
				if _, err := e.blob.Get(e.ctx, e.bucket, keys[j]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func pgxCollectIDs(ctx context.Context, e *env, crawlID string) ([]int64, error) {
	rows, err := e.pool.Query(ctx, `SELECT id FROM crawl_pages WHERE crawl_id = $1 AND depth = 0 ORDER BY id`, crawlID)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
