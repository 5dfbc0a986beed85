package capture

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// reportPages reports pages/s next to the ns/op Go prints.
func reportPages(b *testing.B, pages int) {
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}

// siteBytes is what one capture of the site's front page records.
func siteBytes(b *testing.B, e Engine, u string) (urls []string, n int64) {
	res := mustCapture(b, e, u)
	if res.Failure != nil {
		b.Fatal(res.Failure)
	}
	for _, x := range res.Capture.Exchanges {
		urls = append(urls, x.URL)
		n += int64(len(x.Body))
	}
	return urls, n
}

// benchPages are the pages measured: the front page (document, two
// stylesheets, a font, a script, images, a 404; about 2 KB) and a heavy
// page (ten 256 KiB images; about 2.6 MB).
var benchPages = []string{"/", "/heavy"}

// BenchmarkHTTPEngine captures each page with the http engine, and with
// the WACZ written too (to io.Discard), next to its limit: plain GETs of
// the same URLs with a default client, httpWorkers at a time as the engine
// fetches them, bodies read and dropped. MB/s counts the bodies recorded.
func BenchmarkHTTPEngine(b *testing.B) {
	s := newSite(b)
	e := NewHTTP(localConfig())
	defer e.Close()
	for _, p := range benchPages {
		urls, n := siteBytes(b, e, s.URL+p)
		b.Run("page="+p+"/engine", func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				res, err := e.Capture(context.Background(), s.URL+p)
				if err != nil || res.Failure != nil {
					b.Fatal(err, res.Failure)
				}
			}
			reportPages(b, b.N)
		})
		b.Run("page="+p+"/engine+wacz", func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				res, err := e.Capture(context.Background(), s.URL+p)
				if err != nil || res.Failure != nil {
					b.Fatal(err, res.Failure)
				}
				res.Capture.Software = "bench"
				if _, err := wacz.Write(io.Discard, res.Capture); err != nil {
					b.Fatal(err)
				}
			}
			reportPages(b, b.N)
		})
		b.Run("page="+p+"/limit-plain-GETs", func(b *testing.B) {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: httpWorkers}}
			defer client.CloseIdleConnections()
			get := func(u string) {
				resp, err := client.Get(u)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.SetBytes(n)
			for b.Loop() {
				get(urls[0]) // the document first, as a page needs it
				sem := make(chan struct{}, httpWorkers)
				var wg sync.WaitGroup
				for _, u := range urls[1:] {
					sem <- struct{}{}
					wg.Go(func() { get(u); <-sem })
				}
				wg.Wait()
			}
			reportPages(b, b.N)
		})
	}
}

// BenchmarkBrowserEngine captures the same pages with the browser engine,
// next to its limit: the same pages loaded in the same Chromium, in a new
// tab of a new browser context as the engine opens, until the load event,
// with nothing recorded, no settle, no scroll, no screenshot. "engine-quick"
// is the engine with a 50 ms quiet time (default 500 ms, waited twice) and
// no scroll budget, to show what recording itself costs.
func BenchmarkBrowserEngine(b *testing.B) {
	chromiumOrSkip(b)
	s := newSite(b)
	br := newBrowser(b, localConfig())
	c := localConfig()
	c.IdleTime, c.ScrollTimeout = 50*time.Millisecond, time.Millisecond
	quick := &Browser{cfg: c.withDefaults(), path: br.path}
	for _, p := range benchPages {
		_, n := siteBytes(b, br, s.URL+p)
		b.Run("page="+p+"/engine", func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				res, err := br.Capture(context.Background(), s.URL+p)
				if err != nil || res.Failure != nil {
					b.Fatal(err, res.Failure)
				}
			}
			reportPages(b, b.N)
		})
		b.Run("page="+p+"/engine-quick", func(b *testing.B) {
			// Share the running browser: only the waits differ.
			br.mu.Lock()
			quick.started, quick.proxy, quick.dir, quick.ctx = true, br.proxy, br.dir, br.ctx
			br.mu.Unlock()
			b.SetBytes(n)
			for b.Loop() {
				res, err := quick.Capture(context.Background(), s.URL+p)
				if err != nil || res.Failure != nil {
					b.Fatal(err, res.Failure)
				}
			}
			reportPages(b, b.N)
		})
		b.Run("page="+p+"/limit-plain-load", func(b *testing.B) {
			b.SetBytes(n)
			for b.Loop() {
				tab, cancel := chromedp.NewContext(br.ctx, chromedp.WithNewBrowserContext())
				_, err := chromedp.Run(tab, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
					if _, err := cdp.Call(ctx, t, page.Enable, page.EnableParams{}); err != nil {
						return err
					}
					_, err := cdp.Call(ctx, t, page.Navigate, page.NavigateParams{URL: s.URL + p})
					return err
				})))
				cancel()
				if err != nil {
					b.Fatal(err)
				}
			}
			reportPages(b, b.N)
		})
	}
}

// BenchmarkHTTPEngineVsGETs measures, for each benchmark page and in the
// same iteration (so the machine's load falls on all alike), the plain
// GETs of BenchmarkHTTPEngine's limit, then the http engine's capture
// alone, with the WACZ written (wacz.Write to io.Discard), and as a capture
// job runs it (capture.Run: the capture, the WACZ, and the WACZ, links file
// and manifest put to S3 — versitygw). Last, a second limit for the job:
// the plain GETs plus putting the job's three objects again, bare, work a
// job that uploads cannot skip. It reports each as a ratio of summed times
// to the plain GETs (x-GETs), and the job to its second limit.
func BenchmarkHTTPEngineVsGETs(b *testing.B) {
	s := newSite(b)
	e := NewHTTP(localConfig())
	defer e.Close()
	s3c, bucket, _ := testenv.Bucket(b)
	up := blob.Uploader{Client: s3c, Bucket: bucket, Prefix: "bench/"}
	bare := blob.Uploader{Client: s3c, Bucket: bucket, Prefix: "bare/"}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: httpWorkers}}
	defer client.CloseIdleConnections()
	for _, p := range benchPages {
		urls, _ := siteBytes(b, e, s.URL+p)
		b.Run("page="+p, func(b *testing.B) {
			var gets, engine, waczd, job, puts time.Duration
			timed := func(d *time.Duration, f func()) {
				start := time.Now()
				f()
				*d += time.Since(start)
			}
			for b.Loop() {
				timed(&gets, func() { plainGETs(b, client, urls) })
				timed(&engine, func() {
					if res, err := e.Capture(context.Background(), s.URL+p); err != nil || res.Failure != nil {
						b.Fatal(err, res.Failure)
					}
				})
				timed(&waczd, func() {
					res, err := e.Capture(context.Background(), s.URL+p)
					if err != nil || res.Failure != nil {
						b.Fatal(err, res.Failure)
					}
					res.Capture.Software = "bench"
					if _, err := wacz.Write(io.Discard, res.Capture); err != nil {
						b.Fatal(err)
					}
				})
				var out *Outcome
				timed(&job, func() {
					var err error
					job := Job{TaskID: NewTaskID(), CorrelationID: NewCorrelationID(), URL: s.URL + p}
					if out, err = Run(context.Background(), e, job, up, "bench"); err != nil || !out.OK() {
						b.Fatal(err, out.Failure)
					}
				})
				timed(&puts, func() {
					for _, o := range out.Objects {
						if _, err := bare.Put(context.Background(), o.Name, o.ContentType, o.Body); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
			n := float64(b.N)
			b.ReportMetric(n/gets.Seconds(), "GETs-pages/s")
			b.ReportMetric(n/job.Seconds(), "job-pages/s")
			b.ReportMetric(float64(engine)/float64(gets), "engine-x-GETs")
			b.ReportMetric(float64(waczd)/float64(gets), "engine+wacz-x-GETs")
			b.ReportMetric(float64(job)/float64(gets), "job-x-GETs")
			b.ReportMetric(float64(job)/float64(gets+puts), "job-x-GETs+PUTs")
		})
	}
}

// plainGETs fetches urls as BenchmarkHTTPEngine's limit does: the
// document, then the rest httpWorkers at a time, bodies read and dropped.
func plainGETs(b *testing.B, client *http.Client, urls []string) {
	get := func(u string) {
		resp, err := client.Get(u)
		if err != nil {
			b.Error(err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	get(urls[0])
	sem := make(chan struct{}, httpWorkers)
	var wg sync.WaitGroup
	for _, u := range urls[1:] {
		sem <- struct{}{}
		wg.Go(func() { get(u); <-sem })
	}
	wg.Wait()
}
