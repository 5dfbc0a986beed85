package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// replayHarness serves ReplayWeb.page's own files, unmodified, with one
// WACZ, as its embedding guide's self-hosting recipe does: the page with
// <replay-web-page>, ui.js and sw.js, the service-worker shim under
// /replay/, and the archive with Range support.
func replayHarness(t *testing.T, viewer string, archive []byte, pageURL string) string {
	t.Helper()
	ui, err := os.ReadFile(filepath.Join(viewer, "ui.js"))
	if err != nil {
		t.Fatal(err)
	}
	sw, err := os.ReadFile(filepath.Join(viewer, "sw.js"))
	if err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><html><head><meta charset="utf-8"><script src="/ui.js"></script></head>
<body style="margin:0"><replay-web-page style="height:100vh;display:block" source="/archive.wacz" url="` +
		template.HTMLEscapeString(pageURL) + `" replayBase="/replay/" embed="replayonly"></replay-web-page></body></html>`
	mux := http.NewServeMux()
	js := func(b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/javascript")
			w.Write(b)
		}
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		write(w, page)
	})
	mux.HandleFunc("GET /ui.js", js(ui))
	mux.HandleFunc("GET /sw.js", js(sw))
	mux.HandleFunc("GET /replay/sw.js", js([]byte(`importScripts("/sw.js");`)))
	mux.HandleFunc("GET /archive.wacz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wacz+zip")
		http.ServeContent(w, r, "archive.wacz", time.Time{}, bytes.NewReader(archive))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// replayState is what the replayed page shows.
type replayState struct {
	Batches int             `json:"batches"`
	Images  map[string]bool `json:"images"` // alt → loaded with its real source
	SVG     string          `json:"svg"`    // the object's SVG text
	Fetched map[string]int  `json:"fetched"`
	Text    string          `json:"text"`
}

// replayProbeJS, run on the archived page inside ReplayWeb.page, scrolls to
// its bottom (so lazy images load and the feed asks for more, from the
// archive) and reports what is shown; the first run also asks the archive
// for the URLs a viewer only loads on demand (other srcset candidates,
// preload="none" media), whose statuses later runs report.
const replayProbeJS = testenv.ReplayedFramesJS + `(function (d) {
	var w = d.defaultView;
	w.scrollTo(0, d.body.scrollHeight);
	// A scroll to where the page already is fires no scroll event: one
	// made before the page's script listened would leave its feed unasked
	// for good. Each poll tells the page it scrolled, as a reader's next
	// turn of the wheel would.
	w.dispatchEvent(new w.Event("scroll"));
	if (!w.__probe) {
		w.__probe = {};
		["/f/two.png", "/f/wider.png", "/f/clip.webm", "/f/sound.ogg", "/f/captions.vtt", "/f/figure.svg"].forEach(function (u) {
			w.fetch(u).then(function (r) { w.__probe[u] = r.status; return r.text(); }, function () { w.__probe[u] = -1; })
				.then(function (t) { if (u === "/f/figure.svg") { w.__svg = t || ""; } });
		});
	}
	var imgs = {};
	d.querySelectorAll("img").forEach(function (i) {
		imgs[i.getAttribute("alt")] = i.complete && i.naturalWidth > 0 && !/placeholder/.test(i.currentSrc);
	});
	var svg = w.__svg || "";
	try { svg = d.querySelector("object").contentDocument.documentElement.textContent || svg; } catch (e) {}
	return JSON.stringify({batches: d.querySelectorAll(".batch").length, images: imgs, svg: svg, fetched: w.__probe, text: d.body.innerText.slice(0, 200)});
})`

// TestFidelityReplay: the browser and http captures of the must-show site,
// replayed in ReplayWeb.page in real Chromium (the site stopped), show
// what each engine promises: every image (srcset, picture, native lazy,
// script lazy), the object's SVG and the on-demand URLs for both; every
// feed batch for the browser; none for http, which runs no script.
func TestFidelityReplay(t *testing.T) {
	t.Parallel()
	chromium, viewer := testenv.Chromium(t), testenv.ReplayViewer(t)
	s := newFidelitySite(t)
	page := s.URL + "/"
	captures := map[string]*Result{}
	captures[EngineBrowser] = mustCapture(t, fidelityBrowser(t), page)
	h := NewHTTP(localConfig())
	captures[EngineHTTP] = mustCapture(t, h, page)
	h.Close()
	s.Close() // from here on, only the archive answers
	for name, res := range captures {
		if res.Failure != nil {
			t.Fatalf("%s: %v", name, res.Failure)
		}
	}
	for _, name := range []string{EngineBrowser, EngineHTTP} {
		t.Run(name, func(t *testing.T) {
			_, archive := pagesLine(t, captures[name])
			if dir := os.Getenv("LEDGER_TEST_KEEP_DIR"); dir != "" {
				_ = os.WriteFile(filepath.Join(dir, "fidelity-"+name+".wacz"), archive, 0o644)
			}
			url := replayHarness(t, viewer, archive, page)
			opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.UserDataDir(t.TempDir()),
				chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))
			alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
			defer cancelAlloc()
			ctx, cancel := context.WithTimeout(alloc, 3*time.Minute)
			defer cancel()
			tab, closeTab := chromedp.NewContext(ctx)
			defer closeTab()
			if _, err := chromedp.Run(tab, chromedp.Navigate(url)); err != nil {
				t.Fatal(err)
			}
			wantBatches := 0
			if name == EngineBrowser {
				wantBatches = feedBatches
			}
			var st replayState
			done := func() bool {
				if !strings.Contains(st.SVG, objectText) || len(st.Fetched) < 6 || st.Batches < wantBatches {
					return false
				}
				for _, alt := range []string{"srcset", "picture", "lazy", "jslazy"} {
					if !st.Images[alt] {
						return false
					}
				}
				return true
			}
			testenv.PollReplayed(tab, replayProbeJS, 90*time.Second, func(first string) bool {
				st = replayState{}
				_ = json.Unmarshal([]byte(first), &st)
				return done()
			})
			// A little longer: a feed that should be empty stays empty.
			time.Sleep(2 * time.Second)
			if raw, err := chromedp.Run(tab, chromedp.Evaluate[string](replayProbeJS)); err == nil {
				first, _, _ := strings.Cut(raw, "\n")
				_ = json.Unmarshal([]byte(first), &st)
			}
			if dir := os.Getenv("LEDGER_TEST_KEEP_DIR"); dir != "" {
				if _, err := chromedp.Run(tab, chromedp.Evaluate[chromedp.Void](testenv.ReplayedFramesJS+`(function (d) { d.defaultView.scrollTo(0, 0); return ""; })`)); err == nil {
					time.Sleep(500 * time.Millisecond)
				}
				if png, err := chromedp.Run(tab, chromedp.CaptureScreenshot()); err == nil {
					_ = os.WriteFile(filepath.Join(dir, "fidelity-"+name+"-replay.png"), png, 0o644)
				}
			}
			t.Logf("replayed: %+v", st)
			if b := captures[name].Behaviors; b != nil {
				t.Logf("the capture's behaviours: %+v", *b)
			}
			for _, alt := range []string{"srcset", "picture", "lazy", "jslazy"} {
				if !st.Images[alt] {
					t.Errorf("image %q not shown in replay", alt)
				}
			}
			if !strings.Contains(st.SVG, objectText) {
				t.Errorf("the object's SVG is not replayed (%q)", st.SVG)
			}
			for _, u := range []string{"/f/figure.svg", "/f/two.png", "/f/wider.png", "/f/clip.webm", "/f/sound.ogg", "/f/captions.vtt"} {
				if st.Fetched[u] != 200 {
					t.Errorf("%s: the archive answers %d", u, st.Fetched[u])
				}
			}
			if st.Batches != wantBatches {
				t.Errorf("feed batches replayed: %d, want %d", st.Batches, wantBatches)
			}
		})
	}
}
