package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/color"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// The must-show site: what each engine promises to record.
const (
	feedBatches  = 8
	feedDelay    = 300 * time.Millisecond
	objectText   = "Object figure text"
	fidelityText = "Fidelity test page"
)

// fidelityImages are the site's pictures, each its own colour.
var fidelityImages = map[string]color.Color{
	"/f/lazy.png": color.RGBA{1, 2, 3, 255}, "/f/one.png": color.RGBA{200, 10, 10, 255}, "/f/two.png": color.RGBA{10, 200, 10, 255},
	"/f/narrow.png": color.RGBA{10, 10, 200, 255}, "/f/wide.png": color.RGBA{100, 10, 200, 255}, "/f/wider.png": color.RGBA{200, 10, 100, 255},
	"/f/jslazy.png": color.RGBA{250, 200, 0, 255}, "/f/poster.png": color.RGBA{0, 0, 0, 255}, "/f/placeholder.png": color.RGBA{255, 255, 255, 255},
}

// fidelityMedia are the media files: bytes the test compares, not real
// codecs (nothing here plays them).
var fidelityMedia = map[string]string{
	"/f/clip.webm": "video/webm", "/f/sound.ogg": "audio/ogg", "/f/captions.vtt": "text/vtt",
}

const fidelityHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fidelity</title>
<style>.batch { height: 900px; border-top: 2px solid #888; } .spacer { height: 2400px; }</style>
</head><body>
<h1>` + fidelityText + `</h1>
<noscript>This page needs JavaScript for its feed.</noscript>
<p><img alt="srcset" src="/f/one.png" srcset="/f/one.png 1x, /f/two.png 2x" width="40" height="40"></p>
<picture><source media="(min-width: 600px)" srcset="/f/wide.png 800w, /f/wider.png 1600w" sizes="50vw"><img alt="picture" src="/f/narrow.png" width="40" height="40"></picture>
<object data="/f/figure.svg" type="image/svg+xml" width="200" height="60"></object>
<video controls preload="none" src="/f/clip.webm" poster="/f/poster.png" width="160" height="90"><track kind="captions" src="/f/captions.vtt"></video>
<audio controls preload="none"><source src="/f/sound.ogg" type="audio/ogg"></audio>
<form action="/f/submitted" method="post"><input name="q" value="x"><button type="submit">Send</button></form>
<div class="spacer">spacer</div>
<p><img alt="lazy" loading="lazy" src="/f/lazy.png" width="40" height="40"></p>
<p><img alt="jslazy" class="jslazy" src="/f/placeholder.png" data-src="/f/jslazy.png" width="40" height="40"></p>
<div id="feed"></div>
<script>
const io = new IntersectionObserver(es => { for (const e of es) if (e.isIntersecting) { e.target.src = e.target.dataset.src; io.unobserve(e.target); } });
document.querySelectorAll('img.jslazy').forEach(i => io.observe(i));
let n = 0, loading = false;
async function more() {
	if (loading || n >= ` + "8" + `) return;
	loading = true; n++;
	const r = await fetch('/f/feed?n=' + n);
	document.getElementById('feed').insertAdjacentHTML('beforeend', await r.text());
	loading = false;
}
addEventListener('scroll', () => { if (innerHeight + scrollY >= document.body.scrollHeight - 300) more(); });
</script>
</body></html>`

const fidelitySVG = `<svg xmlns="http://www.w3.org/2000/svg" width="200" height="60"><text x="5" y="30">` + objectText + `</text></svg>`

type fidelitySite struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func (s *fidelitySite) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// newFidelitySite serves the must-show page: srcset and <picture>
// candidates, a native lazy image and a script-lazy data-src image below
// the fold, an infinite feed of feedBatches batches each answering after
// feedDelay, preload="none" video and audio, an <object data> SVG, and a
// form no capture may submit.
func newFidelitySite(t testing.TB) *fidelitySite {
	s := &fidelitySite{hits: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		write(w, fidelityHTML)
	})
	mux.HandleFunc("GET /static", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		write(w, `<html><head><title>Static</title></head><body><p>Nothing here needs a script.</p></body></html>`)
	})
	mux.HandleFunc("GET /app-shell", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		write(w, `<html><head><title>Shell</title></head><body><div id="root"></div><script>document.getElementById('root').textContent = 'Rendered by script';</script></body></html>`)
	})
	for p, c := range fidelityImages {
		b := pngBytes(c)
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Write(b)
		})
	}
	for p, ct := range fidelityMedia {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", ct)
			write(w, "media bytes of "+p)
		})
	}
	mux.HandleFunc("GET /f/figure.svg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		write(w, fidelitySVG)
	})
	mux.HandleFunc("GET /f/feed", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		time.Sleep(feedDelay)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<div class="batch">Feed batch %d of %d</div>`, n, feedBatches)
	})
	mux.HandleFunc("/f/submitted", func(w http.ResponseWriter, r *http.Request) {
		write(w, "submitted")
	})
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		if r.URL.Path == "/f/feed" {
			s.hits["/f/feed?n="+r.URL.Query().Get("n")]++
		}
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// fidelityWants are the URLs (paths) each engine must have recorded.
func fidelityWants(engine string) []string {
	want := []string{"/", "/f/one.png", "/f/two.png", "/f/narrow.png", "/f/wide.png", "/f/wider.png",
		"/f/lazy.png", "/f/jslazy.png", "/f/poster.png", "/f/figure.svg", "/f/clip.webm", "/f/sound.ogg", "/f/captions.vtt"}
	if engine == EngineBrowser {
		for i := 1; i <= feedBatches; i++ {
			want = append(want, "/f/feed?n="+strconv.Itoa(i))
		}
	}
	return want
}

// pagesLine is the page line of a WACZ written from res.
func pagesLine(t *testing.T, res *Result) (wacz.PageEntry, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := wacz.Write(&buf, res.Capture); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	if err := wacz.Verify(bytes.NewReader(b), int64(len(b))); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	pages, _, err := wacz.ReadPages(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(pages) != 1 {
		t.Fatalf("pages %v, %v", pages, err)
	}
	return pages[0], b
}

// TestFidelityBrowser: the browser engine records every srcset and
// <picture> candidate, both lazy images, every feed batch, the media whose
// preload is none and the object's SVG; it submits no form; and the page's
// pages.jsonl line says which behaviours ran and what they added.
func TestFidelityBrowser(t *testing.T) {
	t.Parallel()
	s := newFidelitySite(t)
	res := mustCapture(t, fidelityBrowser(t), s.URL+"/")
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	for _, p := range fidelityWants(EngineBrowser) {
		if i, ok := exchangeFor(res, s.URL+p); !ok || res.Capture.Exchanges[i].Status != 200 {
			t.Errorf("%s not recorded; recorded:\n%s", p, strings.Join(urlsOf(res), "\n"))
		}
	}
	if n := s.count("/f/submitted"); n != 0 {
		t.Errorf("the form was submitted %d times", n)
	}
	b := res.Behaviors
	if b == nil {
		t.Fatal("no behaviours reported")
	}
	if b.Scroll.Grew < feedBatches || b.Scroll.Stopped != "stable" || b.Scroll.HeightEnd < b.Scroll.HeightStart+feedBatches*900 {
		t.Errorf("scroll %+v: want the page to grow %d times and stop stable", b.Scroll, feedBatches)
	}
	if b.Fetch.Srcset < 2 || b.Fetch.Media < 2 || b.Added < feedBatches+4 {
		t.Errorf("behaviours %+v", b)
	}
	p, _ := pagesLine(t, res)
	var got Behaviors
	if err := json.Unmarshal(p.Extra["behaviors"], &got); err != nil || got.Scroll.Grew != b.Scroll.Grew || got.Added != b.Added {
		t.Errorf("pages.jsonl behaviors %s: %v", p.Extra["behaviors"], err)
	}
	t.Logf("behaviours: %s", p.Extra["behaviors"])
}

// TestFidelityHTTP: the http engine records what the HTML names —
// every srcset candidate, data-src, the native lazy image, the media,
// the object's SVG — none of the feed (it runs no script), and marks the
// page as needing JavaScript (its <noscript> says so), while a plain page
// is not marked and an empty shell with a script is.
func TestFidelityHTTP(t *testing.T) {
	t.Parallel()
	s := newFidelitySite(t)
	e := NewHTTP(localConfig())
	defer e.Close()
	res := mustCapture(t, e, s.URL+"/")
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	for _, p := range fidelityWants(EngineHTTP) {
		if i, ok := exchangeFor(res, s.URL+p); !ok || res.Capture.Exchanges[i].Status != 200 {
			t.Errorf("%s not recorded; recorded:\n%s", p, strings.Join(urlsOf(res), "\n"))
		}
	}
	if s.count("/f/feed") != 0 || s.count("/f/submitted") != 0 {
		t.Errorf("the http engine ran the feed script or submitted the form")
	}
	if res.NeedsJS != NeedsJSNoscript {
		t.Errorf("NeedsJS = %q, want %q", res.NeedsJS, NeedsJSNoscript)
	}
	p, _ := pagesLine(t, res)
	if string(p.Extra["needsJavaScript"]) != `"`+NeedsJSNoscript+`"` {
		t.Errorf("pages.jsonl needsJavaScript = %s", p.Extra["needsJavaScript"])
	}
	for path, want := range map[string]string{"/static": "", "/app-shell": NeedsJSEmpty} {
		if r := mustCapture(t, e, s.URL+path); r.NeedsJS != want {
			t.Errorf("%s: NeedsJS = %q, want %q", path, r.NeedsJS, want)
		}
	}
}

// TestAutoEngine: auto keeps the http capture of a plain page and
// recaptures with the browser a page that needs JavaScript.
func TestAutoEngine(t *testing.T) {
	t.Parallel()
	chromiumOrSkip(t)
	s := newFidelitySite(t)
	a := &Auto{HTTP: NewHTTP(localConfig()), Browser: browserFor(t)}
	plain := mustCapture(t, a, s.URL+"/static")
	if plain.Engine != EngineHTTP || plain.AutoReason != "" {
		t.Errorf("plain page: engine %s reason %q", plain.Engine, plain.AutoReason)
	}
	shell := mustCapture(t, a, s.URL+"/app-shell")
	if shell.Engine != EngineBrowser || shell.AutoReason != NeedsJSEmpty || !strings.Contains(shell.Text, "Rendered by script") {
		t.Errorf("shell: engine %s reason %q text %q", shell.Engine, shell.AutoReason, shell.Text)
	}
	if shell.Capture.Pages[0].NeedsJS != NeedsJSEmpty {
		t.Errorf("the browser's page line does not say why: %+v", shell.Capture.Pages[0])
	}
}

// fidelityBrowser is a shared browser engine whose behaviours get more
// time than the default, so that a loaded machine still sees the feed end
// (the budget itself is tested by TestBehaviorBudgets).
func fidelityBrowser(t testing.TB) *Browser {
	cfg := localConfig()
	cfg.Timeout, cfg.ScrollTimeout = 120*time.Second, 60*time.Second
	return sharedBrowser(t, "fidelity", cfg)
}

// TestBehaviorBudgets: the step and time budgets stop an endless feed, and
// the report says which one did.
func TestBehaviorBudgets(t *testing.T) {
	t.Parallel()
	s := newFidelitySite(t)
	for name, tune := range map[string]func(*Config){
		"steps": func(c *Config) { c.ScrollMaxSteps = 3 },
		"time":  func(c *Config) { c.ScrollTimeout = 2 * time.Second },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := localConfig()
			tune(&cfg)
			res := mustCapture(t, newBrowser(t, cfg), s.URL+"/")
			if res.Failure != nil {
				t.Fatal(res.Failure)
			}
			b := res.Behaviors
			if b == nil || b.Scroll.Stopped != name || b.Scroll.Grew >= feedBatches {
				t.Errorf("behaviours %+v: want stopped by %s before the feed ended", b, name)
			}
			if name == "steps" && b != nil && b.Scroll.Steps != 3 {
				t.Errorf("steps %d, want 3", b.Scroll.Steps)
			}
			// The fetch behaviour still runs after the scroll stopped.
			if _, ok := exchangeFor(res, s.URL+"/f/clip.webm"); !ok {
				t.Errorf("media not fetched after the budget stopped the scroll")
			}
		})
	}
}

// debouncedFeedHTML is a feed whose scroll handler waits for scrolling to
// have stopped for a second before it asks for the next batch (a debounced
// handler, as many sites write them), of debouncedBatches batches.
const debouncedFeedHTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Debounced feed</title>
<style>.batch { height: 900px; } .spacer { height: 2400px; }</style>
</head><body><h1>Debounced feed</h1><div class="spacer">spacer</div><div id="feed"></div>
<script>
let n = 0, timer = 0;
async function more() {
	if (n >= 3) return;
	n++;
	const r = await fetch('/more?n=' + n);
	document.getElementById('feed').insertAdjacentHTML('beforeend', await r.text());
}
addEventListener('scroll', () => {
	clearTimeout(timer);
	timer = setTimeout(() => { if (innerHeight + scrollY >= document.body.scrollHeight - 300) more(); }, 1000);
});
</script></body></html>`

const debouncedBatches = 3

// TestBehaviorsWaitForADebouncedFeed: a feed that asks for its next batch
// only a second after scrolling stopped, and gets it 300 ms later, is
// scrolled to its end: the request that starts while the height is
// watched keeps the watch open until the batch is shown.
func TestBehaviorsWaitForADebouncedFeed(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, debouncedFeedHTML)
	})
	mux.HandleFunc("GET /more", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<div class="batch">Batch %s</div>`, r.URL.Query().Get("n"))
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	res := mustCapture(t, fidelityBrowser(t), s.URL+"/")
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	b := res.Behaviors
	if b == nil || b.Scroll.Grew != debouncedBatches || b.Scroll.Stopped != "stable" {
		t.Errorf("behaviours %+v: want the page to grow %d times and stop stable", b, debouncedBatches)
	}
	for i := 1; i <= debouncedBatches; i++ {
		if _, ok := exchangeFor(res, fmt.Sprintf("%s/more?n=%d", s.URL, i)); !ok {
			t.Errorf("batch %d not recorded", i)
		}
	}
}
