package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// benchSite serves hosts × perHost pages: each host's / links its other
// pages; the pages carry a paragraph of text.
func benchSite(b *testing.B, hosts, perHost int) []*host {
	out := make([]*host, hosts)
	for i := range out {
		h := newHost(b)
		var links strings.Builder
		for j := 1; j < perHost; j++ {
			fmt.Fprintf(&links, `<a href="/p%d">page %d</a> `, j, j)
			h.page(fmt.Sprintf("/p%d", j), fmt.Sprintf("page %d", j), "<p>"+strings.Repeat("lorem ipsum ", 200)+"</p>")
		}
		h.page("/", "home", links.String())
		out[i] = h
	}
	return out
}

// crawlOnce runs one crawl of the seeds to its end and returns how long it
// took and how many pages it captured.
func crawlOnce(b *testing.B, e *env, capt runner.Capturer, seeds []string, maxPages, delayMs, par int) (took, reporting time.Duration, pages int) {
	return crawlWith(b, e, capt, runner.Config{}, seeds, maxPages, delayMs, par)
}

// crawlWith is crawlOnce with the runner's configuration.
func crawlWith(b *testing.B, e *env, capt runner.Capturer, cfg runner.Config, seeds []string, maxPages, delayMs, par int) (took, reporting time.Duration, pages int) {
	levels := make(chan runner.LevelEvent, 8)
	cfg.OnLevel = func(ev runner.LevelEvent) { levels <- ev }
	svc, r := e.service(capt, cfg)
	follow, err := rules.ParseSpec("follow:same-site")
	if err != nil {
		b.Fatal(err)
	}
	maxDepth := 1
	start := time.Now()
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: seeds, Rules: []rules.Rule{follow}, MaxDepth: &maxDepth,
		MaxPages: &maxPages, PerHostDelayMs: &delayMs, HostParallelism: &par})
	if err != nil {
		b.Fatal(err)
	}
	for _, ev := range runUntilDone(b, r, levels, 10*time.Minute) {
		reporting += ev.Reporting
	}
	took = time.Since(start)
	v, err := svc.Get(e.ctx, alice, id)
	if err != nil {
		b.Fatal(err)
	}
	return took, reporting, v.PagesCaptured
}

// BenchmarkRunner500Pages: a 500-page crawl over 10 local hosts, delay 0,
// the http engine, ten hosts at once, end to end (robots.txt, pacing, the
// kept results, both levels handed to the ledger in memory and admitted,
// the archives registered); next to the capturer alone on the same 500
// pages, ten at a time, one per host.
func BenchmarkRunner500Pages(b *testing.B) {
	e := newEnv(b)
	sites := benchSite(b, 10, 50)
	var seeds, urls []string
	for _, h := range sites {
		seeds = append(seeds, h.URL+"/")
		urls = append(urls, h.URL+"/")
		for j := 1; j < 50; j++ {
			urls = append(urls, fmt.Sprintf("%s/p%d", h.URL, j))
		}
	}
	capt := newCounter(e)
	alone := func() time.Duration {
		start := time.Now()
		var wg sync.WaitGroup
		corr := uuid.NewString()
		for h := range 10 {
			wg.Go(func() {
				for i, u := range urls[h*50 : (h+1)*50] {
					// The same objects as the crawl writes: a links file
					// for a seed (level 0), none for the last level's pages.
					out, err := capt.inner.Capture(context.Background(), runner.CaptureRequest{URL: u, CorrelationID: corr, TaskID: uuid.NewString(),
						Formats: crawl.Formats{WACZ: true, Links: i == 0}})
					if err != nil || !out.Captured {
						b.Errorf("capture %s: %v %+v", u, err, out)
					}
				}
			})
		}
		wg.Wait()
		return time.Since(start)
	}
	// One crawl and one pass of the capturer alone before the timer, so
	// that neither side pays the process's first connections and
	// statements (the crawl's first level otherwise took 0.26 s instead
	// of 0.05 s, once per run of the benchmark).
	if _, _, n := crawlOnce(b, e, capt, seeds, 500, 0, 10); n != 500 {
		b.Fatalf("the warm-up crawl captured %d pages, want 500", n)
	}
	alone()
	b.ResetTimer()
	var crawlTime, reportTime, aloneTime time.Duration
	// The CPU each side used, by process: this one (the crawl or the
	// capturer, and the sites), PostgreSQL's and the S3 server's (every
	// process of those names on the machine).
	procs := []string{"self", "postgres", "versitygw"}
	crawlCPU, aloneCPU := map[string]time.Duration{}, map[string]time.Duration{}
	add := func(to, d map[string]time.Duration) {
		for k, v := range d {
			to[k] += v
		}
	}
	pages := 0
	for range b.N {
		c0 := processCPU(procs...)
		took, reporting, n := crawlOnce(b, e, capt, seeds, 500, 0, 10)
		c1 := processCPU(procs...)
		crawlTime += took
		reportTime += reporting
		pages += n
		aloneTime += alone()
		add(crawlCPU, cpuSince(c0, c1))
		add(aloneCPU, cpuSince(c1, processCPU(procs...)))
	}
	b.StopTimer()
	for _, p := range procs {
		b.ReportMetric(crawlCPU[p].Seconds()*1000/float64(b.N), "crawl-"+p+"-cpu-ms")
		b.ReportMetric(aloneCPU[p].Seconds()*1000/float64(b.N), "capturer-"+p+"-cpu-ms")
	}
	if pages != 500*b.N {
		b.Fatalf("%d pages captured over %d crawls, want 500 each", pages, b.N)
	}
	crawlRate := float64(pages) / crawlTime.Seconds()
	aloneRate := float64(500*b.N) / aloneTime.Seconds()
	b.ReportMetric(crawlRate, "crawl-pages/s")
	b.ReportMetric(aloneRate, "capturer-pages/s")
	b.ReportMetric(aloneRate/crawlRate, "overhead-x")
	// Without the two admissions (the ledger deciding the levels and
	// registering 500 archives in their transactions): the runner's own
	// loop.
	b.ReportMetric(aloneRate/(float64(pages)/(crawlTime-reportTime).Seconds()), "overhead-without-reports-x")
}

// BenchmarkRunnerDelayFloor: 20 pages on one host with a 200 ms delay: the
// wall time next to the politeness floor (19 gaps of 200 ms between the
// 20 captures, plus the captures themselves).
func BenchmarkRunnerDelayFloor(b *testing.B) {
	e := newEnv(b)
	sites := benchSite(b, 1, 20)
	capt := newCounter(e)
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		took, _, n := crawlOnce(b, e, capt, []string{sites[0].URL + "/"}, 20, 200, 1)
		if n != 20 {
			b.Fatalf("%d pages captured, want 20", n)
		}
		total += took
	}
	b.StopTimer()
	wall := total / time.Duration(b.N)
	floor := 19 * 200 * time.Millisecond
	b.ReportMetric(wall.Seconds(), "wall-s")
	b.ReportMetric(floor.Seconds(), "floor-s")
	b.ReportMetric(wall.Seconds()/floor.Seconds(), "wall/floor")
}

// BenchmarkRunnerHostLeases: the cost of the host leases. A 200-page crawl
// over 10 local hosts at delay 0, ten hosts at once, run with the leases
// (every capture takes and releases its host's lease in PostgreSQL) and
// without, alternately in the same run.
func BenchmarkRunnerHostLeases(b *testing.B) {
	e := newEnv(b)
	sites := benchSite(b, 10, 20)
	var seeds []string
	for _, h := range sites {
		seeds = append(seeds, h.URL+"/")
	}
	capt := newCounter(e)
	timed := &timedLeases{HostLeases: e.runnerStore()}
	b.ResetTimer()
	var with, without time.Duration
	for i := range b.N {
		// Alternate which goes first, so that neither always runs on a
		// fuller bucket and database.
		for k := range 2 {
			leased := (i+k)%2 == 0
			cfg := runner.Config{}
			if leased {
				cfg = runner.Config{Hosts: timed, HostAtOnce: 1}
			}
			took, _, n := crawlWith(b, e, capt, cfg, seeds, 200, 0, 10)
			if n != 200 {
				b.Fatalf("%d pages captured (leases %v), want 200", n, leased)
			}
			if leased {
				with += took
			} else {
				without += took
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(200*b.N)/with.Seconds(), "leased-pages/s")
	b.ReportMetric(float64(200*b.N)/without.Seconds(), "unleased-pages/s")
	b.ReportMetric(with.Seconds()/without.Seconds(), "leased/unleased-x")
	// Where the leases' cost is: the lease calls (one round trip each)
	// per page and the time spent in them, beside the time a host's
	// worker spends per page (ten at once).
	pages := float64(200 * b.N)
	b.ReportMetric(float64(timed.calls.Load())/pages, "lease-calls/page")
	b.ReportMetric(float64(timed.waits.Load())/pages, "lease-waits/page")
	b.ReportMetric(time.Duration(timed.took.Load()).Seconds()*1000/pages, "lease-ms/page")
	b.ReportMetric(with.Seconds()*10*1000/pages, "leased-worker-ms/page")
	b.ReportMetric(without.Seconds()*10*1000/pages, "unleased-worker-ms/page")
}

// timedLeases counts the lease calls, the asks that had to wait, and the
// time spent in the calls.
type timedLeases struct {
	ledger.HostLeases
	calls, waits, took atomic.Int64
}

func (t *timedLeases) time(start time.Time) {
	t.calls.Add(1)
	t.took.Add(int64(time.Since(start)))
}

func (t *timedLeases) TryHost(ctx context.Context, req ledger.HostLeaseRequest) (ledger.HostLease, bool, time.Duration, error) {
	defer t.time(time.Now())
	l, ok, wait, err := t.HostLeases.TryHost(ctx, req)
	if !ok {
		t.waits.Add(1)
	}
	return l, ok, wait, err
}

func (t *timedLeases) RenewHost(ctx context.Context, holder string, ttl time.Duration) error {
	defer t.time(time.Now())
	return t.HostLeases.RenewHost(ctx, holder, ttl)
}

func (t *timedLeases) ReleaseHost(ctx context.Context, holder string, hold time.Duration, source string) error {
	defer t.time(time.Now())
	return t.HostLeases.ReleaseHost(ctx, holder, hold, source)
}
