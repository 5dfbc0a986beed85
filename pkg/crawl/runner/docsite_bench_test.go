package runner_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// docSite serves a generated documentation site on one loopback host: a
// front page listing the chapters, chapters× a chapter page listing its
// sections, and chapters×sections section pages of a few kilobytes of
// prose and code, each with a sidebar of every chapter and previous/next
// links; every page uses the same stylesheet (which names a font and a
// background image), script and logo. It returns the host and every page
// URL, front page first; depth 2 reaches them all.
func docSite(b *testing.B, chapters, sections int) (*host, []string) {
	h := newHost(b)
	static := map[string]struct {
		ct   string
		body []byte
	}{
		"/static/book.css": {"text/css", []byte(`@font-face { font-family: Body; src: url("font.woff2") format("woff2"); }
body { font-family: Body, serif; max-width: 60em; margin: auto; background: url(bg.png) repeat-y; }
nav.sidebar { float: left; width: 14em; } main { margin-left: 15em; } pre { background: #f4f4f4; padding: 1em; }
` + strings.Repeat(".hl-kw { color: #708; } .hl-str { color: #a11; } .hl-com { color: #940; }\n", 60))},
		"/static/book.js":    {"text/javascript", []byte(strings.Repeat("document.querySelectorAll('pre').forEach(function (p) { p.dataset.copy = 'true'; });\n", 120))},
		"/static/logo.png":   {"image/png", docPNG(64, 64)},
		"/static/bg.png":     {"image/png", docPNG(8, 256)},
		"/static/font.woff2": {"font/woff2", bytes.Repeat([]byte{0x77, 0x4f, 0x46, 0x32, 1, 2, 3, 5, 8, 13, 21, 34}, 2000)},
	}
	for p, f := range static {
		h.handle(p, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", f.ct)
			w.Write(f.body)
		})
	}
	var sidebar strings.Builder
	sidebar.WriteString(`<nav class="sidebar"><ul>`)
	for c := 1; c <= chapters; c++ {
		fmt.Fprintf(&sidebar, `<li><a href="/ch%02d/">Chapter %d</a></li>`, c, c)
	}
	sidebar.WriteString(`</ul></nav>`)
	page := func(title, main string) string {
		return `<!doctype html><html><head><meta charset="utf-8"><title>` + title + `</title>` +
			`<link rel="stylesheet" href="/static/book.css"><script src="/static/book.js" defer></script></head><body>` +
			`<header><a href="/"><img src="/static/logo.png" alt="Manual" width="64" height="64"></a></header>` +
			sidebar.String() + `<main>` + main + `</main></body></html>`
	}
	serve := func(path, html string) {
		h.handle(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, html)
		})
	}
	urls := []string{h.URL + "/"}
	var front strings.Builder
	front.WriteString("<h1>The Manual</h1><p>This manual has these chapters:</p><ol>")
	for c := 1; c <= chapters; c++ {
		fmt.Fprintf(&front, `<li><a href="/ch%02d/">Chapter %d: topic %d</a></li>`, c, c, c)
		var toc strings.Builder
		fmt.Fprintf(&toc, "<h1>Chapter %d</h1><ol>", c)
		urls = append(urls, fmt.Sprintf("%s/ch%02d/", h.URL, c))
		for s := 1; s <= sections; s++ {
			fmt.Fprintf(&toc, `<li><a href="/ch%02d/s%02d.html">Section %d.%d</a></li>`, c, s, c, s)
			path := fmt.Sprintf("/ch%02d/s%02d.html", c, s)
			urls = append(urls, h.URL+path)
			var body strings.Builder
			fmt.Fprintf(&body, "<h1>%d.%d Section %d of chapter %d</h1>", c, s, s, c)
			for k := range 6 {
				fmt.Fprintf(&body, "<p>Paragraph %d of section %d.%d explains option <code>--opt-%d-%d</code>: ", k, c, s, c, k)
				body.WriteString(strings.Repeat("the value is read once at start, checked, and kept for the run; ", 5))
				body.WriteString("</p>")
			}
			fmt.Fprintf(&body, "<pre><code>$ tool run --opt-%d-%d=value\nok: %d.%d done\n</code></pre>", c, s, c, s)
			if s > 1 {
				fmt.Fprintf(&body, `<a rel="prev" href="/ch%02d/s%02d.html">Previous</a> `, c, s-1)
			}
			if s < sections {
				fmt.Fprintf(&body, `<a rel="next" href="/ch%02d/s%02d.html">Next</a>`, c, s+1)
			}
			serve(path, page(fmt.Sprintf("%d.%d Section — The Manual", c, s), body.String()))
		}
		toc.WriteString("</ol>")
		serve(fmt.Sprintf("/ch%02d/", c), page(fmt.Sprintf("Chapter %d — The Manual", c), toc.String()))
	}
	front.WriteString("</ol>")
	serve("/", page("The Manual", front.String()))
	return h, urls
}

func docPNG(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y), uint8(x ^ y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// timedCapturer adds up the time spent fetching pages (the capture from
// the host, which the host waits on) and writing them (each capture's
// WACZ and uploads, which the runner overlaps with the next fetch).
type timedCapturer struct {
	*counter
	mu                sync.Mutex
	fetching, storing time.Duration
}

func (t *timedCapturer) Fetch(ctx context.Context, req runner.CaptureRequest) (runner.Fetched, error) {
	start := time.Now()
	f, err := t.counter.Fetch(ctx, req)
	t.add(&t.fetching, start)
	if err != nil {
		return nil, err
	}
	return timedFetched{Fetched: f, t: t}, nil
}

func (t *timedCapturer) add(d *time.Duration, start time.Time) {
	t.mu.Lock()
	*d += time.Since(start)
	t.mu.Unlock()
}

func (t *timedCapturer) reset() (fetching, storing time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fetching, storing = t.fetching, t.storing
	t.fetching, t.storing = 0, 0
	return fetching, storing
}

type timedFetched struct {
	runner.Fetched
	t *timedCapturer
}

func (f timedFetched) Store(ctx context.Context) (runner.CaptureOutcome, error) {
	return f.StoreAfter(ctx, nil)
}

func (f timedFetched) Unwrap() runner.Fetched { return f.Fetched }

func (f timedFetched) StoreAfter(ctx context.Context, prev runner.Fetched) (runner.CaptureOutcome, error) {
	start := time.Now()
	defer f.t.add(&f.t.storing, start)
	return storeAfter(ctx, f.Fetched, prev)
}

// timedObjects adds up the time spent putting objects, and keeps what was
// put so that the same puts can be made again bare.
type timedObjects struct {
	capture.Objects
	mu    sync.Mutex
	spent time.Duration
	put   []barePut
}

type barePut struct {
	bucket, key, contentType string
	body                     []byte
}

func (t *timedObjects) Put(ctx context.Context, bucket, key, contentType string, body []byte) error {
	start := time.Now()
	err := t.Objects.Put(ctx, bucket, key, contentType, body)
	t.mu.Lock()
	t.spent += time.Since(start)
	t.put = append(t.put, barePut{bucket, key, contentType, bytes.Clone(body)})
	t.mu.Unlock()
	return err
}

// take returns the puts made since the last take, and the time they took.
func (t *timedObjects) take() ([]barePut, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	put, spent := t.put, t.spent
	t.put, t.spent = nil, 0
	return put, spent
}

// putBare makes the same puts again under other keys, workers at a time,
// with nothing else running: the least time storing the crawl's objects
// can take through this S3 client and server.
func putBare(ctx context.Context, b *testing.B, o capture.Objects, puts []barePut, workers int) time.Duration {
	next := make(chan barePut)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for p := range next {
				if err := o.Put(ctx, p.bucket, "bare/"+p.key, p.contentType, p.body); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, p := range puts {
		next <- p
	}
	close(next)
	wg.Wait()
	took := time.Since(start)
	if first != nil {
		b.Fatal(first)
	}
	return took
}

// BenchmarkDocSiteVsWget crawls a generated documentation site of 1,026
// pages (25 chapters of 40 sections, a page per chapter, the front page;
// one stylesheet, script, logo, font and background image shared by all)
// served on one loopback host, at depth 2, one page at a time, delay 0,
// with the http engine through the whole crawl path (the embedded runner:
// robots.txt, pacing, each capture's WACZ, links file and manifest put to
// S3 while the next page is fetched, the level reports admitting the
// archives in PostgreSQL). In the same
// iteration, on the same site: GNU wget --recursive --level=2 --warc-file
// (the peer), and plain sequential GETs of every page and shared file once
// over one keep-alive connection (the floor of fetching). After the crawl,
// every object it put is put again bare under other keys, three at a time
// (the floor of storing them), and the CPU each process used during the
// crawl is set beside wget's own and the site's while wget ran. Skipped,
// saying so, where /usr/bin/wget is absent.
func BenchmarkDocSiteVsWget(b *testing.B) {
	const wget = "/usr/bin/wget"
	if _, err := os.Stat(wget); err != nil {
		b.Skipf("%s is absent (%v): the peer cannot run", wget, err)
	}
	e := newEnv(b)
	h, urls := docSite(b, 25, 40)
	statics := []string{"/static/book.css", "/static/book.js", "/static/logo.png", "/static/bg.png", "/static/font.woff2"}
	capt := &timedCapturer{counter: newCounter(e)}
	puts := &timedObjects{Objects: capt.inner.Objects}
	capt.inner.Objects = puts
	follow, err := rules.ParseSpec("follow:same-site")
	if err != nil {
		b.Fatal(err)
	}
	var crawlWall, fetches, stores, reports, wgetWall, getsWall time.Duration
	var wgetBytes int64
	var putTime, bareWall, wgetCPU, siteCPU time.Duration
	// The CPU the crawl used, by process: this one (the crawl and the
	// site it fetches), PostgreSQL's and the S3 server's.
	procs := []string{"self", "postgres", "versitygw"}
	crawlCPU := map[string]time.Duration{}
	var putCount int
	for i := range b.N {
		// The floor: every page and shared file once, in order, one
		// connection.
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		start := time.Now()
		for _, u := range append(append([]string{}, urls...), prefixed(h.URL, statics)...) {
			resp, err := client.Get(u)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		getsWall += time.Since(start)
		client.CloseIdleConnections()

		// The peer.
		dir := b.TempDir()
		w0 := processCPU("self")
		start = time.Now()
		cmd := exec.Command(wget, "--recursive", "--level=2", "--no-verbose", "--warc-file="+filepath.Join(dir, "site"),
			"--directory-prefix="+filepath.Join(dir, "files"), h.URL+"/")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("wget: %v\n%s", err, lastLines(out, 10))
		}
		wgetWall += time.Since(start)
		// wget's own CPU, and the site's answering it (this process).
		wgetCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		siteCPU += cpuSince(w0, processCPU("self"))["self"]
		if st, err := os.Stat(filepath.Join(dir, "site.warc.gz")); err == nil {
			wgetBytes += st.Size()
		}
		if i == 0 {
			// wget names "/" and "/chNN/" index.html: every page is a file.
			b.Logf("wget saved %d HTML files; the site has %d pages", countFiles(b, filepath.Join(dir, "files"), ".html"), len(urls))
		}

		// The crawl.
		levels := make(chan runner.LevelEvent, 8)
		svc, r := e.service(capt, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
		maxDepth, maxPages, delay, par := 2, 5000, 0, 1
		capt.reset()
		puts.take()
		c0 := processCPU(procs...)
		start = time.Now()
		id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{h.URL + "/"}, Rules: []rules.Rule{follow},
			MaxDepth: &maxDepth, MaxPages: &maxPages, PerHostDelayMs: &delay, HostParallelism: &par})
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range runUntilDone(b, r, levels, 20*time.Minute) {
			reports += ev.Reporting
		}
		crawlWall += time.Since(start)
		for k, v := range cpuSince(c0, processCPU(procs...)) {
			crawlCPU[k] += v
		}
		f, st := capt.reset()
		fetches += f
		stores += st
		made, spent := puts.take()
		putTime += spent
		putCount += len(made)
		// The floor of storing: the crawl's objects put again bare, as
		// many at once as the crawl writes (three captures of its one
		// host, each a WACZ then a manifest).
		bareWall += putBare(e.ctx, b, puts.Objects, made, 3)
		v, err := svc.Get(e.ctx, alice, id)
		if err != nil {
			b.Fatal(err)
		}
		if v.PagesCaptured != len(urls) {
			b.Fatalf("the crawl captured %d pages, want the site's %d", v.PagesCaptured, len(urls))
		}
	}
	n := float64(b.N)
	b.ReportMetric(crawlWall.Seconds()/n, "crawl-s")
	b.ReportMetric(wgetWall.Seconds()/n, "wget-s")
	b.ReportMetric(getsWall.Seconds()/n, "GETs-s")
	b.ReportMetric(float64(crawlWall)/float64(wgetWall), "crawl/wget")
	b.ReportMetric(float64(crawlWall)/float64(getsWall), "crawl/GETs")
	b.ReportMetric(float64(fetches)/float64(crawlWall), "fetches-share")
	// Summed over the captures written (one at a time, while the next page
	// is fetched).
	b.ReportMetric(float64(stores)/float64(crawlWall), "stores-share")
	b.ReportMetric(float64(reports)/float64(crawlWall), "reports-share")
	// Summed over the puts, which overlap (the WACZ and the links file of a
	// capture; the captures being written while the next page is fetched):
	// an upper bound of their share of the wall time.
	b.ReportMetric(float64(putTime)/float64(crawlWall), "puts-share")
	b.ReportMetric(float64(wgetBytes)/n/float64(len(urls)), "wget-WARC-B/page")
	var all time.Duration
	for _, p := range procs {
		all += crawlCPU[p]
		b.ReportMetric(crawlCPU[p].Seconds()/n, "crawl-"+p+"-cpu-s")
	}
	b.ReportMetric(all.Seconds()/n, "crawl-cpu-s")
	// Both cores busy for the whole crawl would be 2.0.
	b.ReportMetric(float64(all)/float64(crawlWall), "crawl-cores")
	b.ReportMetric(wgetCPU.Seconds()/n, "wget-cpu-s")
	b.ReportMetric((wgetCPU+siteCPU).Seconds()/n, "wget+site-cpu-s")
	// The crawl's objects put again bare, nothing fetched or built: how
	// much of wget's time the uploads alone take.
	b.ReportMetric(float64(putCount)/n, "PUTs/crawl")
	b.ReportMetric(bareWall.Seconds()/n, "bare-PUTs-s")
	b.ReportMetric(float64(bareWall)/float64(wgetWall), "bare-PUTs/wget")
	b.ReportMetric(float64(bareWall+getsWall)/float64(wgetWall), "(GETs+bare-PUTs)/wget")
}

func prefixed(base string, paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = base + p
	}
	return out
}

func countFiles(b *testing.B, dir, suffix string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) {
			n++
		}
		return nil
	})
	return n
}

func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
