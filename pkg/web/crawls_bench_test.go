package web_test

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"sort"
	"testing"
	"time"
)

// BenchmarkCrawlPageFirstByte measures, in the same run, the time to the
// first byte of the crawl page (GET /crawls/{id}: the HTML frame, no
// crawl data) and of the API call the page is built on first
// (GET /api/crawls/{id}: the crawl read and its permission check), one
// after the other on the same served instance, and reports both medians
// and their ratio (docs/benchmarks.md). It asserts no timing.
//
//	go test ./pkg/web -run '^$' -bench CrawlPageFirstByte -benchtime 200x
func BenchmarkCrawlPageFirstByte(b *testing.B) {
	srv := crawlServe(b)
	id := recordCrawl(b, srv)
	ttfb := func(path string, api bool) time.Duration {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if api {
			req.Header.Set("X-Capture-Ledger-Subject", "alice")
			req.Header.Set("X-Capture-Ledger-Organizations", "acme")
		}
		var start, first time.Time
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			WroteRequest:         func(httptrace.WroteRequestInfo) { start = time.Now() },
			GotFirstResponseByte: func() { first = time.Now() },
		}))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("%s: %d", path, res.StatusCode)
		}
		return first.Sub(start)
	}
	// Warm both paths (templates parsed, connections open).
	for i := 0; i < 5; i++ {
		ttfb("/crawls/"+id, false)
		ttfb("/api/crawls/"+id, true)
	}
	var page, api []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		page = append(page, ttfb("/crawls/"+id, false))
		api = append(api, ttfb("/api/crawls/"+id, true))
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	p, a := med(page), med(api)
	b.ReportMetric(p, "page-ttfb-ms")
	b.ReportMetric(a, "api-ttfb-ms")
	b.ReportMetric(p/a, "page/api")
}
