package runner_test

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// sharedStyle is a stylesheet of more than capture.MinRevisitPayload bytes
// whose one visible effect the replay probe reads: #mark in red.
var sharedStyle = func() string {
	var b strings.Builder
	b.WriteString("#mark { color: rgb(200, 10, 10); }\n")
	for i := 0; b.Len() < 4096; i++ {
		fmt.Fprintf(&b, ".rule-%d { margin: %dpx; padding: %dpx; }\n", i, i%7, i%5)
	}
	return b.String()
}()

// noisyPNG is a w×h PNG of random pixels (it does not compress: well over
// capture.MinRevisitPayload bytes).
func noisyPNG(t testing.TB, w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rng := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// crawlWACZs reads the crawl's want archives from the bucket: each WACZ
// by the name the crawl's collection gives it (its object's name, which
// revisits use), and those names in the ledger's order.
func (e *env) crawlWACZs(id string, want int) (names []string, files map[string][]byte) {
	e.t.Helper()
	ids, err := e.store.CrawlArchives(e.ctx, id, 2*want+10)
	if err != nil || len(ids) != want {
		e.t.Fatalf("the crawl's archives: %v %v; want %d", ids, err, want)
	}
	byID, err := e.store.ArchiveObjectNames(e.ctx, ids)
	if err != nil {
		e.t.Fatal(err)
	}
	files = map[string][]byte{}
	for _, aid := range ids {
		bucket, key, err := e.store.ArchiveLocation(e.ctx, aid)
		if err != nil {
			e.t.Fatal(err)
		}
		data, err := e.blob.Get(e.ctx, bucket, key)
		if err != nil {
			e.t.Fatal(err)
		}
		name := byID[aid]
		if name != filepath.Base(key) || !wacz.ValidContainer(name) {
			e.t.Fatalf("archive %s is named %q in a collection; its object is %s", aid, name, key)
		}
		files[name] = data
		names = append(names, name)
	}
	return names, files
}

// warcRecordTypes counts the WARC-Type of each record of a WACZ's WARC.
func warcRecordTypes(t testing.TB, archive []byte) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, line := range strings.Split(warcText(t, archive), "\r\n") {
		if typ, ok := strings.CutPrefix(line, "WARC-Type: "); ok {
			out[typ]++
		}
	}
	return out
}

// warcText is a WACZ's whole WARC, uncompressed.
func warcText(t testing.TB, archive []byte) string {
	t.Helper()
	zf, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := zf.Open(wacz.WARCPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	warc, err := io.ReadAll(zr) // multistream: every member
	if err != nil {
		t.Fatal(err)
	}
	return string(warc)
}

// collectionHarness serves ReplayWeb.page's own files, unmodified, as its
// embedding guide's self-hosting recipe does, over either one WACZ
// (source /one.wacz) or a multi-WACZ listing (source /collection.json,
// the form `serve` gives a crawl's collection: each WACZ under the name
// the catalog gives it).
func collectionHarness(t *testing.T, viewer string, files map[string][]byte, names []string, single string, pageURL string, reads *sync.Map) string {
	t.Helper()
	ui, err := os.ReadFile(filepath.Join(viewer, "ui.js"))
	if err != nil {
		t.Fatal(err)
	}
	sw, err := os.ReadFile(filepath.Join(viewer, "sw.js"))
	if err != nil {
		t.Fatal(err)
	}
	source := "/collection.json"
	if single != "" {
		source = "/one.wacz"
	}
	page := `<!doctype html><html><head><meta charset="utf-8"><script src="/ui.js"></script></head>
<body style="margin:0"><replay-web-page style="height:100vh;display:block" source="` + source + `" url="` +
		template.HTMLEscapeString(pageURL) + `" replayBase="/replay/" embed="replayonly"></replay-web-page></body></html>`
	type resource struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	var listing struct {
		Resources []resource `json:"resources"`
	}
	for _, n := range names {
		listing.Resources = append(listing.Resources, resource{Name: n, Path: "/w/" + n})
	}
	mux := http.NewServeMux()
	js := func(b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/javascript")
			_, _ = w.Write(b)
		}
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	})
	mux.HandleFunc("GET /ui.js", js(ui))
	mux.HandleFunc("GET /sw.js", js(sw))
	mux.HandleFunc("GET /replay/sw.js", js([]byte(`importScripts("/sw.js");`)))
	mux.HandleFunc("GET /collection.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(listing)
	})
	serve := func(w http.ResponseWriter, r *http.Request, name string) {
		if reads != nil {
			reads.Store(name, true)
		}
		data, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/wacz")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(data))
	}
	mux.HandleFunc("GET /w/{name}", func(w http.ResponseWriter, r *http.Request) { serve(w, r, r.PathValue("name")) })
	mux.HandleFunc("GET /one.wacz", func(w http.ResponseWriter, r *http.Request) { serve(w, r, single) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// sharedState is what the replayed page shows of what it shares.
type sharedState struct {
	Text  string `json:"text"`
	Color string `json:"color"` // #mark's computed colour
	Logo  bool   `json:"logo"`  // the logo image loaded
	Done  bool   `json:"done"`  // document complete
}

const sharedProbeJS = testenv.ReplayedFramesJS + `(function (d) {
	var m = d.getElementById("mark"), i = d.getElementById("logo");
	return JSON.stringify({text: d.body.innerText.slice(0, 200), color: m ? d.defaultView.getComputedStyle(m).color : "",
		logo: !!(i && i.complete && i.naturalWidth > 0), done: d.readyState === "complete"});
})`

// replayShared opens url in a fresh Chromium and polls the archived page
// until done says so or 150 s pass (a loaded machine); it returns the
// last state seen.
func replayShared(t *testing.T, url string, shot string, settle time.Duration, done func(sharedState) bool) sharedState {
	t.Helper()
	tab := testenv.BrowserTab(t, 4*time.Minute, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1000, 700))
	if _, err := chromedp.Run(tab, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	var st sharedState
	testenv.PollReplayed(tab, sharedProbeJS, 150*time.Second, func(first string) bool {
		st = sharedState{}
		_ = json.Unmarshal([]byte(first), &st)
		return done(st)
	})
	if settle > 0 {
		// Let what is still loading settle, then look again.
		time.Sleep(settle)
		if raw, err := chromedp.Run(tab, chromedp.Evaluate[string](sharedProbeJS)); err == nil && raw != "" {
			first, _, _ := strings.Cut(raw, "\n")
			st = sharedState{}
			_ = json.Unmarshal([]byte(first), &st)
		}
	}
	if dir := os.Getenv("LEDGER_TEST_KEEP_DIR"); dir != "" && shot != "" {
		if png, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err == nil {
			_ = os.WriteFile(filepath.Join(dir, shot), png, 0o644)
		}
	}
	return st
}

// TestCrawlRevisitsReplay: two pages of one crawl share a stylesheet and
// an image (the same bytes, each page under its own URLs). The first
// capture stores them; the second writes revisit records naming the first
// capture's URLs and WACZ. Replayed as the crawl's
// collection in ReplayWeb.page (real Chromium, the site stopped), the
// second page is styled and shows its image, read from the first WACZ;
// opened alone, the second WACZ shows its page, without them.
func TestCrawlRevisitsReplay(t *testing.T) {
	t.Parallel()
	viewer := testenv.ReplayViewer(t)
	testenv.Chromium(t)
	e := newEnv(t)
	site := newHost(t)
	logo := noisyPNG(t, 48, 48)
	// Each page has the same files under its own URLs: the second
	// capture's copies can only replay through its revisits (a viewer
	// finding the original's URL in another WACZ proves nothing).
	for _, p := range []string{"first", "second"} {
		site.file("/"+p+"/style.css", "text/css", []byte(sharedStyle))
		site.file("/"+p+"/logo.png", "image/png", logo)
		site.handle("/"+p, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title><link rel="stylesheet" href="/%s/style.css"></head>
<body><p id="mark">the %s page</p><img id="logo" src="/%s/logo.png" alt="logo" width="48" height="48"></body></html>`, p, p, p, p)
		})
	}
	eng := capture.NewHTTP(captureConfig())
	t.Cleanup(func() { _ = eng.Close() })
	capt := &capture.CrawlCapturer{Engine: eng, Objects: e.blob, Bucket: e.bucket, Software: "ledgerctl dedup test", Payloads: e.runnerStore()}
	levels := make(chan runner.LevelEvent, 4)
	svc, r := e.service(capt, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	depth, delay, par := 1, 0, 1
	first, second := site.URL+"/first", site.URL+"/second"
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{first, second}, MaxDepth: &depth, PerHostDelayMs: &delay, HostParallelism: &par})
	if err != nil {
		t.Fatal(err)
	}
	runUntilDone(t, r, levels, 2*time.Minute)
	site.Close() // from here on, only the archives answer
	for _, p := range []string{"/first/style.css", "/first/logo.png", "/second/style.css", "/second/logo.png"} {
		if n := site.hit(p); n != 1 {
			t.Fatalf("the site served %s %d times, want once", p, n)
		}
	}

	listed, files := e.crawlWACZs(id, 2)
	var withRevisits, withOriginals string // names
	for _, name := range listed {
		data := files[name]
		types := warcRecordTypes(t, data)
		switch {
		case types["revisit"] == 2 && types["response"] == 1:
			withRevisits = name
		case types["revisit"] == 0 && types["response"] == 3:
			withOriginals = name
		default:
			t.Fatalf("%s holds %v; want the page and both shared files, or the page and two revisits", name, types)
		}
		if dir := os.Getenv("LEDGER_TEST_KEEP_DIR"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "dedup-"+name), data, 0o644)
		}
	}
	if withRevisits == "" || withOriginals == "" {
		t.Fatalf("want one WACZ with the originals and one with revisits: %v", listed)
	}
	if len(files[withRevisits]) >= len(files[withOriginals]) {
		t.Errorf("the WACZ with revisits (%d bytes) is not smaller than the one with the originals (%d)", len(files[withRevisits]), len(files[withOriginals]))
	}
	// Which page came second (the one with revisits) is the runner's
	// order; the replay opens that one.
	var pageOf = map[string]string{}
	for name, data := range files {
		pages, _, err := wacz.ReadPages(bytes.NewReader(data), int64(len(data)))
		if err != nil || len(pages) != 1 {
			t.Fatalf("%s pages: %v %v", name, pages, err)
		}
		pageOf[name] = pages[0].URL
	}
	revisitPage := pageOf[withRevisits]
	if revisitPage != first && revisitPage != second {
		t.Fatalf("the revisits' page is %q", revisitPage)
	}

	t.Run("collection", func(t *testing.T) {
		t.Parallel()
		url := collectionHarness(t, viewer, files, listed, "", revisitPage, nil)
		st := replayShared(t, url, "dedup-collection.png", 0, func(s sharedState) bool { return s.Color == "rgb(200, 10, 10)" && s.Logo })
		t.Logf("replayed in the collection: %+v", st)
		if !strings.Contains(st.Text, "page") {
			t.Errorf("the page's text is not shown: %q", st.Text)
		}
		if st.Color != "rgb(200, 10, 10)" {
			t.Errorf("the shared stylesheet did not apply from the revisit (colour %q)", st.Color)
		}
		if !st.Logo {
			t.Error("the shared image did not load from the revisit")
		}
	})
	// A person who may view the second archive but not the first gets a
	// collection of the second alone (serve lists only what its person
	// may view): the revisits resolve to nothing, and nothing reads the
	// first WACZ, though the revisits name it and the harness would
	// serve it.
	t.Run("collection without the original", func(t *testing.T) {
		t.Parallel()
		var reads sync.Map
		url := collectionHarness(t, viewer, files, []string{withRevisits}, "", revisitPage, &reads)
		st := replayShared(t, url, "dedup-without-original.png", 3*time.Second, func(s sharedState) bool { return s.Done && strings.Contains(s.Text, "page") })
		t.Logf("replayed without the original: %+v", st)
		if !strings.Contains(st.Text, "page") {
			t.Errorf("the page's own document does not replay: %q", st.Text)
		}
		if st.Color == "rgb(200, 10, 10)" || st.Logo {
			t.Errorf("the page shows files of an archive outside its collection: %+v", st)
		}
		if _, read := reads.Load(withOriginals); read {
			t.Errorf("the viewer read %s, which the collection does not list", withOriginals)
		}
		if _, read := reads.Load(withRevisits); !read {
			t.Errorf("the viewer never read %s", withRevisits)
		}
	})
	// The crawl exported as one WACZ (`ledgerctl crawl export`): opened
	// alone, with no collection, the page shows its shared files, whose
	// originals the merged file holds beside the revisits.
	t.Run("merged", func(t *testing.T) {
		t.Parallel()
		var out bytes.Buffer
		var parts []wacz.Part
		for _, name := range []string{withOriginals, withRevisits} {
			parts = append(parts, wacz.Part{Name: strings.TrimSuffix(name, ".wacz"), R: bytes.NewReader(files[name]), Size: int64(len(files[name]))})
		}
		if _, err := wacz.Merge(&out, time.Now(), "crawl", "ledgerctl test", parts, nil); err != nil {
			t.Fatal(err)
		}
		merged := map[string][]byte{"merged.wacz": out.Bytes()}
		url := collectionHarness(t, viewer, merged, nil, "merged.wacz", revisitPage, nil)
		st := replayShared(t, url, "dedup-merged.png", 0, func(s sharedState) bool { return s.Color == "rgb(200, 10, 10)" && s.Logo })
		t.Logf("replayed merged: %+v", st)
		if !strings.Contains(st.Text, "page") || st.Color != "rgb(200, 10, 10)" || !st.Logo {
			t.Errorf("the merged WACZ does not replay the page with its shared files: %+v", st)
		}
	})
	t.Run("alone", func(t *testing.T) {
		t.Parallel()
		url := collectionHarness(t, viewer, files, nil, withRevisits, revisitPage, nil)
		st := replayShared(t, url, "dedup-alone.png", 3*time.Second, func(s sharedState) bool { return s.Done && strings.Contains(s.Text, "page") })
		t.Logf("replayed alone: %+v", st)
		if !strings.Contains(st.Text, "page") {
			t.Errorf("opened alone, the page's own document does not replay: %q", st.Text)
		}
		// As docs/replay.md says: the shared files are in the crawl's
		// first WACZ, not this one.
		if st.Color == "rgb(200, 10, 10)" || st.Logo {
			t.Errorf("opened alone, the page shows files its WACZ does not hold: %+v", st)
		}
	})
}
