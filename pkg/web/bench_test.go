package web_test

import (
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
)

// firstByte is how long GET u (with headers, name-value pairs) takes to
// its response's first byte; the body is read to its end.
func firstByte(b *testing.B, u string, headers ...string) time.Duration {
	b.Helper()
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	var start time.Time
	var first time.Duration
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotFirstResponseByte: func() { first = time.Since(start) },
	}))
	start = time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("GET %s: %d", u, res.StatusCode)
	}
	return first
}

// BenchmarkConsoleHomeFirstByte: the console's home page (GET /, what a
// browser asks first) next to the API call the page is built on (GET
// /api/archives?why=1, the first page of alice's list of 1,000 archives of
// acme), both on one serve, interleaved in each iteration, time to first
// byte. The page carries no archive data, so its first byte should not wait
// for the list; the ratio is reported (docs/benchmarks.md), never asserted.
func BenchmarkConsoleHomeFirstByte(b *testing.B) {
	s := startServe(b, nil)
	apptest.SeedArchives(b, s.Env, 1000, func(int) string { return "acme" })
	// Warm both paths once (templates parsed, connections open).
	firstByte(b, s.URL+"/")
	firstByte(b, s.URL+"/api/archives?why=1", "X-Capture-ledger-Subject", "alice", "X-Capture-ledger-Organizations", "acme")
	var home, list []time.Duration
	b.ResetTimer()
	for b.Loop() {
		home = append(home, firstByte(b, s.URL+"/", "Accept-Language", "ja"))
		list = append(list, firstByte(b, s.URL+"/api/archives?why=1", "X-Capture-ledger-Subject", "alice", "X-Capture-ledger-Organizations", "acme"))
	}
	b.StopTimer()
	median := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	h, l := median(home), median(list)
	b.ReportMetric(float64(h.Microseconds()), "home-µs")
	b.ReportMetric(float64(l.Microseconds()), "api-µs")
	b.ReportMetric(float64(h)/float64(l), "home/api")
}
