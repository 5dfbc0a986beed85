package runner_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// manualSite is a generated software manual: /index.html links 15
// chapters, each chapter 16 sections (256 pages, all within two links of
// the index). Every page links the same stylesheet (which loads a web
// font) and shows the same logo; each page carries its own prose.
type manualSite struct {
	*host
	pages                      int
	pageBytes                  int64 // HTML of all pages
	cssBytes, fontBytes, logoB int
}

const (
	manualChapters = 15
	manualSections = 16
)

// manualProse is n words of deterministic pseudo-prose (compresses about
// as well as English text).
func manualProse(rng *rand.Rand, n int) string {
	words := strings.Fields(`the a an of to in is that for it as with be on by this are or from at which can
		archive capture page crawl option value default file server request response header body index
		search replay level host delay rule seed link query token organization permission storage bucket
		configure returns when each must should may every written read lists shows command flag setting`)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			if i%14 == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

func newManualSite(b testing.TB, paragraphs int) *manualSite {
	s := &manualSite{host: newHost(b)}
	rng := rand.New(rand.NewPCG(7, 11))
	var css strings.Builder
	css.WriteString(`@font-face { font-family: "Body"; src: url("fonts/body.woff2") format("woff2"); }
body { font-family: "Body", serif; margin: 0 auto; max-width: 50em; }
`)
	for i := 0; css.Len() < 14<<10; i++ {
		fmt.Fprintf(&css, ".doc-%d > p.note-%d { margin: %dpx %dpx; color: #%06x; }\n", i, i%9, i%11, i%7, rng.IntN(1<<24))
	}
	font := make([]byte, 40<<10)
	for i := range font {
		font[i] = byte(rng.IntN(256))
	}
	logo := noisyPNG(b, 56, 56)
	s.cssBytes, s.fontBytes, s.logoB = css.Len(), len(font), len(logo)
	static := func(path, ct string, body []byte) {
		s.handle(path, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(body)
		})
	}
	static("/_static/manual.css", "text/css", []byte(css.String()))
	static("/_static/fonts/body.woff2", "font/woff2", font)
	static("/_static/logo.png", "image/png", logo)
	page := func(path, title, body string) {
		html := fmt.Sprintf(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%s — Manual</title>
<link rel="stylesheet" href="/_static/manual.css"></head>
<body><header><img src="/_static/logo.png" alt="Manual" width="56" height="56"> <a href="/index.html">Manual</a></header>
<main><h1>%s</h1>%s</main></body></html>
`, title, title, body)
		s.pages++
		s.pageBytes += int64(len(html))
		static(path, "text/html; charset=utf-8", []byte(html))
	}
	var toc strings.Builder
	for c := 1; c <= manualChapters; c++ {
		fmt.Fprintf(&toc, `<li><a href="/c%d/index.html">Chapter %d</a></li>`, c, c)
		var ch strings.Builder
		ch.WriteString("<p>" + manualProse(rng, 120) + "</p><ul>")
		for sec := 1; sec <= manualSections; sec++ {
			fmt.Fprintf(&ch, `<li><a href="/c%d/s%d.html">Section %d.%d</a></li>`, c, sec, c, sec)
			var body strings.Builder
			for p := 0; p < paragraphs; p++ {
				body.WriteString("<p>" + manualProse(rng, 110) + "</p>\n")
			}
			fmt.Fprintf(&body, `<p><a href="/c%d/index.html">Chapter %d</a></p>`, c, c)
			page(fmt.Sprintf("/c%d/s%d.html", c, sec), fmt.Sprintf("Section %d.%d", c, sec), body.String())
		}
		ch.WriteString("</ul>")
		page(fmt.Sprintf("/c%d/index.html", c), fmt.Sprintf("Chapter %d", c), ch.String())
	}
	page("/index.html", "Contents", "<ul>"+toc.String()+"</ul>")
	return s
}

// crawlStorage is what a crawl of the manual stored.
type crawlStorage struct {
	pages          int
	wacz, sidecars int64
	revisits, took int64 // revisit records; wall time in ms
	// parts adds up the WACZs' bytes by what holds them: each ZIP entry
	// (compressed size), the ZIP's own headers, and the WARC's records by
	// type (gzip members).
	parts map[string]int64
}

// waczParts adds the bytes of one WACZ, by part, to parts.
func waczParts(b *testing.B, data []byte, parts map[string]int64) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	inEntries := int64(0)
	for _, f := range zr.File {
		parts[f.Name] += int64(f.CompressedSize64)
		inEntries += int64(f.CompressedSize64)
		if f.Name != wacz.WARCPath {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			b.Fatal(err)
		}
		raw, _ := io.ReadAll(rc)
		rc.Close()
		br := bytes.NewReader(raw)
		for br.Len() > 0 {
			start := br.Len()
			zr, err := gzip.NewReader(br)
			if err != nil {
				b.Fatal(err)
			}
			zr.Multistream(false)
			rec, _ := io.ReadAll(zr)
			typ := "?"
			for _, line := range strings.Split(string(rec[:bytes.Index(rec, []byte("\r\n\r\n"))]), "\r\n") {
				if v, ok := strings.CutPrefix(line, "WARC-Type: "); ok {
					typ = v
				}
			}
			parts["  warc "+typ] += int64(start - br.Len())
		}
	}
	parts["zip headers"] += int64(len(data)) - inEntries
}

// crawlManual crawls the manual from its index to depth 2 with capt
// (delay 0, one capture at a time, as wget fetches) and adds up the
// objects the crawl wrote.
func crawlManual(b *testing.B, e *env, capt runner.Capturer, site *manualSite) crawlStorage {
	levels := make(chan runner.LevelEvent, 8)
	svc, r := e.service(capt, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	depth, maxPages, delay, par := 2, 1000, 0, 1
	start := time.Now()
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{site.URL + "/index.html"}, MaxDepth: &depth,
		MaxPages: &maxPages, PerHostDelayMs: &delay, HostParallelism: &par})
	if err != nil {
		b.Fatal(err)
	}
	runUntilDone(b, r, levels, 10*time.Minute)
	st := crawlStorage{parts: map[string]int64{}}
	st.took = time.Since(start).Milliseconds()
	v, err := svc.Get(e.ctx, alice, id)
	if err != nil {
		b.Fatal(err)
	}
	st.pages = v.PagesCaptured
	keys, err := e.blob.List(e.ctx, e.bucket, "")
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range keys {
		if !strings.Contains(k, id) {
			continue
		}
		data, err := e.blob.Get(e.ctx, e.bucket, k)
		if err != nil {
			b.Fatal(err)
		}
		switch {
		case strings.HasSuffix(k, ".wacz"):
			st.wacz += int64(len(data))
			waczParts(b, data, st.parts)
			types := warcRecordTypes(b, data)
			st.revisits += int64(types["revisit"])
		default:
			st.sidecars += int64(len(data))
		}
	}
	return st
}

// BenchmarkCrawlStorageVsWget: bytes per page of a depth-2 crawl of a
// 256-page generated manual (shared stylesheet, web font and logo; section
// pages of 6 and of 24 paragraphs, about 4 and 15 KB of HTML) with
// the http engine at delay 0, with and without the crawl's payload index,
// next to GNU wget's WARC of the same site (`wget --recursive --level=2
// --warc-file`), same run. Skips (saying so) when /usr/bin/wget is absent.
func BenchmarkCrawlStorageVsWget(b *testing.B) {
	wget := "/usr/bin/wget"
	if _, err := os.Stat(wget); err != nil {
		b.Skipf("GNU wget is not at %s: the storage comparison needs it (apt-get install wget)", wget)
	}
	for _, paragraphs := range []int{6, 24} {
		b.Run(fmt.Sprintf("paragraphs=%d", paragraphs), func(b *testing.B) { storageVsWget(b, wget, paragraphs) })
	}
}

func storageVsWget(b *testing.B, wget string, paragraphs int) {
	e := newEnv(b)
	site := newManualSite(b, paragraphs)
	eng := capture.NewHTTP(captureConfig())
	b.Cleanup(func() { _ = eng.Close() })
	plain := &capture.CrawlCapturer{Engine: eng, Objects: e.blob, Bucket: e.bucket, Software: "ledgerctl storage bench"}
	dedup := &capture.CrawlCapturer{Engine: eng, Objects: e.blob, Bucket: e.bucket, Software: "ledgerctl storage bench", Payloads: e.runnerStore()}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		dir := b.TempDir()
		start := time.Now()
		cmd := exec.Command(wget, "--recursive", "--level=2", "--no-verbose", "--warc-file="+filepath.Join(dir, "manual"),
			"--directory-prefix="+filepath.Join(dir, "files"), site.URL+"/index.html")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("wget: %v\n%s", err, out)
		}
		wgetTook := time.Since(start)
		fi, err := os.Stat(filepath.Join(dir, "manual.warc.gz"))
		if err != nil {
			b.Fatal(err)
		}
		wgetPages := 0
		_ = filepath.Walk(filepath.Join(dir, "files"), func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, ".html") {
				wgetPages++
			}
			return nil
		})
		b.StartTimer()
		without := crawlManual(b, e, plain, site)
		with := crawlManual(b, e, dedup, site)
		b.StopTimer()
		if wgetPages != site.pages || without.pages != site.pages || with.pages != site.pages {
			b.Fatalf("pages: wget %d, crawl %d and %d; the site has %d", wgetPages, without.pages, with.pages, site.pages)
		}
		wgetPer := float64(fi.Size()) / float64(wgetPages)
		per := func(n int64, pages int) float64 { return float64(n) / float64(pages) }
		b.ReportMetric(wgetPer, "wget-B/page")
		b.ReportMetric(per(with.wacz, with.pages)/wgetPer, "wacz/wget-x")
		b.ReportMetric(per(with.wacz+with.sidecars, with.pages)/wgetPer, "wacz+sidecars/wget-x")
		b.ReportMetric(per(without.wacz, without.pages)/wgetPer, "nodedup-wacz/wget-x")
		b.ReportMetric(per(without.wacz+without.sidecars, without.pages)/wgetPer, "nodedup-wacz+sidecars/wget-x")
		fmt.Printf("site: %d pages, %d B of HTML (%.0f B/page); stylesheet %d B, font %d B, logo %d B\n",
			site.pages, site.pageBytes, float64(site.pageBytes)/float64(site.pages), site.cssBytes, site.fontBytes, site.logoB)
		fmt.Printf("wget: %d pages, WARC %d B = %.0f B/page, %.2fs\n", wgetPages, fi.Size(), wgetPer, wgetTook.Seconds())
		for _, c := range []struct {
			name string
			st   crawlStorage
		}{{"without the payload index", without}, {"with the payload index", with}} {
			fmt.Printf("crawl %s: %d pages, WACZ %d B = %.0f B/page (%.2f× wget), with sidecars %d B = %.0f B/page (%.2f× wget); %d revisit records; %.2fs\n",
				c.name, c.st.pages, c.st.wacz, per(c.st.wacz, c.st.pages), per(c.st.wacz, c.st.pages)/wgetPer,
				c.st.wacz+c.st.sidecars, per(c.st.wacz+c.st.sidecars, c.st.pages), per(c.st.wacz+c.st.sidecars, c.st.pages)/wgetPer,
				c.st.revisits, float64(c.st.took)/1000)
			var names []string
			for k := range c.st.parts {
				names = append(names, k)
			}
			sort.Strings(names)
			for _, k := range names {
				fmt.Printf("  %-28s %8.0f B/page\n", k, per(c.st.parts[k], c.st.pages))
			}
		}
	}
}
